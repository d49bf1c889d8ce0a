"""What changed between two catalog snapshots, and how much it matters.

Every change gets a class and a severity:

========================  =====================================================  ========
class                     what                                                   severity
========================  =====================================================  ========
``added``                 a tool that was not there                              fail if it declares
                                                                                 destructive,
                                                                                 consequential or
                                                                                 open-world; warn
``removed``               a tool that is gone (plans and agents that used it)    warn
``annotation``            an annotation flipped                                  fail for readOnlyHint
                                                                                 either way, for
                                                                                 destructive /
                                                                                 consequential /
                                                                                 open-world turned
                                                                                 on, sensitiveHint
                                                                                 turned off; warn
``input-widened``         the inputSchema accepts what it refused                fail
``input-narrowed``        the inputSchema refuses what it accepted               warn
``input-changed``         both, or a change the comparison cannot order          fail
``output-changed``        the outputSchema changed                               warn; fail when a
                                                                                 field lost
                                                                                 ``x-sensitive``
``description``           the description (or a parameter's) changed             warn
``title`` / ``source``    the title, or script ↔ declarative                     info / warn
========================  =====================================================  ========

:meth:`Drift.gating` picks the changes at or above a threshold; the CLI exits 1 when
there is one (``--fail-on``, default ``fail``).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.qa.snapshot import CatalogEntry, CatalogSnapshot

Severity = Literal["info", "warn", "fail"]
SEVERITIES: tuple[Severity, ...] = ("info", "warn", "fail")
ChangeKind = Literal[
    "added",
    "removed",
    "annotation",
    "input-widened",
    "input-narrowed",
    "input-changed",
    "output-changed",
    "description",
    "title",
    "source",
]

# Annotations that say a tool acts on the world: a new tool declaring one, or one turned
# on, gates a deploy.
ACTING_HINTS = ("destructiveHint", "consequentialHint", "openWorldHint")

# Schema keywords that describe rather than constrain (a change is a description change).
_DOC_KEYWORDS = frozenset(
    {"title", "description", "examples", "default", "$comment", "deprecated", "toolparamtitle"}
)
# The larger the value, the narrower the schema (min…), or the wider (max…).
_LOWER_BOUNDS = (
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
    "minContains",
)
_UPPER_BOUNDS = (
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
    "maxContains",
)
_HANDLED = frozenset(
    {
        "type",
        "enum",
        "required",
        "properties",
        "additionalProperties",
        "items",
        *_LOWER_BOUNDS,
        *_UPPER_BOUNDS,
        *_DOC_KEYWORDS,
    }
)

Direction = Literal["widened", "narrowed", "changed", "described"]


class SchemaChange(BaseModel):
    """One difference between two schemas: where, which way, and what."""

    model_config = ConfigDict(frozen=True)

    direction: Direction
    path: str
    what: str

    def describe(self) -> str:
        """``/properties/qty/maximum: 10 → 100 (widened)``."""
        return f"{self.path or '/'}: {self.what} ({self.direction})"


class Change(BaseModel):
    """One change of the catalog, with its severity and the lines that show it."""

    model_config = ConfigDict(frozen=True)

    kind: ChangeKind
    severity: Severity
    tool: str
    summary: str
    details: list[str] = Field(default_factory=list)


class Drift(BaseModel):
    """Every change between two snapshots, worst first."""

    model_config = ConfigDict(frozen=True)

    changes: list[Change] = Field(default_factory=list)

    def gating(self, threshold: Severity) -> list[Change]:
        """The changes at or above ``threshold``."""
        floor = SEVERITIES.index(threshold)
        return [c for c in self.changes if SEVERITIES.index(c.severity) >= floor]

    def counts(self) -> dict[str, int]:
        """How many changes of each severity."""
        return {s: sum(c.severity == s for c in self.changes) for s in reversed(SEVERITIES)}


def diff_catalogs(old: CatalogSnapshot, new: CatalogSnapshot) -> Drift:
    """Classify every change from ``old`` to ``new`` (tools matched by origin, frame, name)."""
    before = {t.key: t for t in old.tools}
    after = {t.key: t for t in new.tools}
    changes: list[Change] = []
    for key in sorted(before.keys() | after.keys()):
        was, now = before.get(key), after.get(key)
        if was is None and now is not None:
            changes.append(_added(now))
        elif now is None and was is not None:
            changes.append(
                Change(
                    kind="removed",
                    severity="warn",
                    tool=was.label(),
                    summary="removed: agents and plans that call it will fail",
                )
            )
        elif was is not None and now is not None and was.fingerprint != now.fingerprint:
            changes += _changed(was, now)
    order = {s: i for i, s in enumerate(reversed(SEVERITIES))}
    return Drift(changes=sorted(changes, key=lambda c: (order[c.severity], c.tool, c.kind)))


def _added(tool: CatalogEntry) -> Change:
    acting = [h for h in ACTING_HINTS if tool.annotations.get(h) is True]
    declared = ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(tool.annotations.items()))
    if acting:
        kinds = "/".join(h.removesuffix("Hint") for h in acting)
        summary = f"added: a new {kinds} tool"
    else:
        summary = "added: a new tool agents can call"
    return Change(
        kind="added",
        severity="fail" if acting else "warn",
        tool=tool.label(),
        summary=summary,
        details=[f"annotations: {declared or '(none declared)'}"],
    )


def _changed(was: CatalogEntry, now: CatalogEntry) -> list[Change]:
    label = now.label()
    changes: list[Change] = []
    flips = list(_annotation_flips(was.annotations, now.annotations))
    if flips:
        worst: Severity = "fail" if any(f[0] for f in flips) else "warn"
        changes.append(
            Change(
                kind="annotation",
                severity=worst,
                tool=label,
                summary="annotations changed: " + "; ".join(f[1] for f in flips),
            )
        )
    found = list(compare_schemas(was.input_schema, now.input_schema))
    shape = [c for c in found if c.direction != "described"]
    if shape:
        directions = {c.direction for c in shape}
        if directions == {"narrowed"}:
            kind: ChangeKind = "input-narrowed"
        elif directions == {"widened"}:
            kind = "input-widened"
        else:
            kind = "input-changed"
        changes.append(
            Change(
                kind=kind,
                severity="warn" if kind == "input-narrowed" else "fail",
                tool=label,
                summary=f"inputSchema {kind.removeprefix('input-')}",
                details=[c.describe() for c in shape],
            )
        )
    described = [c for c in found if c.direction == "described"]
    if was.description != now.description or described:
        details = (
            _text_diff(was.description, now.description)
            if was.description != now.description
            else []
        )
        details += [c.describe() for c in described]
        changes.append(
            Change(
                kind="description",
                severity="warn",
                tool=label,
                summary="description changed (what the agent reads)",
                details=details,
            )
        )
    if was.output_schema != now.output_schema:
        exposed = _unmarked(was.output_schema, now.output_schema)
        output = list(compare_schemas(was.output_schema or {}, now.output_schema or {}))
        changes.append(
            Change(
                kind="output-changed",
                severity="fail" if exposed else "warn",
                tool=label,
                summary="outputSchema changed"
                + (": a field is no longer x-sensitive" if exposed else ""),
                details=[*(f"{p}: x-sensitive removed" for p in exposed)]
                + [c.describe() for c in output],
            )
        )
    if was.title != now.title:
        changes.append(
            Change(
                kind="title",
                severity="info",
                tool=label,
                summary=f"title: {json.dumps(was.title)} → {json.dumps(now.title)}",
            )
        )
    if was.source != now.source:
        changes.append(
            Change(
                kind="source",
                severity="warn",
                tool=label,
                summary=f"source: {was.source} → {now.source}",
            )
        )
    return changes


def _annotation_flips(old: dict[str, Any], new: dict[str, Any]) -> Iterator[tuple[bool, str]]:
    """(gates, text) for every annotation whose declared value changed."""
    for key in sorted(old.keys() | new.keys()):
        was, now = old.get(key), new.get(key)
        if was == now:
            continue
        shown = f"{key} {_shown(key in old, was)} → {_shown(key in new, now)}"
        gates = (
            (key == "readOnlyHint" and bool(was) != bool(now))
            or (key in ACTING_HINTS and now is True)
            or (key == "sensitiveHint" and was is True and now is not True)
        )
        yield gates, shown


def _shown(declared: bool, value: Any) -> str:
    return json.dumps(value) if declared else "(not declared)"


def _text_diff(old: str, new: str) -> list[str]:
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=1)
    return [line for line in lines if not line.startswith(("---", "+++", "@@"))]


def _unmarked(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[str]:
    """Paths marked ``x-sensitive`` in ``old`` and not in ``new``."""
    marked_new = set(_sensitive_paths(new))
    return [p for p in _sensitive_paths(old) if p not in marked_new]


def _sensitive_paths(schema: Any, path: str = "") -> Iterator[str]:
    if isinstance(schema, dict):
        if schema.get("x-sensitive") is True:
            yield path or "/"
        for key, value in schema.items():
            if isinstance(value, dict | list):
                yield from _sensitive_paths(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from _sensitive_paths(value, f"{path}/{index}")


# -- comparing two schemas ---------------------------------------------------------------


def _types(schema: dict[str, Any]) -> set[str] | None:
    kind = schema.get("type")
    if kind is None:
        return None
    kinds = set(kind) if isinstance(kind, list) else {kind}
    return kinds | {"integer"} if "number" in kinds else kinds


def _covers(wide: set[str] | None, narrow: set[str] | None) -> bool:
    return wide is None or (narrow is not None and narrow <= wide)


def _value(value: Any) -> str:
    return "(none)" if value is None else json.dumps(value, ensure_ascii=False)


def compare_schemas(old: Any, new: Any, path: str = "") -> Iterator[SchemaChange]:
    """Every difference between two JSON Schemas, each ordered where the keyword allows:
    ``widened`` (``new`` accepts what ``old`` refused), ``narrowed``, ``changed`` (both,
    or unknown), ``described`` (a keyword that describes rather than constrains)."""
    if old == new:
        return
    if not isinstance(old, dict) or not isinstance(new, dict):
        yield SchemaChange(direction="changed", path=path, what=f"{_value(old)} → {_value(new)}")
        return
    old_types, new_types = _types(old), _types(new)
    if old_types != new_types:
        wider, narrower = _covers(new_types, old_types), _covers(old_types, new_types)
        direction: Direction = (
            "widened" if wider and not narrower else "narrowed" if narrower else "changed"
        )
        yield SchemaChange(
            direction=direction,
            path=f"{path}/type",
            what=f"{_value(old.get('type'))} → {_value(new.get('type'))}",
        )
    for key in (*_LOWER_BOUNDS, *_UPPER_BOUNDS):
        was, now = old.get(key), new.get(key)
        if was == now:
            continue
        lower = key in _LOWER_BOUNDS
        if now is None or was is None:
            widened = now is None
        elif not isinstance(was, int | float) or not isinstance(now, int | float):
            yield SchemaChange(direction="changed", path=f"{path}/{key}", what=f"{was} → {now}")
            continue
        else:
            widened = now < was if lower else now > was
        yield SchemaChange(
            direction="widened" if widened else "narrowed",
            path=f"{path}/{key}",
            what=f"{_value(was)} → {_value(now)}",
        )
    yield from _compare_enum(old.get("enum"), new.get("enum"), f"{path}/enum")
    yield from _compare_objects(old, new, path)
    if old.get("items") != new.get("items"):
        if isinstance(old.get("items"), dict) and isinstance(new.get("items"), dict):
            yield from compare_schemas(old["items"], new["items"], f"{path}/items")
        else:
            yield _presence(old.get("items"), new.get("items"), f"{path}/items")
    for key in sorted((old.keys() | new.keys()) - _HANDLED):
        if old.get(key) != new.get(key) and not key.startswith("x-"):
            yield _presence(old.get(key), new.get(key), f"{path}/{key}")
    for key in sorted(_DOC_KEYWORDS & (old.keys() | new.keys())):
        if old.get(key) != new.get(key):
            yield SchemaChange(
                direction="described",
                path=f"{path}/{key}",
                what=f"{_value(old.get(key))} → {_value(new.get(key))}",
            )


def _presence(was: Any, now: Any, path: str) -> SchemaChange:
    """A constraint removed widens, one added narrows, one changed is both."""
    direction: Direction = "widened" if now is None else "narrowed" if was is None else "changed"
    return SchemaChange(direction=direction, path=path, what=f"{_value(was)} → {_value(now)}")


def _compare_enum(was: Any, now: Any, path: str) -> Iterator[SchemaChange]:
    if was == now:
        return
    if not isinstance(was, list) or not isinstance(now, list):
        yield _presence(was, now, path)
        return
    added = [v for v in now if v not in was]
    removed = [v for v in was if v not in now]
    direction: Direction = "widened" if not removed else "narrowed" if not added else "changed"
    parts = [f"+{_value(v)}" for v in added] + [f"-{_value(v)}" for v in removed]
    yield SchemaChange(direction=direction, path=path, what=" ".join(parts))


def _compare_objects(old: dict[str, Any], new: dict[str, Any], path: str) -> Iterator[SchemaChange]:
    was_required = set(old.get("required") or [])
    now_required = set(new.get("required") or [])
    for name in sorted(was_required - now_required):
        yield SchemaChange(
            direction="widened", path=f"{path}/required", what=f"{name!r} no longer required"
        )
    for name in sorted(now_required - was_required):
        yield SchemaChange(
            direction="narrowed", path=f"{path}/required", what=f"{name!r} now required"
        )
    was_props = _properties(old)
    now_props = _properties(new)
    was_closed = old.get("additionalProperties") is False
    now_closed = new.get("additionalProperties") is False
    for name in sorted(was_props.keys() | now_props.keys()):
        where = f"{path}/properties/{name}"
        if name in was_props and name in now_props:
            yield from compare_schemas(was_props[name], now_props[name], where)
        elif name in now_props:
            # A closed object refused the name before; an open one took any value for it.
            direction: Direction = "widened" if was_closed else "narrowed"
            yield SchemaChange(direction=direction, path=where, what="new parameter")
        else:
            direction = "narrowed" if now_closed else "widened"
            yield SchemaChange(direction=direction, path=where, what="parameter removed")
    was_extra, now_extra = old.get("additionalProperties"), new.get("additionalProperties")
    if was_extra != now_extra:
        where = f"{path}/additionalProperties"
        if isinstance(was_extra, dict) and isinstance(now_extra, dict):
            yield from compare_schemas(was_extra, now_extra, where)
        elif was_closed or now_extra is None or now_extra is True:
            yield SchemaChange(
                direction="widened", path=where, what=f"{_value(was_extra)} → {_value(now_extra)}"
            )
        else:
            yield SchemaChange(
                direction="narrowed", path=where, what=f"{_value(was_extra)} → {_value(now_extra)}"
            )


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    found = schema.get("properties")
    return found if isinstance(found, dict) else {}


def render_drift(drift: Drift, threshold: Severity = "fail") -> list[str]:
    """The drift as lines for people (page text inside: escape it before a terminal)."""
    if not drift.changes:
        return ["no changes: the catalogs list the same tools with the same fingerprints"]
    lines = []
    for change in drift.changes:
        gate = " (gates)" if change in drift.gating(threshold) else ""
        lines.append(f"{change.severity.upper():4}  {change.tool}: {change.summary}{gate}")
        lines += [f"        {line}" for line in change.details]
    counts = drift.counts()
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items()))
    return lines
