"""Which way a JSON Schema changed: ``widened`` (it accepts what it refused), ``narrowed``,
``changed`` (both, or an order the comparison cannot tell), ``described`` (a keyword that
describes rather than constrains) or ``marked`` (an ``x-`` keyword: validators ignore it, a
user agent may read it — the harness's ``x-sensitive``, a site's own).

:func:`compare_schemas` orders two schemas keyword by keyword, through every keyword that
holds a subschema (``anyOf`` branches in any order, ``not`` turned round, ``oneOf`` as
``anyOf`` where no value can match two of its branches, ``if`` by the ``then`` or ``else``
beside it, ``$defs`` where they are, as the ``$ref`` keywords use them:
:mod:`harness.qa.schema_refs`), as written and
in their normal form (:mod:`harness.qa.schema_spelling`: one spelling of each meaning), each
change a :class:`SchemaChange` with its path; :func:`lost_marks` finds the ``x-sensitive``
marks one lost. :mod:`harness.qa.drift` grades a catalog's changes with them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.qa.schema_overlap import separate
from harness.qa.schema_refs import ANNOTATIONS, ANYWHERE, DEFINITIONS, ROOT, references
from harness.qa.schema_spelling import canonical, normal_form, same_json

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
# Keywords whose value lists schemas, in an order that does not count.
_BRANCHES = ("allOf", "anyOf", "oneOf")
# Keywords whose value maps a property name to what its presence asks for.
_DEPENDENCIES = ("dependentSchemas", "dependentRequired", "dependencies")
_HANDLED = frozenset(
    {
        "type",
        "enum",
        "required",
        "properties",
        "patternProperties",
        "additionalProperties",
        "items",
        "prefixItems",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        *_BRANCHES,
        *DEFINITIONS,
        *_DEPENDENCIES,
        *_LOWER_BOUNDS,
        *_UPPER_BOUNDS,
        *ANNOTATIONS,  # a change of one is a description change
    }
)

# ``marked``: an ``x-`` keyword, an extension validators ignore and a user agent may read
# (the harness's ``x-sensitive``, a site's own).
Direction = Literal["widened", "narrowed", "changed", "described", "marked"]


class SchemaChange(BaseModel):
    """One difference between two schemas: where, which way, and what."""

    model_config = ConfigDict(frozen=True)

    direction: Direction
    path: str
    what: str
    # The definition (``/$defs/Name``) the change lies in: its direction is as the definition
    # reads, until :func:`compare_schemas` turns it by where the $refs to it are.
    within: str | None = Field(default=None, exclude=True, repr=False)

    def describe(self) -> str:
        """``/properties/qty/maximum: 10 → 100 (widened)``."""
        return f"{self.path or '/'}: {self.what} ({self.direction})"


def lost_marks(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[str]:
    """Paths marked ``x-sensitive`` in ``old`` and not in ``new``."""
    try:
        marked_new = set(_sensitive_paths(new))
        return [p for p in _sensitive_paths(old) if p not in marked_new]
    except RecursionError:
        return ["/ (nested too deeply to follow its x-sensitive marks)"]


def schema_changes(old: Any, new: Any) -> list[SchemaChange]:
    """:func:`compare_schemas`, or one ``changed`` for schemas nested deeper than it follows."""
    try:
        return list(compare_schemas(old, new))
    except RecursionError:
        what = "nested too deeply to compare keyword by keyword"
        return [SchemaChange(direction="changed", path="", what=what)]


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
#
# A page serves its schemas, and the snapshot keeps what it served: every function here takes
# any JSON value wherever a keyword's value is. A value not of the shape JSON Schema gives the
# keyword is compared as a plain value, ``changed`` unless the order is certain. Each keyword is
# one conjunct of what a schema accepts, so comparing keyword by keyword orders the whole; the
# keywords that read others (additionalProperties and patternProperties, items after
# prefixItems, unevaluated*) are compared together with them.

_ABSENT: Any = object()  # a keyword the schema does not have (``null`` is a value it can have)
_UNKNOWN: Any = object()  # what a name answers to, when the comparison cannot tell
# A patternProperties pattern made of these is a regex; one without them is plain text.
_REGEX_SYNTAX = frozenset("\\.^$|?*+()[]{}")


def _get(schema: dict[str, Any], key: str) -> Any:
    return schema.get(key, _ABSENT)


def _value(value: Any) -> str:
    if value is _ABSENT:
        return "(none)"
    return json.dumps(value, ensure_ascii=False, default=repr)


def _any(value: Any) -> bool:
    return True


def _is_list(value: Any) -> bool:
    return isinstance(value, list)


def _is_map(value: Any) -> bool:
    """A keyword whose value maps names to schemas (``properties``), or its absence."""
    return value is _ABSENT or isinstance(value, dict)


def _is_schema(value: Any) -> bool:
    """A keyword whose value is a schema (an object or a boolean), or its absence."""
    return value is _ABSENT or isinstance(value, dict | bool)


def _free(value: Any) -> bool:
    """A schema keyword's value that accepts anything (absent, ``true``, ``{}``)."""
    return value is _ABSENT or value is True or (isinstance(value, dict) and not value)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def _types(kind: Any) -> frozenset[str] | None:
    """The types a ``type`` keyword of the right shape allows (None: absent, any)."""
    if kind is _ABSENT:
        return None
    kinds = frozenset(kind if isinstance(kind, list) else [kind])
    return kinds | {"integer"} if "number" in kinds else kinds


def _is_type(kind: Any) -> bool:
    """Whether ``kind`` has the shape of a ``type`` keyword's value: a name, or a list of them."""
    if isinstance(kind, list):
        return all(isinstance(k, str) for k in kind)
    return kind is _ABSENT or isinstance(kind, str)


def _covers(wide: frozenset[str] | None, narrow: frozenset[str] | None) -> bool:
    return wide is None or (narrow is not None and narrow <= wide)


def compare_schemas(old: Any, new: Any, path: str = "") -> Iterator[SchemaChange]:
    """Every difference between two JSON Schemas, each ordered where the keyword allows:
    ``widened`` (``new`` accepts what ``old`` refused), ``narrowed``, ``changed`` (both,
    or unknown), ``described`` (a keyword that describes rather than constrains),
    ``marked`` (an ``x-`` keyword: validators ignore it, a user agent may read it).

    Every keyword that holds a subschema is followed (``anyOf``, ``not``, ``if``, ``$defs``,
    …), each change named by its path; branches are matched whatever their order, and a
    definition is compared where it is, ordered as the $refs that use it read it (under
    ``not`` the other way round).

    A schema written differently with the same meaning is no change: the two are compared
    as written and in :func:`~harness.qa.schema_spelling.normal_form` (a ``const`` as an
    ``enum`` of its one value, ``allOf`` branches of ``required`` names or ``properties``
    merged into their schema), and the comparison that orders the change better is given
    (no change, then one direction; as written when they order it alike). Its pointers name
    places in the schemas it compared: the normal form's, when that is the one given.

    Any JSON value is taken, at any position, and none raises: a value not of the shape
    JSON Schema gives its keyword is compared as a plain value (``changed``)."""
    written = list(_compare_whole(old, new, path))
    try:
        normal_old, normal_new = normal_form(old), normal_form(new)
    except RecursionError:
        normal_old, normal_new = old, new  # too deep to rewrite: compared as written
    if _disorder(written) and (normal_old is not old or normal_new is not new):
        normal = list(_compare_whole(normal_old, normal_new, path))
        if _disorder(normal) < _disorder(written):
            yield from normal
            return
    yield from written


def _disorder(changes: list[SchemaChange]) -> int:
    """How little a comparison's changes order the whole: 0 no change of meaning, 1 one
    way, 2 both ways or unknown."""
    ordered = {c.direction for c in changes} - {"described", "marked"}
    if not ordered:
        return 0
    return 1 if ordered in ({"widened"}, {"narrowed"}) else 2


def _compare_whole(old: Any, new: Any, path: str) -> Iterator[SchemaChange]:
    """:func:`compare_schemas` of the schemas as they are written."""
    uses = references(old, path)
    for target, polarities in references(new, path).items():
        uses.setdefault(target, set()).update(polarities)
    for change in _compare(old, new, path):
        if change.within is None:
            polarities = {1} | uses.get(ROOT, set())
        else:
            polarities = set(uses.get(change.within, set()))
        polarities |= uses.get(ANYWHERE, set())
        if not polarities and change.path == change.within:
            continue  # a definition added or removed that nothing uses: validators never read it
        yield _turned(change, polarities)


def _compare(old: Any, new: Any, path: str) -> Iterator[SchemaChange]:
    """:func:`compare_schemas` with each definition's changes as the definition reads."""
    if same_json(old, new):
        return
    was, now = ({} if old is True else old), ({} if new is True else new)
    if same_json(was, now):
        return  # true and {} both accept anything
    if not isinstance(was, dict) or not isinstance(now, dict):
        # false accepts nothing: any schema accepts as much or more.
        direction: Direction = "changed"
        if now is False and isinstance(was, dict):
            direction = "narrowed"
        elif was is False and isinstance(now, dict):
            direction = "widened"
        yield SchemaChange(direction=direction, path=path, what=f"{_value(old)} → {_value(new)}")
        return
    found = [
        *_compare_type(_get(was, "type"), _get(now, "type"), f"{path}/type"),
        *_compare_bounds(was, now, path),
        *_compare_enum(_get(was, "enum"), _get(now, "enum"), f"{path}/enum"),
        *_compare_objects(was, now, path),
        *_compare_items(was, now, path),
        *_compare_applicators(was, now, path),
        *_compare_dependencies(was, now, path),
        *_compare_definitions(was, now, path),
    ]
    others = list(_compare_others(was, now, path))
    yield from found
    yield from _compare_unevaluated(was, now, path, [*found, *others])
    yield from others


def _compare_others(old: dict[str, Any], new: dict[str, Any], path: str) -> Iterator[SchemaChange]:
    """The keywords compared by their value alone, ``x-`` keywords and descriptions."""
    was, now = old, new
    for key in sorted((was.keys() | now.keys()) - _HANDLED, key=str):
        if same_json(_get(was, key), _get(now, key)):
            continue
        if str(key).startswith("x-"):
            yield SchemaChange(
                direction="marked",
                path=f"{path}/{key}",
                what=f"{_value(_get(was, key))} → {_value(_get(now, key))}",
            )
        else:
            yield _presence(_get(was, key), _get(now, key), f"{path}/{key}")
    for key in sorted(ANNOTATIONS & (was.keys() | now.keys())):
        if not same_json(_get(was, key), _get(now, key)):
            yield SchemaChange(
                direction="described",
                path=f"{path}/{key}",
                what=f"{_value(_get(was, key))} → {_value(_get(now, key))}",
            )


def _presence(was: Any, now: Any, path: str, shaped: Callable[[Any], bool] = _any) -> SchemaChange:
    """A constraint removed widens, one added narrows, one changed is both; one whose value
    is not ``shaped`` as its keyword's may mean anything (changed)."""
    direction: Direction = "changed"
    if was is _ABSENT and shaped(now):
        direction = "narrowed"
    elif now is _ABSENT and shaped(was):
        direction = "widened"
    return SchemaChange(direction=direction, path=path, what=f"{_value(was)} → {_value(now)}")


def _compare_type(was: Any, now: Any, path: str) -> Iterator[SchemaChange]:
    if same_json(was, now):
        return
    direction: Direction = "changed"
    if _is_type(was) and _is_type(now):
        old_types, new_types = _types(was), _types(now)
        if old_types == new_types:
            return  # "string" and ["string"]
        wider, narrower = _covers(new_types, old_types), _covers(old_types, new_types)
        if wider and not narrower:
            direction = "widened"
        elif narrower:
            direction = "narrowed"
    yield SchemaChange(direction=direction, path=path, what=f"{_value(was)} → {_value(now)}")


def _compare_bounds(old: dict[str, Any], new: dict[str, Any], path: str) -> Iterator[SchemaChange]:
    for key in (*_LOWER_BOUNDS, *_UPPER_BOUNDS):
        was, now = _get(old, key), _get(new, key)
        if same_json(was, now):
            continue
        # Without minContains, contains asks for one match: minContains 0 widens.
        unset = 1 if key == "minContains" else _ABSENT
        low = was if was is not _ABSENT else unset
        high = now if now is not _ABSENT else unset
        direction: Direction = "changed"
        if same_json(low, high):
            continue
        if _number(low) and _number(high):
            widened = high < low if key in _LOWER_BOUNDS else high > low
            direction = "widened" if widened else "narrowed"
        elif low is _ABSENT and _number(high):
            direction = "narrowed"
        elif high is _ABSENT and _number(low):
            direction = "widened"
        yield SchemaChange(
            direction=direction, path=f"{path}/{key}", what=f"{_value(was)} → {_value(now)}"
        )


def _compare_enum(was: Any, now: Any, path: str) -> Iterator[SchemaChange]:
    if same_json(was, now):
        return
    if not isinstance(was, list) or not isinstance(now, list):
        yield _presence(was, now, path, _is_list)
        return
    was_keys = {canonical(v) for v in was}
    now_keys = {canonical(v) for v in now}
    added = [v for v in now if canonical(v) not in was_keys]
    removed = [v for v in was if canonical(v) not in now_keys]
    if not added and not removed:
        return  # the same values, reordered or repeated
    direction: Direction = "widened" if not removed else "narrowed" if not added else "changed"
    parts = [f"+{_value(v)}" for v in added] + [f"-{_value(v)}" for v in removed]
    yield SchemaChange(direction=direction, path=path, what=" ".join(parts))


def _required(value: Any) -> frozenset[str] | None:
    """The names a ``required`` keyword lists (none when absent); None when its value is
    not a list of names."""
    if value is _ABSENT:
        return frozenset()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return frozenset(value)
    return None


def _compare_required(was: Any, now: Any, path: str) -> Iterator[SchemaChange]:
    """A list of names that must be present (``required``, a ``dependentRequired`` entry)."""
    was_required, now_required = _required(was), _required(now)
    if was_required is None or now_required is None:
        if not same_json(was, now):
            yield SchemaChange(
                direction="changed", path=path, what=f"{_value(was)} → {_value(now)}"
            )
        return
    for name in sorted(was_required - now_required):
        yield SchemaChange(direction="widened", path=path, what=f"{name!r} no longer required")
    for name in sorted(now_required - was_required):
        yield SchemaChange(direction="narrowed", path=path, what=f"{name!r} now required")


def _compare_objects(old: dict[str, Any], new: dict[str, Any], path: str) -> Iterator[SchemaChange]:
    yield from _compare_required(_get(old, "required"), _get(new, "required"), f"{path}/required")
    was, now = _get(old, "properties"), _get(new, "properties")
    if not (_is_map(was) and _is_map(now)) and not same_json(was, now):
        yield SchemaChange(
            direction="changed", path=f"{path}/properties", what=f"{_value(was)} → {_value(now)}"
        )
    was_props, now_props = _properties(old), _properties(new)
    for name in sorted(was_props.keys() | now_props.keys(), key=str):
        where = f"{path}/properties/{name}"
        if name in was_props and name in now_props:
            yield from _compare(was_props[name], now_props[name], where)
        elif name in now_props:
            yield _declared(_undeclared(old, name), now_props[name], where, added=True)
        else:
            yield _declared(was_props[name], _undeclared(new, name), where, added=False)
    yield from _compare_patterns(old, new, path)
    yield from _compare_subschema(
        _get(old, "additionalProperties"),
        _get(new, "additionalProperties"),
        f"{path}/additionalProperties",
    )


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    found = schema.get("properties")
    return found if isinstance(found, dict) else {}


def _undeclared(schema: dict[str, Any], name: str) -> Any:
    """The schema a value under ``name`` answers to in ``schema`` while ``name`` is not a
    declared property: the patternProperties schema whose pattern matches the name, else
    additionalProperties (absent: ``true``). ``_UNKNOWN`` when that cannot be told: a
    pattern that is not plain text may match, two match, or a keyword is not of its shape."""
    patterns = _get(schema, "patternProperties")
    if not _is_map(patterns):
        return _UNKNOWN
    matched = []
    for pattern, subschema in (patterns if isinstance(patterns, dict) else {}).items():
        found = _plain_match(pattern, name)
        if found is None:
            return _UNKNOWN
        if found:
            matched.append(subschema)
    if matched:
        return matched[0] if len(matched) == 1 else _UNKNOWN
    extra = _get(schema, "additionalProperties")
    if extra is _ABSENT:
        return True
    return extra if isinstance(extra, dict | bool) else _UNKNOWN


def _plain_match(pattern: Any, name: str) -> bool | None:
    """Whether a patternProperties ``pattern`` that is plain text (``^`` and ``$`` anchors
    aside) matches ``name``; None for a regex, which the gate does not run: ECMAScript's
    semantics are not Python's, and a page's pattern can backtrack for ever."""
    if not isinstance(pattern, str):
        return None
    body = pattern.removeprefix("^")
    start, end = body != pattern, body.endswith("$")
    body = body.removesuffix("$")
    if any(c in _REGEX_SYNTAX for c in body):
        return None
    if start and end:
        return name == body
    if start:
        return name.startswith(body)
    return name.endswith(body) if end else body in name


def _declared(was: Any, now: Any, path: str, *, added: bool) -> SchemaChange:
    """A name that became a declared property (``added``) or stopped being one, compared
    with what it answers to undeclared: before an added one, after a removed one."""
    undeclared = was if added else now
    what = "new parameter" if added else "parameter removed"
    if undeclared is _UNKNOWN:
        return SchemaChange(
            direction="changed",
            path=path,
            what=f"{what} (undeclared, it answers to a patternProperties regex or a "
            "malformed keyword: the two cannot be ordered)",
        )
    if undeclared is not True:
        verb = "answered" if added else "answers"
        what += f" (undeclared, it {verb} to {_value(undeclared)})"
    directions = {c.direction for c in _compare(was, now, path)} - {"described", "marked"}
    direction: Direction = "described"
    if directions:
        direction = directions.pop() if len(directions) == 1 else "changed"
    return SchemaChange(direction=direction, path=path, what=what)


def _compare_patterns(
    old: dict[str, Any], new: dict[str, Any], path: str
) -> Iterator[SchemaChange]:
    was, now = _get(old, "patternProperties"), _get(new, "patternProperties")
    where = f"{path}/patternProperties"
    if same_json(was, now):
        return
    if not (_is_map(was) and _is_map(now)):
        yield SchemaChange(direction="changed", path=where, what=f"{_value(was)} → {_value(now)}")
        return
    was = was if isinstance(was, dict) else {}
    now = now if isinstance(now, dict) else {}
    # The names a pattern matches answer to it instead of additionalProperties: a pattern
    # added or removed narrows or widens only where additionalProperties took anything.
    open_both = _free(_get(old, "additionalProperties")) and _free(
        _get(new, "additionalProperties")
    )
    for pattern in sorted(was.keys() | now.keys(), key=str):
        if pattern in was and pattern in now:
            yield from _compare(was[pattern], now[pattern], f"{where}/{pattern}")
            continue
        direction: Direction = "changed"
        if open_both:
            direction = "narrowed" if pattern in now else "widened"
        what = "pattern added" if pattern in now else "pattern removed"
        yield SchemaChange(direction=direction, path=f"{where}/{pattern}", what=what)


def _compare_subschema(was: Any, now: Any, path: str) -> Iterator[SchemaChange]:
    """A keyword whose value is a schema, absent meaning ``true`` (additionalProperties,
    items)."""
    if same_json(was, now):
        return
    if not (_is_schema(was) and _is_schema(now)):
        yield SchemaChange(direction="changed", path=path, what=f"{_value(was)} → {_value(now)}")
    elif isinstance(was, dict) or isinstance(now, dict):
        yield from _compare(True if was is _ABSENT else was, True if now is _ABSENT else now, path)
    elif (now is False) != (was is False):
        direction: Direction = "narrowed" if now is False else "widened"
        yield SchemaChange(direction=direction, path=path, what=f"{_value(was)} → {_value(now)}")


def _compare_items(old: dict[str, Any], new: dict[str, Any], path: str) -> Iterator[SchemaChange]:
    was, now = _get(old, "items"), _get(new, "items")
    if isinstance(was, list) or isinstance(now, list):  # the tuple form before 2020-12
        if not same_json(was, now):
            yield _presence(was, now, f"{path}/items", _is_list)
    else:
        yield from _compare_subschema(was, now, f"{path}/items")
    # items applies after prefixItems: a prefix changed moves the items it applies to.
    was_prefix, now_prefix = _get(old, "prefixItems"), _get(new, "prefixItems")
    where = f"{path}/prefixItems"
    if same_json(was_prefix, now_prefix):
        return
    if not (_free(was) and _free(now)):
        yield SchemaChange(
            direction="changed",
            path=where,
            what="the prefix changed, and with it the items that items applies to",
        )
    elif not (_is_listed(was_prefix) and _is_listed(now_prefix)):
        yield _presence(was_prefix, now_prefix, where, _is_list)
    else:
        # Items free after the prefix: each position is a schema of its own, absent ``true``.
        before, after = ([] if v is _ABSENT else v for v in (was_prefix, now_prefix))
        for index in range(max(len(before), len(after))):
            yield from _compare_subschema(
                before[index] if index < len(before) else _ABSENT,
                after[index] if index < len(after) else _ABSENT,
                f"{where}/{index}",
            )


def _compare_unevaluated(
    old: dict[str, Any], new: dict[str, Any], path: str, found: list[SchemaChange]
) -> Iterator[SchemaChange]:
    """unevaluatedProperties and unevaluatedItems apply to what no other keyword evaluated:
    any other keyword's change of meaning (``found``: not a description, nor branches
    reordered) moves what they apply to (a property declared where unevaluatedProperties is
    false is one the schema refused before)."""
    own = (f"{path}/unevaluatedProperties", f"{path}/unevaluatedItems")
    beside = [c for c in found if c.direction not in ("described", "marked") and c.path not in own]
    for key in ("unevaluatedProperties", "unevaluatedItems"):
        if _free(_get(old, key)) and _free(_get(new, key)):
            continue
        if beside:
            yield SchemaChange(
                direction="changed",
                path=f"{path}/{key}",
                what="what it applies to changed with the keywords beside it",
            )


# -- the keywords that apply subschemas --------------------------------------------------
#
# A subschema's change moves the whole one way (a conjunct or a branch: allOf, anyOf, then,
# else, contains, a dependentSchemas entry…), the other way (not), or either (oneOf takes
# what exactly one branch takes, if selects then or else): the turn is applied to every change
# found inside it. Either, unless the schema beside it says more: oneOf branches no value can
# match two of take what anyOf's would (:func:`~harness.qa.schema_overlap.separate`), and an if beside no then takes what
# it or else takes (one way), beside no else what it refuses or then takes (the other).

_FLIPPED: dict[Direction, Direction] = {"widened": "narrowed", "narrowed": "widened"}
# A change of a definition added or removed (its direction: where a $ref uses it).
_DEFINITION_ADDED, _DEFINITION_REMOVED = "definition added", "definition removed"


def _turned(change: SchemaChange, polarities: set[int]) -> SchemaChange:
    """``change`` as seen from a place that uses it with ``polarities`` (1: the same way,
    -1: the other, 0: either; none: not used at all)."""
    if change.direction not in _FLIPPED or polarities <= {1}:
        return change
    if polarities == {-1}:
        return change.model_copy(update={"direction": _FLIPPED[change.direction]})
    return change.model_copy(update={"direction": "changed"})


def _turn(changes: Iterable[SchemaChange], polarity: int) -> Iterator[SchemaChange]:
    """Every change found under a keyword of ``polarity``; a definition's are left as it
    reads them (the $refs that use it turn them)."""
    for change in changes:
        yield change if change.within is not None else _turned(change, {polarity})


def _is_listed(value: Any) -> bool:
    """A keyword whose value lists schemas (``anyOf``, ``prefixItems``), or its absence."""
    return value is _ABSENT or isinstance(value, list)


def _brief(value: Any, limit: int = 60) -> str:
    """A value shown in a line: a subschema is named by its path, not printed whole."""
    text = _value(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _summed(changes: Iterable[SchemaChange], path: str, what: str) -> SchemaChange | None:
    """One change for many at ``path`` (a branch added, say): their direction if they agree,
    ``changed`` if not; None when there are none."""
    found = list(changes)
    if not found:
        return None
    directions = {c.direction for c in found}
    ordered = directions - {"described", "marked"}
    direction: Direction = "described" if "described" in directions else "marked"
    if ordered:
        direction = ordered.pop() if len(ordered) == 1 else "changed"
    return SchemaChange(direction=direction, path=path, what=what)


def _compare_applicators(
    old: dict[str, Any], new: dict[str, Any], path: str
) -> Iterator[SchemaChange]:
    for key in _BRANCHES:
        yield from _compare_branches(key, _get(old, key), _get(new, key), f"{path}/{key}")
    was, now = _get(old, "not"), _get(new, "not")
    if not same_json(was, now):
        if not (_is_schema(was) and _is_schema(now)):
            yield SchemaChange(direction="changed", path=f"{path}/not", what=_shown(was, now))
        else:  # no not: as if it were not false
            was, now = (False if v is _ABSENT else v for v in (was, now))
            yield from _turn(_compare(was, now, f"{path}/not"), -1)
    was, now = _get(old, "if"), _get(new, "if")
    if not same_json(was, now):
        # if chooses between then and else: which way its change moves the whole depends
        # on them; a missing one applies neither.
        if was is _ABSENT or now is _ABSENT or not (_is_schema(was) and _is_schema(now)):
            yield SchemaChange(direction="changed", path=f"{path}/if", what=_shown(was, now))
        else:
            yield from _turn(_compare(was, now, f"{path}/if"), _if_polarity(old, new))
    for key in ("then", "else", "propertyNames"):
        yield from _compare_subschema(_get(old, key), _get(new, key), f"{path}/{key}")
    was, now = _get(old, "contains"), _get(new, "contains")
    if not same_json(was, now):
        if was is _ABSENT or now is _ABSENT or not (_is_schema(was) and _is_schema(now)):
            yield _presence(was, now, f"{path}/contains", _is_schema)
        else:
            # Under maxContains, more items matching may be too many.
            capped = "maxContains" in old or "maxContains" in new
            yield from _turn(_compare(was, now, f"{path}/contains"), 0 if capped else 1)


def _if_polarity(old: dict[str, Any], new: dict[str, Any]) -> int:
    """How a change of ``if`` moves the whole, then and else as both schemas have them: with
    no then (in both), the whole takes what if or else takes — a wider if widens (1); with no
    else, what if refuses or then takes — a wider if narrows (-1); with both, either (0)."""
    no_then = _free(_get(old, "then")) and _free(_get(new, "then"))
    no_else = _free(_get(old, "else")) and _free(_get(new, "else"))
    if no_then and not no_else:
        return 1
    if no_else and not no_then:
        return -1
    return 0


def _shown(was: Any, now: Any) -> str:
    return f"{_brief(was)} → {_brief(now)}"


def _compare_branches(key: str, was: Any, now: Any, path: str) -> Iterator[SchemaChange]:
    """allOf, anyOf, oneOf: branches matched whatever their order, each compared with the
    one it matches (or the one at its turn among those left); one added or removed."""
    if same_json(was, now):
        return
    if not (_is_listed(was) and _is_listed(now)):
        yield SchemaChange(direction="changed", path=path, what=_shown(was, now))
        return
    if key != "allOf" and (was is _ABSENT or now is _ABSENT):
        # No anyOf (oneOf) takes anything; one takes what its branches take.
        listed = now if was is _ABSENT else was
        direction: Direction = "narrowed" if was is _ABSENT else "widened"
        verb = "added" if was is _ABSENT else "removed"
        yield SchemaChange(direction=direction, path=path, what=f"{verb}, {len(listed)} branches")
        return
    before, after = ([] if v is _ABSENT else list(v) for v in (was, now))
    left = list(range(len(before)))
    moved: list[int] = []
    keys = [canonical(branch) for branch in before]
    for index, branch in enumerate(after):
        written = canonical(branch)
        match = next((i for i in left if keys[i] == written), None)
        if match is None:
            moved.append(index)
        else:
            left.remove(match)
    found: list[SchemaChange] = []
    paired = min(len(left), len(moved))
    for i, j in zip(left[:paired], moved[:paired], strict=True):
        found += _compare(before[i], after[j], f"{path}/{j}")
    # allOf asks for every branch (a new one narrows), anyOf for one (a new one widens).
    nothing = key == "allOf"
    for j in moved[paired:]:
        added = _summed(_compare(nothing, after[j], f"{path}/{j}"), f"{path}/{j}", "branch added")
        if added is not None:
            found.append(added)
    for i in left[paired:]:
        removed = _summed(
            _compare(before[i], nothing, f"{path}/{i}"), f"{path}/{i}", "branch removed"
        )
        if removed is not None:
            found.append(removed)
    if key != "oneOf":
        yield from found
        return
    # oneOf refuses what two branches take. Branches no value can match two of take what
    # anyOf's take: then a wider branch (or one more) widens the whole, when the new
    # branches are apart; a narrower one (or one less) narrows it, when the old ones were.
    apart = {"widened": separate(after), "narrowed": separate(before)}
    for change in found:
        if change.within is not None or apart.get(change.direction, True):
            yield change
        else:
            what = f"{change.what}; the oneOf's branches may overlap"
            yield change.model_copy(update={"direction": "changed", "what": what})


def _compare_dependencies(
    old: dict[str, Any], new: dict[str, Any], path: str
) -> Iterator[SchemaChange]:
    """dependentSchemas (a schema), dependentRequired (names) and draft 7's dependencies
    (either): what an object with the property must also be, each a conjunct."""
    for key in _DEPENDENCIES:
        was, now = _get(old, key), _get(new, key)
        where = f"{path}/{key}"
        if same_json(was, now):
            continue
        if not (_is_map(was) and _is_map(now)):
            yield SchemaChange(direction="changed", path=where, what=_shown(was, now))
            continue
        before = was if isinstance(was, dict) else {}
        after = now if isinstance(now, dict) else {}
        for name in sorted(before.keys() | after.keys(), key=str):
            first, second = before.get(name, _ABSENT), after.get(name, _ABSENT)
            names = key == "dependentRequired" or (
                key == "dependencies"
                and (isinstance(first, list) or isinstance(second, list))
                and _is_listed(first)
                and _is_listed(second)
            )
            if names:
                yield from _compare_required(first, second, f"{where}/{name}")
            else:
                yield from _compare_subschema(first, second, f"{where}/{name}")


def _compare_definitions(
    old: dict[str, Any], new: dict[str, Any], path: str
) -> Iterator[SchemaChange]:
    """$defs (draft 7's definitions) compared where they are, each change marked as lying in
    its definition: :func:`compare_schemas` orders it as the $refs to it read it."""
    for key in DEFINITIONS:
        was, now = _get(old, key), _get(new, key)
        where = f"{path}/{key}"
        if same_json(was, now):
            continue
        if not (_is_map(was) and _is_map(now)):
            yield SchemaChange(direction="changed", path=where, what=_shown(was, now))
            continue
        before = was if isinstance(was, dict) else {}
        after = now if isinstance(now, dict) else {}
        for name in sorted(before.keys() | after.keys(), key=str):
            place = f"{where}/{name}"
            if name in before and name in after:
                changes: Iterable[SchemaChange] = _compare(before[name], after[name], place)
            else:
                what = _DEFINITION_ADDED if name in after else _DEFINITION_REMOVED
                changes = [SchemaChange(direction="changed", path=place, what=what)]
            for change in changes:
                yield (
                    change
                    if change.within is not None
                    else change.model_copy(update={"within": place})
                )
