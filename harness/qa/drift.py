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
``annotation``            an annotation changed (a hint left out read as the     fail for readOnlyHint
                          policy reads it: never set, or at MCP's default)       either way, for
                                                                                 destructive /
                                                                                 consequential /
                                                                                 open-world turned
                                                                                 on, sensitiveHint
                                                                                 turned off,
                                                                                 autosubmit turned
                                                                                 on; warn
``input-widened``         the inputSchema accepts what it refused                fail
``input-narrowed``        the inputSchema refuses what it accepted               warn
``input-changed``         both, or a change the comparison cannot order          fail
``input-extension``       an ``x-`` keyword of the inputSchema changed           fail when a
                                                                                 parameter lost
                                                                                 ``x-sensitive``;
                                                                                 warn
``output-changed``        the outputSchema changed                               warn; fail when a
                                                                                 field lost
                                                                                 ``x-sensitive``
``description``           the description (or a parameter's) changed             warn
``title`` / ``source``    the title, or script ↔ declarative                     info / warn
``rewritten``             what no class above covers: a schema or annotation     info; warn
                          written differently with the same meaning (an          when only the
                          ``enum`` or ``anyOf`` branches reordered, ``1.0``      fingerprint
                          for ``1``, ``const: x`` for ``enum: [x]``,             changed
                          ``required`` or ``properties`` moved into an
                          ``allOf`` branch), or only the fingerprint (a file
                          edited, another version's)
========================  =====================================================  ========

Every tool whose fingerprint changed gets at least one change: what the comparison does not
classify is ``rewritten``, never "no changes".

:meth:`Drift.gating` picks the changes at or above a threshold; the CLI exits 1 when
there is one (``--fail-on``, default ``fail``).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.models import BOOLEAN_HINTS
from harness.qa.schema_change import SchemaChange, lost_marks, schema_changes
from harness.qa.schema_spelling import same_json
from harness.qa.snapshot import CatalogEntry, CatalogSnapshot
from harness.stages.policy import ABSENT, Facts
from harness.stages.trust import MCP_HINT_DEFAULTS, READINGS, Reading

Severity = Literal["info", "warn", "fail"]
SEVERITIES: tuple[Severity, ...] = ("info", "warn", "fail")
ChangeKind = Literal[
    "added",
    "removed",
    "annotation",
    "input-widened",
    "input-narrowed",
    "input-changed",
    "input-extension",
    "output-changed",
    "description",
    "title",
    "source",
    "rewritten",
]

# Annotations that say a tool acts on the world: a new tool declaring one, or one turned
# on, gates a deploy.
ACTING_HINTS = ("destructiveHint", "consequentialHint", "openWorldHint")
# A <form toolname>'s toolautosubmit: on, an agent's call submits the form without the
# user's review (without it the filled form waits for the user), so turning it on gates.
AUTOSUBMIT = "autosubmit"
# The annotations compared by the value the policy reads, a hint left out included; the
# others (title, inputMetadata, …) by what is declared.
_HINTS = frozenset({*BOOLEAN_HINTS, "sensitiveHint", AUTOSUBMIT})


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
        elif was is not None and now is not None and not _same_entry(was, now):
            changes += _changed(was, now) or [_unexplained(was, now)]
    order = {s: i for i, s in enumerate(reversed(SEVERITIES))}
    return Drift(changes=sorted(changes, key=lambda c: (order[c.severity], c.tool, c.kind)))


def _same_entry(was: CatalogEntry, now: CatalogEntry) -> bool:
    """The same fingerprint, and the same JSON (a file may have been edited by hand)."""
    return was.fingerprint == now.fingerprint and same_json(
        was.model_dump(by_alias=True), now.model_dump(by_alias=True)
    )


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
    found = schema_changes(was.input_schema, now.input_schema)
    shape = [c for c in found if c.direction not in ("described", "marked")]
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
    lost = lost_marks(was.input_schema, now.input_schema)
    marks = [c for c in found if c.direction == "marked"]
    if marks or lost:
        # x-sensitive keeps a value out of the harness's records (and a client's): one lost
        # is as serious as an output field's (a marked parameter removed counts: a value
        # sent under its name is no longer marked).
        changes.append(
            _graded_by_marks(
                "input-extension",
                label,
                "inputSchema x- keywords changed",
                "parameter",
                lost,
                marks,
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
    if not same_json(was.output_schema, now.output_schema):
        exposed = lost_marks(was.output_schema, now.output_schema)
        output = schema_changes(was.output_schema or {}, now.output_schema or {})
        changes.append(
            _graded_by_marks(
                "output-changed", label, "outputSchema changed", "field", exposed, output
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
    """(gates, text) for every annotation whose declared value changed. A hint is compared
    by the value the policy reads under each of its readings of one left out (never set,
    or MCP's default): it gates when it gates under either."""
    for key in sorted(old.keys() | new.keys(), key=str):
        was, now = old.get(key), new.get(key)
        if same_json(was, now):
            continue
        shown = f"{key} {_shown(old, key)} → {_shown(new, key)}"
        reasons = [
            why
            for reading in READINGS
            if key in _HINTS
            and (why := _gate(key, read_hint(old, key, reading), read_hint(new, key, reading)))
            is not None
        ]
        yield bool(reasons), shown + "".join(f": {why}" for why in reasons[:1] if why)


def read_hint(annotations: dict[str, Any], hint: str, reading: Reading) -> bool | None:
    """``hint`` as the policy reads it under ``reading`` (None: unknown): declared, or
    left out — never set (false), or under ``unknown`` MCP's default for MCP's four hints
    (``destructiveHint`` only when not read-only) and unknown for a declaration such as
    ``consequentialHint``. A declared value that is not a boolean is unknown."""
    facts = Facts({"tool": {"annotations": annotations}}, reading)
    value = facts.read(f"tool.annotations.{hint}")
    if value is ABSENT:
        return False
    return value if isinstance(value, bool) else None


def _gate(hint: str, was: bool | None, now: bool | None) -> str | None:
    """Why a hint read ``was`` then ``now`` gates a deploy (None: it does not; empty:
    the values shown say why)."""
    if hint == "readOnlyHint" and (was is True) != (now is True):
        return ""
    if hint in ACTING_HINTS and was is False and now is not False:
        return "an acting hint turned on" if now else "an acting hint no longer ruled out"
    if hint == "sensitiveHint" and was is True and now is not True:
        return "sensitiveHint turned off"
    if hint == AUTOSUBMIT and was is False and now is not False:
        if now:
            return "the form is submitted without the user's review"
        return "the form may be submitted without the user's review"
    return None


def _shown(annotations: dict[str, Any], key: str) -> str:
    if key in annotations:
        return json.dumps(annotations[key], ensure_ascii=False, default=repr)
    if (
        key in MCP_HINT_DEFAULTS
        and read_hint(annotations, key, "unknown") is MCP_HINT_DEFAULTS[key]
    ):
        return f"(not declared: MCP's default, {json.dumps(MCP_HINT_DEFAULTS[key])})"
    return "(not declared)"


def _unexplained(was: CatalogEntry, now: CatalogEntry) -> Change:
    """The change of a tool whose entries differ where no class above looks: a schema or
    annotation written differently with the same meaning, or a fingerprint alone."""
    fields = {
        "inputSchema": (was.input_schema, now.input_schema),
        "outputSchema": (was.output_schema, now.output_schema),
        "annotations": (was.annotations, now.annotations),
    }
    rewritten = [
        (name, _pretty(old), _pretty(new))
        for name, (old, new) in fields.items()
        if _pretty(old) != _pretty(new)
    ]
    if rewritten:
        details: list[str] = []
        for name, old, new in rewritten:
            details += [f"{name}:", *_text_diff(old, new)]
        return Change(
            kind="rewritten",
            severity="info",
            tool=now.label(),
            summary=f"{', '.join(r[0] for r in rewritten)} written differently, the same "
            "meaning to the comparison",
            details=details,
        )
    return Change(
        kind="rewritten",
        severity="warn",
        tool=now.label(),
        summary="the fingerprint changed, but no field did: a catalog file edited by hand, "
        "or written by another version? Take both with this one",
        details=[f"{was.fingerprint} → {now.fingerprint}"],
    )


def _pretty(value: Any) -> str:
    try:
        return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False, default=repr)
    except (RecursionError, ValueError):
        return repr(value)


def _graded_by_marks(
    kind: ChangeKind,
    tool: str,
    summary: str,
    what: str,
    lost: list[str],
    found: list[SchemaChange],
) -> Change:
    """A schema's change, failing when a ``what`` (field, parameter) lost ``x-sensitive``
    (``lost``): its details each lost mark, then ``found`` (a lost mark said once)."""
    others = [
        c.describe()
        for c in found
        if not (c.direction == "marked" and (c.path.removesuffix("/x-sensitive") or "/") in lost)
    ]
    return Change(
        kind=kind,
        severity="fail" if lost else "warn",
        tool=tool,
        summary=summary + (f": a {what} is no longer x-sensitive" if lost else ""),
        details=[f"{p}: x-sensitive removed" for p in lost] + others,
    )


def _text_diff(old: str, new: str) -> list[str]:
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=1)
    return [line for line in lines if not line.startswith(("---", "+++", "@@"))]


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
