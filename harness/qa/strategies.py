"""Inputs for a tool, generated from its ``inputSchema``: valid ones, and near-misses.

Valid arguments come from hypothesis-jsonschema, kept only when the harness's own
validation (:mod:`harness.stages.validation`: ECMAScript patterns, JavaScript numbers)
agrees that they fit. A near-miss is a valid argument object with one thing made wrong
— a required parameter left out, a number one past its bound, a string one character
too long, a value outside its ``enum``, the wrong type — kept only when the harness
refuses it. Hypothesis shrinks both the valid part and the choice of mistake.

The harness reads a schema as Draft 2020-12, hypothesis-jsonschema as Draft 7 (it reads
``items`` as Draft 7 does and passes over the keywords it does not know): before anything
is drawn, :mod:`harness.qa.draft7` says the schema in Draft 7's words. What Draft 7 cannot
say is left to the filter, and named (:func:`~harness.qa.draft7.unread_keywords`) when no
value drawn fits; so is the keyword that refused every value drawn (:func:`why_nothing_fits`),
and the format, when it is one the harness checks and nothing draws. Strings of a format the
harness checks come from hypothesis-jsonschema, or from :mod:`harness.qa.formats` where it
has none (``uuid``, ``duration``).

Objects are built here, not by hypothesis-jsonschema (whose object drawing fails on the
current Hypothesis): their members from ``properties``, ``patternProperties`` and
``additionalProperties`` (keys from ``propertyNames``, as many as ``minProperties`` and
``maxProperties`` allow), ``allOf`` members folded in, one branch of an ``if``/``then``/
``else`` or an ``anyOf``/``oneOf`` at a time, a ``const`` or ``enum`` of objects as given.
Arrays are built here too (their items may be objects), and a ``type`` list is drawn one
type at a time, a list of one name included.

Hypothesis is an optional dependency (the ``qa`` extra): :func:`require_hypothesis` says
how to install it.
"""

from __future__ import annotations

import contextlib
import copy
import json
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from random import Random
from typing import TYPE_CHECKING, Any

from harness.errors import ConfigError
from harness.models import Tool
from harness.qa.draft7 import as_count, as_draft7
from harness.qa.formats import custom_formats, ungenerated_formats
from harness.schemas import local_target
from harness.schemas.patterns import search
from harness.stages.validation import (
    outside_references_problem,
    schema_problem,
    validate_arguments,
)

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

INSTALL_HINT = "pip install 'webmcp-harness[qa]'"

JsonPath = tuple[str | int, ...]


def require_hypothesis() -> None:
    """Raise a :class:`ConfigError` that says how to install the QA extra when Hypothesis
    or hypothesis-jsonschema is missing."""
    try:
        import hypothesis  # noqa: F401
        import hypothesis_jsonschema  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"Fuzzing needs Hypothesis and hypothesis-jsonschema ({exc.name} is not "
            f"installed): {INSTALL_HINT}"
        ) from None


@dataclass(frozen=True)
class NearMiss:
    """Arguments one step outside the schema, and which step."""

    arguments: dict[str, Any]
    mistake: str


@dataclass(frozen=True)
class _Mistake:
    path: JsonPath
    what: str
    apply: Callable[[Any], Any]  # the old value (or _ABSENT) → the new one (or _ABSENT)


_ABSENT = object()


def _fits(tool: Tool, arguments: Any) -> bool:
    try:
        return not validate_arguments(tool, arguments)
    except Exception:  # a schema the harness cannot use: nothing fits it
        return False


def unusable_schema(tool: Tool) -> str | None:
    """Why the harness refuses every call of ``tool`` for its ``inputSchema`` (not a valid
    schema, or one that refers outside itself: :mod:`harness.stages.validation`); None when
    its calls can be checked."""
    schema = tool.input_schema
    invalid = schema_problem(schema)
    if invalid is not None:
        return f"it is not a valid JSON Schema ({invalid})"
    return outside_references_problem("inputSchema", schema)


def valid_arguments(tool: Tool) -> SearchStrategy[dict[str, Any]]:
    """Argument objects that fit ``tool.input_schema`` (as the harness validates it).

    Raises :class:`ConfigError` when no inputs can be made from the schema, or when the
    harness refuses every call of the tool for it (an invalid schema, one that refers
    outside itself).
    """
    require_hypothesis()
    problem = unusable_schema(tool)
    if problem is not None:
        raise ConfigError(
            f"{tool.name}'s inputSchema cannot be used: {problem}. The harness refuses every "
            "call of the tool, so there is nothing to fuzz until the site fixes its schema"
        )
    # Every value is checked against the schema itself, so what the drawing gets wrong
    # costs draws, never a value that does not fit.
    return _drawn(tool).filter(lambda value: isinstance(value, dict) and _fits(tool, value))


def _drawn(tool: Tool) -> SearchStrategy[Any]:
    """Values drawn from ``tool``'s schema in Draft 7's words, before the filter."""
    from hypothesis.errors import InvalidArgument

    schema = as_draft7(tool.input_schema).schema
    try:
        strategy = _strategy(schema, schema, ())
        with _generator_quiet():
            strategy.validate()
    except (InvalidArgument, ValueError, TypeError, KeyError, RecursionError) as exc:
        raise ConfigError(f"No inputs can be made from {tool.name}'s inputSchema: {exc}") from None
    return strategy


@dataclass(frozen=True)
class Unfit:
    """What keeps the values drawn from a tool's schema from fitting it."""

    said: str
    """By keyword: ``nothing the generator draws fits /properties/n (`type`, `minimum`,
    `maximum`)``, ``every value drawn failed `not` at /not``."""
    no_generator: str | None = None
    """The format the harness checks and nothing draws values of, when that keyword is a
    ``format`` (:func:`harness.qa.formats.ungenerated_formats`): the schema is not at fault."""


def why_nothing_fits(tool: Tool) -> Unfit | None:
    """What keeps the values drawn from ``tool``'s schema from fitting it, by keyword: the
    part of the schema nothing is drawn for, else the keyword that refused most of a few
    values drawn (and the format there, when no strategy draws it); None when it cannot
    tell."""
    require_hypothesis()
    from hypothesis import HealthCheck, Phase, find, settings

    schema = as_draft7(tool.input_schema).schema
    try:
        strategy = _drawn(tool)
        with _generator_quiet():
            empty = strategy.is_empty
    except ConfigError:
        return None
    if empty:
        place, node = _nothing_drawn_at(schema, schema, ())
        said = ", ".join(f"`{k}`" for k in node) if isinstance(node, dict) and node else "`false`"
        return Unfit(f"nothing the generator draws fits {_pointer(place)} ({said})")
    refused: Counter[str] = Counter()
    tried = 0

    def condition(value: Any) -> bool:
        nonlocal tried
        tried += 1
        with contextlib.suppress(Exception):
            refused.update({p.schema_path for p in validate_arguments(tool, value)})
        return False

    with _generator_quiet(), contextlib.suppress(Exception):
        find(
            strategy,
            condition,
            settings=settings(
                max_examples=30,
                database=None,
                phases=[Phase.generate],
                suppress_health_check=list(HealthCheck),
            ),
            random=Random(0),
        )
    if not refused:
        return None
    [(keyword_at, count)] = refused.most_common(1)
    how_many = "every value" if count == tried else f"{count} of {tried} values"
    keyword = keyword_at.rsplit("/", 1)[-1]
    said = f"{how_many} drawn failed `{keyword}` at {keyword_at}"
    name = local_target(tool.input_schema, "#" + keyword_at) if keyword == "format" else None
    if isinstance(name, str) and name in ungenerated_formats():
        return Unfit(said, no_generator=name)
    return Unfit(said)


def _nothing_drawn_at(schema: Any, root: dict[str, Any], path: JsonPath) -> tuple[JsonPath, Any]:
    """Where in ``schema`` nothing can be drawn (``path`` to it, and the subschema there):
    the deepest required member with no value to draw, else ``schema`` itself."""
    if isinstance(schema, dict):
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        for name in schema.get("required") or []:
            member = properties.get(name, {}) if isinstance(name, str) else {}
            with contextlib.suppress(Exception), _generator_quiet():
                if _strategy(member, root, ("",)).is_empty:
                    return _nothing_drawn_at(member, root, (*path, "properties", name))
    return path, schema


@contextlib.contextmanager
def _generator_quiet() -> Iterator[None]:
    """hypothesis-jsonschema warns (a ``UserWarning``, and Python's ``re`` a
    ``FutureWarning``) about each ECMAScript pattern Python's ``re`` reads otherwise or not at
    all: on stderr, with its own paths, in every fuzz run. The harness reads those patterns
    itself; a value drawn without one is filtered, and the skip's reason names it when none
    fits. Silenced here, where hypothesis-jsonschema is called, not for the process."""
    with warnings.catch_warnings():
        for category in (UserWarning, FutureWarning):
            warnings.filterwarnings("ignore", category=category, module="hypothesis_jsonschema")
        yield


def _from_schema(schema: Any) -> SearchStrategy[Any]:
    """hypothesis-jsonschema's values of ``schema``, without its warnings; values of the
    formats the harness checks and it does not draw from :mod:`harness.qa.formats`."""
    from hypothesis_jsonschema import from_schema

    with _generator_quiet():
        return from_schema(schema, custom_formats=custom_formats())


_COMBINED = ("allOf", "not", "if", "then", "else", "patternProperties")

MAX_DEPTH = 32
"""How deep a schema is followed to draw a value."""
MAX_REF_EXPANSIONS = 3
"""How often one ``$ref`` is followed within one value: a recursive schema's optional
members are left out below that, so its values stay shallow but are still drawn."""
MAX_FOLDED = 64
"""How many ``allOf`` members are folded into one object schema (a ``$ref`` back to the
schema would fold for ever)."""


class _TooDeep(ValueError):
    """The schema goes on deeper than values are drawn (a required member, past the limits)."""

    def __init__(self) -> None:
        super().__init__("the schema nests too deeply to draw from")


_JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


def _strategy(schema: Any, root: dict[str, Any], refs: tuple[str, ...]) -> SearchStrategy[Any]:
    """Values of ``schema``: objects (:func:`_object`), arrays (:func:`_array`) and
    alternatives built here (the current hypothesis-jsonschema cannot draw objects on the
    current Hypothesis), the rest by hypothesis-jsonschema. ``refs``: the ``$ref``s followed on the
    way here, one entry per level (``""`` for a level that followed none)."""
    from hypothesis import strategies as st

    if len(refs) > MAX_DEPTH:
        raise _TooDeep
    if not isinstance(schema, dict):
        return _from_schema(schema)
    ref = schema.get("$ref")
    if isinstance(ref, str):
        if refs.count(ref) >= MAX_REF_EXPANSIONS:
            raise _TooDeep
        target = local_target(root, ref)
        if target is None:
            raise ValueError(f"$ref {ref!r} leads outside the schema")
        return _strategy(target, root, (*refs, ref))
    given = _given(schema)
    if given is not None:  # the filter applies the rest of the schema
        return st.sampled_from(given).map(copy.deepcopy)
    deeper = (*refs, "")
    kind = schema.get("type")
    if isinstance(kind, list) and kind and all(isinstance(k, str) for k in kind):
        # One type at a time, each named alone, as the rest of this function reads `type`:
        # a list, even of one name, went to hypothesis-jsonschema, which fails on objects.
        return _one_of([{**schema, "type": k} for k in kind], root, refs)
    if kind == "object" or (kind is None and "properties" in schema):
        return _object(schema, root, refs)
    if kind == "array":  # its items may be objects, which hypothesis-jsonschema cannot draw
        return _array(schema, root, refs)
    if any(key in schema for key in _COMBINED) or _dependent_schemas(schema):
        if kind is None and _may_be_object(schema, root):
            # Untyped under combinators: one type at a time too, for the same reason as
            # below (`{"minimum": 3, "not": …}` raised out of every draw).
            return _one_of([{**schema, "type": k} for k in _JSON_TYPES], root, refs)
        return _from_schema({**schema, **_definitions(root)})
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and "type" not in schema:
            return _one_of(schema[key], root, deeper)
    if kind is None:
        # Untyped: one type at a time, objects built here (hypothesis-jsonschema's own
        # object drawing fails on the current Hypothesis: `{"minimum": 3}` raised
        # AttributeError out of every draw, and the tool was skipped).
        return _one_of([{**schema, "type": k} for k in _JSON_TYPES], root, refs)
    return _from_schema({**schema, **_definitions(root)})


def _given(schema: dict[str, Any]) -> list[Any] | None:
    """The values a ``const`` or ``enum`` that holds objects or arrays allows (None: one of
    scalars, which hypothesis-jsonschema draws)."""
    if "const" in schema:
        values = [schema["const"]]
    elif isinstance(schema.get("enum"), list) and schema["enum"]:
        values = schema["enum"]
    else:
        return None
    return values if any(isinstance(v, dict | list) for v in values) else None


def _object(
    schema: dict[str, Any], root: dict[str, Any], refs: tuple[str, ...]
) -> SearchStrategy[Any]:
    """Objects of ``schema``: its ``allOf`` folded in, one branch of an ``if`` or an
    ``anyOf``/``oneOf`` at a time; members from ``properties`` (the required ones always),
    then from ``patternProperties`` and ``additionalProperties``, then those a member drawn
    depends on. What is not drawn here (``not``, an ``else`` that needs the ``if`` to fail,
    members of two ``allOf`` members that clash) is left to the filter of
    :func:`valid_arguments`."""
    from hypothesis import strategies as st

    schema = _folded(schema, root, refs)
    deeper = (*refs, "")
    branches = _branches(schema)
    if branches:
        return _one_of(branches, root, deeper)
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = [n for n in schema.get("required") or [] if isinstance(n, str)]
    drawn = {n: _strategy(_member(schema, n), root, deeper) for n in required}
    optional = {}
    for name, sub in properties.items():
        if name not in drawn:
            with contextlib.suppress(_TooDeep):  # past the limits: left out
                optional[name] = _strategy(sub, root, deeper)
    objects = _with_more_members(
        st.fixed_dictionaries(drawn, optional=optional), schema, root, deeper
    )
    return _with_dependents(objects, schema, {**optional, **drawn}, root, deeper)


def _member(schema: dict[str, Any], name: str) -> Any:
    """The schema a member ``name`` of ``schema``'s objects is drawn from: its property,
    else the first ``patternProperties`` entry that matches it, else ``additionalProperties``."""
    properties = schema.get("properties")
    if isinstance(properties, dict) and name in properties:
        return properties[name]
    patterns = schema.get("patternProperties")
    for pattern, sub in patterns.items() if isinstance(patterns, dict) else ():
        with contextlib.suppress(Exception):  # a pattern that cannot be read matches nothing
            if search(pattern, name) is True:
                return sub
    additional = schema.get("additionalProperties", {})
    return additional if isinstance(additional, dict | bool) else {}


def _folded(schema: dict[str, Any], root: dict[str, Any], refs: tuple[str, ...]) -> dict[str, Any]:
    """``schema`` with the members of its ``allOf`` (nested ones, and ``$ref``s followed)
    said in it, as one schema a value is drawn from; a member that says something another
    already says otherwise stays in ``allOf``, to the filter."""
    pending = schema.get("allOf")
    if not isinstance(pending, list):
        return schema
    folded = {key: value for key, value in schema.items() if key != "allOf"}
    left: list[Any] = []
    pending = list(pending)
    for _ in range(MAX_FOLDED):
        if not pending:
            break
        member = pending.pop(0)
        target = _followed(member, root, refs)
        if not isinstance(target, dict):
            left.append(member)
            continue
        inner = target.get("allOf")
        if isinstance(inner, list):
            pending += inner
            target = {key: value for key, value in target.items() if key != "allOf"}
        merged = _merged(folded, target)
        if merged is None:
            left.append(target)
        else:
            folded = merged
    left += pending
    if left:
        folded["allOf"] = left
    return folded


def _followed(member: Any, root: dict[str, Any], refs: tuple[str, ...]) -> Any:
    """``member`` with its ``$ref`` followed (as long as ``refs`` allow), else None."""
    for _ in range(MAX_REF_EXPANSIONS):
        ref = member.get("$ref") if isinstance(member, dict) else None
        if not isinstance(ref, str):
            return member
        target = local_target(root, ref)
        if not isinstance(target, dict) or refs.count(ref) >= MAX_REF_EXPANSIONS:
            return None
        rest = {key: value for key, value in member.items() if key != "$ref"}
        member = _merged(target, rest) if rest else target
    return None


_ANNOTATIONS = ("title", "description", "$comment", "examples", "default", "$defs", "definitions")


def _merged(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any] | None:
    """One schema that says what ``a`` and ``b`` say, as far as drawing goes (the filter
    applies both exactly); None when they say one keyword differently in a way not merged
    here."""
    out = dict(a)
    for key, value in b.items():
        mine = out.get(key)
        if key in ("properties", "patternProperties") and isinstance(value, dict):
            if not isinstance(mine, dict):
                mine = {}
            out[key] = {
                **mine,
                **{n: _both(mine[n], s) if n in mine else s for n, s in value.items()},
            }
        elif key == "required" and isinstance(value, list) and isinstance(mine, list):
            out[key] = list(dict.fromkeys([*mine, *value]))
        elif key in ("minProperties", "maxProperties") and as_count(value) is not None:
            if as_count(mine) is None:
                out[key] = value
            else:
                out[key] = max(mine, value) if key == "minProperties" else min(mine, value)
        elif key not in out or mine == value or key in _ANNOTATIONS:
            out.setdefault(key, value)
        else:
            return None
    return out


def _both(a: Any, b: Any) -> Any:
    """A schema of the values of both ``a`` and ``b``."""
    if a is True or a == {}:
        return b
    if b is True or b == {}:
        return a
    merged = _merged(a, b) if isinstance(a, dict) and isinstance(b, dict) else None
    return merged if merged is not None else {"allOf": [a, b]}


def _branches(schema: dict[str, Any]) -> list[dict[str, Any]] | None:
    """``schema`` as alternatives, each drawn on its own: an ``if`` that holds (with its
    ``then``) or not (the ``else``: a value that meets the ``if`` is the filter's), each
    member of an ``anyOf``/``oneOf`` with the rest; None when it has none."""
    condition = schema.get("if")
    if "if" in schema and ("then" in schema or "else" in schema):
        base = {k: v for k, v in schema.items() if k not in ("if", "then", "else")}
        yes = [condition, schema.get("then", True)]
        no = [schema.get("else", True)]
        ways = [yes] if condition is True else [no] if condition is False else [yes, no]
        return [_with_all_of(base, parts) for parts in ways]
    for key in ("anyOf", "oneOf"):
        members = schema.get(key)
        if isinstance(members, list) and members:
            base = {k: v for k, v in schema.items() if k != key}
            return [_with_all_of(base, [member]) for member in members]
    return None


def _with_all_of(schema: dict[str, Any], parts: list[Any]) -> dict[str, Any]:
    """``schema`` that ``parts`` apply to too (folded in when it is drawn)."""
    parts = [p for p in parts if p is not True]
    return {**schema, "allOf": [*schema.get("allOf", []), *parts]} if parts else schema


_ANY_VALUE_TEXT = 10


def _with_more_members(
    objects: SearchStrategy[dict[str, Any]],
    schema: dict[str, Any],
    root: dict[str, Any],
    refs: tuple[str, ...],
) -> SearchStrategy[dict[str, Any]]:
    """``objects`` with members beyond ``properties``: from ``patternProperties`` and
    ``additionalProperties``, keys from ``propertyNames``; as many as ``minProperties`` asks
    and — when the schema says what such members are — up to three more, at most
    ``maxProperties``."""
    from hypothesis import strategies as st

    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    patterns = schema.get("patternProperties")
    patterns = patterns if isinstance(patterns, dict) else {}
    additional = schema.get("additionalProperties", True)
    names = schema.get("propertyNames", True)
    least = as_count(schema.get("minProperties")) or 0
    most = as_count(schema.get("maxProperties"))
    said = bool(patterns) or (isinstance(additional, dict) and additional != {})
    if names is False or not (said or least):
        return objects
    sources = []
    for pattern, member in patterns.items():
        key: dict[str, Any] = {"type": "string", "pattern": pattern}
        if isinstance(names, dict):
            key = {"type": "string", "allOf": [{"pattern": pattern}, names]}
        with contextlib.suppress(_TooDeep):
            sources.append(st.tuples(_strategy(key, root, refs), _strategy(member, root, refs)))
    if additional is not False:
        keys = (
            _strategy({**names, "type": "string"}, root, refs)
            if isinstance(names, dict)
            else st.text(max_size=_ANY_VALUE_TEXT)
        )
        with contextlib.suppress(_TooDeep):
            values = (
                _strategy(additional, root, refs)
                if isinstance(additional, dict) and additional != {}
                else st.one_of(
                    st.none(), st.booleans(), st.integers(), st.text(max_size=_ANY_VALUE_TEXT)
                )
            )
            sources.append(st.tuples(keys, values))
    if not sources:
        return objects
    pairs = st.one_of(sources).filter(lambda pair: pair[0] not in properties)

    @st.composite
    def more(draw: Callable[[SearchStrategy[Any]], Any]) -> dict[str, Any]:
        value: dict[str, Any] = draw(objects)
        low = max(0, least - len(value))
        high = low + 3 if said else low
        if most is not None:
            high = min(high, most - len(value))
        if high < low:
            return value  # too many members already: the filter refuses it
        extra = draw(st.lists(pairs, min_size=low, max_size=high, unique_by=lambda p: p[0]))
        for name, member in extra:
            value.setdefault(name, member)
        return value

    return more()


def _may_be_object(schema: dict[str, Any], root: dict[str, Any]) -> bool:
    """Whether hypothesis-jsonschema finds objects among ``schema``'s values (it would
    draw them itself, and fail)."""
    try:
        return not _from_schema({**schema, "type": "object", **_definitions(root)}).is_empty
    except (ValueError, TypeError, KeyError, RecursionError):
        return False


def _with_dependents(
    objects: SearchStrategy[dict[str, Any]],
    schema: dict[str, Any],
    members: dict[str, SearchStrategy[Any]],
    root: dict[str, Any],
    refs: tuple[str, ...],
) -> SearchStrategy[dict[str, Any]]:
    """``objects`` with the members a drawn member needs (``dependencies``, as
    ``dependentRequired`` is said in Draft 7) drawn too."""
    from hypothesis import strategies as st

    dependencies = schema.get("dependencies")
    needs = {
        name: [n for n in names if isinstance(n, str)]
        for name, names in (dependencies.items() if isinstance(dependencies, dict) else ())
        if isinstance(names, list)
    }
    if not needs:
        return objects
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    members = dict(members)
    for name in {n for names in needs.values() for n in names} - members.keys():
        with contextlib.suppress(_TooDeep):  # left out: the filter refuses what lacks it
            members[name] = _strategy(properties.get(name, {}), root, refs)

    @st.composite
    def completed(draw: Callable[[SearchStrategy[Any]], Any]) -> dict[str, Any]:
        value: dict[str, Any] = draw(objects)
        pending = [name for name in value if name in needs]
        while pending:
            for name in needs[pending.pop()]:
                if name not in value and name in members:
                    value[name] = draw(members[name])
                    if name in needs:
                        pending.append(name)
        return value

    return completed()


def _array(
    schema: dict[str, Any], root: dict[str, Any], refs: tuple[str, ...]
) -> SearchStrategy[Any]:
    """Arrays of ``schema`` in Draft 7's words: its ``allOf`` folded in and one branch of an
    ``if`` or an ``anyOf``/``oneOf`` at a time, as for objects; ``items`` one schema for every
    item, or a tuple's list with ``additionalItems`` for the items after it; ``minContains``
    (1 by default) of them drawn from ``contains``. The rest (``not``, ``uniqueItems`` across
    a tuple or ``contains``) is left to the filter of :func:`valid_arguments`."""
    from hypothesis import strategies as st

    schema = _folded(schema, root, refs)
    deeper = (*refs, "")
    branches = _branches(schema)
    if branches:
        return _one_of(branches, root, deeper)
    low = as_count(schema.get("minItems")) or 0
    high = as_count(schema.get("maxItems"))
    items = schema.get("items", True)
    if isinstance(items, list):
        return _tuple(items, schema.get("additionalItems", True), low, high, root, deeper)
    try:
        each = _strategy(items, root, deeper)
    except _TooDeep:
        if low > 0:
            raise
        return st.just([])
    if each.is_empty:  # no item fits: only [] does, if anything
        return st.just([]) if low == 0 else each
    least = as_count(schema.get("minContains"))
    hits = 0 if "contains" not in schema else 1 if least is None else least
    if hits and (high is None or hits <= high):
        contained = schema["contains"]
        if isinstance(contained, dict) and isinstance(items, dict) and "$ref" not in items:
            contained = {**items, **contained}  # a value of both, as far as a draw can tell
        with contextlib.suppress(_TooDeep):
            hit = _strategy(contained, root, deeper)
            if not hit.is_empty:
                return st.builds(
                    list.__add__,
                    st.lists(hit, min_size=hits, max_size=hits),
                    st.lists(
                        each,
                        min_size=max(0, low - hits),
                        max_size=high - hits if high is not None else max(5, low - hits),
                    ),
                )
    unique = _json_text if schema.get("uniqueItems") is True else None
    return st.lists(
        each, min_size=low, max_size=high if high is not None else max(5, low), unique_by=unique
    )


def _json_text(value: Any) -> str:
    """``value`` as one JSON text per value (keys sorted), to tell items apart by."""
    return json.dumps(value, sort_keys=True)


def _tuple(
    prefix: list[Any],
    rest: Any,
    low: int,
    high: int | None,
    root: dict[str, Any],
    refs: tuple[str, ...],
) -> SearchStrategy[list[Any]]:
    """A tuple's arrays: the first items from ``prefix`` (as many as ``minItems`` asks, or
    more), then — after the whole prefix — items of ``rest`` (``additionalItems``)."""
    from hypothesis import strategies as st

    heads = []  # the prefix as far as it can be drawn: an item nothing fits ends it
    for position, item in enumerate(prefix):
        try:
            head = _strategy(item, root, refs)
        except _TooDeep:
            if position < low:
                raise
            break
        if head.is_empty:
            break
        heads.append(head)
    n = len(heads)
    more = None
    if len(heads) == len(prefix) and (high is None or high > n):
        with contextlib.suppress(_TooDeep):
            extra = _strategy(rest, root, refs)
            if not extra.is_empty:
                more = st.lists(
                    extra,
                    min_size=max(0, low - n),
                    max_size=high - n if high is not None else max(3, low - n),
                )
    shortest, longest = min(low, n), n if high is None else min(n, high)
    if shortest > longest or (low > n and more is None):
        return st.tuples(*heads).map(list)  # nothing fits: the filter says so
    shapes = []
    for length in range(shortest, longest + 1):
        head = st.tuples(*heads[:length]).map(list)
        shapes.append(
            st.builds(list.__add__, head, more) if length == n and more is not None else head
        )
    return st.one_of(shapes)


def _dependent_schemas(schema: dict[str, Any]) -> bool:
    """Whether ``schema`` has ``dependencies`` that are schemas (``dependentSchemas``)."""
    dependencies = schema.get("dependencies")
    return isinstance(dependencies, dict) and any(
        isinstance(v, dict | bool) for v in dependencies.values()
    )


def _one_of(schemas: list[Any], root: dict[str, Any], refs: tuple[str, ...]) -> SearchStrategy[Any]:
    """Values of any of ``schemas``; those past the limits are left out (all of them: too
    deep)."""
    from hypothesis import strategies as st

    branches = []
    for schema in schemas:
        with contextlib.suppress(_TooDeep):
            branches.append(_strategy(schema, root, refs))
    if not branches:
        raise _TooDeep
    return st.one_of(branches)


def _definitions(root: dict[str, Any]) -> dict[str, Any]:
    """The root's ``$defs`` (and ``definitions``), for a part of it drawn on its own."""
    return {k: root[k] for k in ("$defs", "definitions") if isinstance(root.get(k), dict)}


def near_misses(tool: Tool) -> SearchStrategy[NearMiss] | None:
    """Near-miss arguments for ``tool``, or None when its schema leaves nothing to miss
    (an object that takes anything)."""
    require_hypothesis()
    from hypothesis import strategies as st

    mistakes = list(_mistakes(tool.input_schema, ()))
    if not mistakes:
        return None
    base = valid_arguments(tool)

    def made(pair: tuple[dict[str, Any], _Mistake]) -> NearMiss:
        arguments, mistake = pair
        return NearMiss(_apply(arguments, mistake), mistake.what)

    return (
        st.tuples(base, st.sampled_from(mistakes))
        .map(made)
        .filter(lambda miss: not _fits(tool, miss.arguments))
    )


def _apply(arguments: dict[str, Any], mistake: _Mistake) -> dict[str, Any]:
    """``arguments`` with the value at ``mistake.path`` replaced (parents made as needed)."""
    changed = copy.deepcopy(arguments)
    *parents, last = mistake.path
    node: Any = changed
    for key in parents:
        if not isinstance(node, dict):
            return changed
        node = node.setdefault(key, {})
    if not isinstance(node, dict):
        return changed
    new = mistake.apply(node.get(last, _ABSENT))
    if new is _ABSENT:
        node.pop(last, None)
    else:
        node[last] = new
    return changed


def _pointer(path: JsonPath) -> str:
    return "".join(f"/{p}" for p in path) or "/"


def _mistakes(schema: Any, path: JsonPath, depth: int = 0) -> list[_Mistake]:
    """The ways to get an object of ``schema`` wrong by one step, its members' included."""
    if not isinstance(schema, dict) or depth > 3:
        return []
    found: list[_Mistake] = []
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    for name in schema.get("required") or []:
        if isinstance(name, str):
            found.append(
                _Mistake(
                    (*path, name),
                    f"{_pointer((*path, name))}: left out (required)",
                    lambda _old: _ABSENT,
                )
            )
    if schema.get("additionalProperties") is False:
        extra = "unexpected_parameter"
        while extra in properties:
            extra += "_"
        found.append(
            _Mistake(
                (*path, extra), f"{_pointer(path)}: an unknown parameter {extra!r}", lambda _old: 1
            )
        )
    for name, sub in properties.items():
        if isinstance(name, str) and isinstance(sub, dict):
            found += _value_mistakes(sub, (*path, name), depth)
    return found


def _value_mistakes(schema: dict[str, Any], path: JsonPath, depth: int) -> list[_Mistake]:
    """One-step-wrong values for a parameter of ``schema`` at ``path``."""
    where = _pointer(path)
    found: list[_Mistake] = []

    def to(value: Any, what: str) -> None:
        found.append(_Mistake(path, f"{where}: {what}", _replace_with(value)))

    kinds = schema.get("type")
    kinds = set(kinds) if isinstance(kinds, list) else {kinds} if kinds else set()
    if kinds and not kinds & {"string"}:
        to("1", 'the string "1" (wrong type)')
    if kinds and not kinds & {"number", "integer"}:
        to(1, "the number 1 (wrong type)")
    if kinds and "boolean" not in kinds and "string" in kinds:
        to(True, "true (wrong type)")
    if "integer" in kinds and "number" not in kinds:
        to(1.5, "1.5 (not an integer)")
    for key, step in (("minimum", -1), ("maximum", 1)):
        bound = schema.get(key)
        if isinstance(bound, int | float) and not isinstance(bound, bool):
            to(bound + step, f"{bound + step} (one past {key} {bound})")
    for key in ("exclusiveMinimum", "exclusiveMaximum"):
        bound = schema.get(key)
        if isinstance(bound, int | float) and not isinstance(bound, bool):
            to(bound, f"{bound} (equal to {key})")
    low, high = schema.get("minLength"), schema.get("maxLength")
    if isinstance(low, int) and low > 0:
        to("a" * (low - 1), f"a string of {low - 1} characters (minLength {low})")
    if isinstance(high, int) and high < 10_000:
        to("a" * (high + 1), f"a string of {high + 1} characters (maxLength {high})")
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        outside = _outside(enum)
        if outside is not None:
            to(outside, f"{json.dumps(outside)} (not in enum)")
    if "const" in schema:
        outside = _outside([schema["const"]])
        if outside is not None:
            to(outside, f"{json.dumps(outside)} (not the const)")
    if isinstance(schema.get("pattern"), str):
        for text in ("", " ", "!", "a b"):
            to(text, f"{json.dumps(text)} (does not match the pattern)")
    formats = {
        "email": "not-an-email",
        "date": "2024-13-45",
        "date-time": "yesterday",
        "time": "25:61",
        "uri": "not a uri",
        "uuid": "not-a-uuid",
        "duration": "an hour",
    }
    if schema.get("format") in formats:
        to(formats[schema["format"]], f"not a {schema['format']}")
    items = schema.get("minItems")
    if isinstance(items, int) and items > 0:
        found.append(
            _Mistake(
                path,
                f"{where}: {items - 1} items (minItems {items})",
                _shorten_to(items - 1),
            )
        )
    if "object" in kinds or "properties" in schema:
        found += _mistakes(schema, path, depth + 1)
    return found


def _replace_with(value: Any) -> Callable[[Any], Any]:
    """A mistake that puts ``value`` (a fresh copy each time) where the valid one was."""
    return lambda _old: copy.deepcopy(value)


def _shorten_to(length: int) -> Callable[[Any], Any]:
    """A mistake that keeps only the first ``length`` items of a list."""
    return lambda old: (old if isinstance(old, list) else [])[:length]


def _outside(values: list[Any]) -> Any:
    """A value of the same kind as the first, not among ``values`` (None: none found)."""
    first = values[0]
    if isinstance(first, str):
        candidates: list[Any] = [first + "_x", first.upper() + "!", "other"]
    elif isinstance(first, bool):
        candidates = [not first]
    elif isinstance(first, int | float):
        candidates = [max(v for v in values if isinstance(v, int | float)) + 1]
    else:
        candidates = ["other", 0]
    return next((c for c in candidates if c not in values), None)
