"""JSON Schemas a page wrote: compiled and walked without the harness acting for the page.

A tool's ``inputSchema`` and ``outputSchema``, and the ``requestedSchema`` of a question a
tool asks, are page data. Left to itself, jsonschema resolves a ``$ref`` to ``http://``
or ``file://`` by fetching it — from the harness's machine, inside the event loop, with
no timeout: a request the page chose, a local file's contents in a validation message,
and every session frozen behind a server that never answers. So:

- every validator the harness makes of a schema comes from :func:`validator_for`, whose
  registry holds the JSON Schema meta-schemas and nothing else, and never retrieves: a
  reference outside the schema document stays unresolved (:class:`Unresolvable`);
- :func:`unresolvable_references` finds such references before anything runs, so a tool
  is refused with a clear message and the catalog warns;
- :func:`subschemas` walks a schema keyword by keyword (property *names* are never
  mistaken for keywords), for every duty that reads schemas (redaction, framing); the
  keywords that hold subschemas are named once, for every walk of a schema (the QA tools'
  too): :data:`SUBSCHEMA_KEYWORDS`, :data:`SUBSCHEMA_LISTS`, :data:`SUBSCHEMA_MAPS`;
- :func:`resolve_references` says where each ``$ref`` / ``$dynamicRef`` leads as the
  validator reads it (``$id`` sets the base URI of what is inside it, an ``$anchor``
  belongs to its own resource), so a duty that follows references (redaction's walk)
  looks at the very subschema validation applies; one it cannot read for certain is
  reported, never guessed;
- :func:`keyword_locations` says where in the schema a validation error's keyword is
  (jsonschema's own path leaves out the ``$ref`` steps it followed);
- :func:`compiled_validator_for` gives a compiled (``jsonschema-rs``) validator for the
  schemas whose every keyword means the same to it as to jsonschema — a fast *yes* for
  a hot path; a *no* (or a schema outside that set) is left to :func:`validator_for`;
- a check takes bounded time, whatever the page wrote (:mod:`harness.schemas.budget`): inside
  :func:`within_budget`, every validator from :func:`validator_for` stops at one deadline
  (:class:`SchemaTimeout`), and the compiled validator is given only values whose worst-case
  work is bounded (:data:`FAST_PATH_WORK`): it cannot be stopped;
- a page's regular expressions are ECMAScript's, matched as ECMAScript matches them, each
  match stopped at its budget (:mod:`harness.schemas.patterns`): every ``pattern``, every
  ``patternProperties`` key, whatever reads them (a tool's schemas, a question's fields).

May import: ``harness.models`` (the tools whose patterns it reads, the catalog's warnings
about them), nothing else of the harness (it sits with ``models`` at the bottom).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple
from urllib.parse import unquote, urldefrag, urljoin

import jsonschema_rs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator
from jsonschema_specifications import REGISTRY as _SPECIFICATIONS  # type: ignore[import-untyped]
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012, DynamicAnchor
from referencing.jsonschema import SchemaRegistry as _SchemaRegistry

from harness.schemas.budget import (
    SCHEMA_BUDGET_S,
    SchemaTimeout,
    bounded,
    off_loop,
    on_time,
    spent,
    time_left,
    unique_items,
    within_budget,
)

__all__ = [
    "FAST_PATH_WORK",
    "NO_RETRIEVAL",
    "SCHEMA_BUDGET_S",
    "SUBSCHEMA_KEYWORDS",
    "SUBSCHEMA_LISTS",
    "SUBSCHEMA_MAPS",
    "CompiledValidator",
    "Followed",
    "References",
    "SchemaTimeout",
    "TooMuchWork",
    "Unresolvable",
    "at_pointer",
    "compiled_validator_for",
    "json_pointer",
    "keyword_locations",
    "local_target",
    "off_loop",
    "on_time",
    "resolve_references",
    "spent",
    "subschemas",
    "time_left",
    "unique_items",
    "unresolvable_references",
    "validator_for",
    "within_budget",
]

NO_RETRIEVAL: _SchemaRegistry = Registry()
"""A registry that never retrieves: jsonschema adds the meta-schemas, and that is all."""

_KNOWN: Any = _SPECIFICATIONS.combine(NO_RETRIEVAL)  # what validation resolves besides the schema
_KNOWN_URIS = frozenset(_KNOWN)  # the meta-schemas' URIs

SUBSCHEMA_KEYWORDS: tuple[str, ...] = (
    "additionalProperties",
    "unevaluatedProperties",
    "items",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
)
"""The keywords whose value is one subschema (``additionalItems``: as drafts before 2020-12
write it, beside ``items``' tuple form)."""
SUBSCHEMA_LISTS: tuple[str, ...] = ("allOf", "anyOf", "oneOf", "prefixItems", "items")
"""The keywords whose value lists subschemas (``items``: its tuple form, before 2020-12)."""
SUBSCHEMA_MAPS: tuple[str, ...] = (
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
)
"""The keywords whose value maps names to subschemas (``definitions``: draft 7's ``$defs``)."""
_REFERENCES = ("$ref", "$dynamicRef")


def json_pointer(ref: str) -> tuple[str, ...] | None:
    """The tokens of the JSON pointer a local ``$ref`` holds (``()`` for ``#``); None for a
    reference that holds none (``#anchor``, another document).

    Read as validation reads it (:mod:`referencing`): a fragment that starts with ``/`` is
    a pointer, percent-decoded before it is split (RFC 6901 §6), then ``~1`` in a name is
    ``/`` and ``~0`` is ``~``. So ``#/$defs/a~1b`` names the definition ``a/b``, and
    ``#/$defs/a%2Fb`` the member ``b`` of the definition ``a``."""
    if not ref.startswith("#"):
        return None
    fragment = ref[1:]
    if not fragment:
        return ()
    if not fragment.startswith("/"):
        return None
    return tuple(
        token.replace("~1", "/").replace("~0", "~") for token in unquote(fragment[1:]).split("/")
    )


def local_target(root: Any, ref: str) -> Any:
    """What a local ``$ref`` (``#``, ``#/json/pointer``, ``#anchor``) in ``root`` points at;
    None when it leads nowhere inside ``root``. A pointer is read as :func:`json_pointer`
    reads it.

    Read against ``root`` alone: right for a schema without ``$id`` (the compiled
    validator's subset), not for one that embeds resources. What decides what is
    withheld follows :func:`resolve_references` instead."""
    if not ref.startswith("#"):
        return None
    tokens = json_pointer(ref)
    if tokens is None:
        return _anchor(root, unquote(ref[1:]))
    return at_pointer(root, tokens)


def at_pointer(root: Any, tokens: Sequence[str]) -> Any:
    """What the JSON pointer ``tokens`` (:func:`json_pointer`'s) leads to in ``root``; None
    where it leads nowhere."""
    node: Any = root
    for token in tokens:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdecimal() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _anchor(root: Any, name: str) -> Any:
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        if name in (node.get("$anchor"), node.get("$dynamicAnchor")):
            return node
        stack.extend(subschemas(node))
    return None


def subschemas(schema: dict[str, Any]) -> Iterator[Any]:
    """The schemas directly inside ``schema`` (values only; may include non-dicts), through
    the keywords that hold them (:data:`SUBSCHEMA_MAPS`, :data:`SUBSCHEMA_KEYWORDS`,
    :data:`SUBSCHEMA_LISTS`)."""
    for keyword in SUBSCHEMA_MAPS:
        members = schema.get(keyword)
        if isinstance(members, dict):
            yield from members.values()
    for keyword in SUBSCHEMA_KEYWORDS:
        yield schema.get(keyword)
    for keyword in SUBSCHEMA_LISTS:
        members = schema.get(keyword)
        if isinstance(members, list):
            yield from members


def validator_for(
    schema: Any,
    cls: type[Validator] = Draft202012Validator,
    *,
    format_checker: Any = None,
) -> Validator:
    """A validator for a page's ``schema`` that never resolves a reference outside it.

    ``cls`` may be an extension of Draft 2020-12 (the harness's own ``multipleOf``).
    Validation that reaches an outside reference raises :class:`Unresolvable`; inside
    :func:`within_budget`, one that runs past its budget raises :class:`SchemaTimeout`.
    """
    checking: type[Validator] = bounded(cls)
    return checking(schema, registry=NO_RETRIEVAL, format_checker=format_checker)


# Keywords jsonschema-rs and jsonschema read alike (tests/test_schemas.py holds them to it).
# Left out, so such schemas keep the reference validator: `pattern`/`patternProperties`
# (a regex dialect of its own), `format`, `multipleOf` (float arithmetic), `uniqueItems`,
# `unevaluated*`, `$id`/`$anchor`/`$dynamic*` (base URIs) and anything unknown.
_SAME_MEANING = frozenset(
    {
        "type", "enum", "const", "properties", "additionalProperties", "required",
        "minProperties", "maxProperties", "dependentRequired", "dependentSchemas",
        "propertyNames", "items", "prefixItems", "minItems", "maxItems", "contains",
        "minContains", "maxContains", "minLength", "maxLength", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum", "allOf", "anyOf", "oneOf", "not", "if",
        "then", "else", "$ref", "$defs", "definitions", "title", "description", "default",
        "examples", "readOnly", "writeOnly", "deprecated", "$comment",
    }
)  # fmt: skip
_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


def _same_meaning(schema: Any) -> bool:
    """Whether jsonschema-rs reads every schema object in ``schema`` as jsonschema does."""
    stack = [schema]
    while stack:
        node = stack.pop()
        on_time()  # a page's schema can be megabytes: inside a budget, the walk keeps it
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            return False
        for keyword, value in node.items():
            if keyword.startswith("x-") or keyword in _SAME_MEANING:
                continue
            if keyword == "$schema" and value == _DRAFT_2020_12:
                continue
            return False
        ref = node.get("$ref")
        if ref is not None and not (isinstance(ref, str) and (ref == "#" or ref[:2] == "#/")):
            return False  # only JSON pointers inside the document
        if isinstance(node.get("items"), list):
            return False  # the tuple form of drafts before 2020-12
        stack.extend(child for child in subschemas(node) if child is not None)
    return not _loops_in_place(schema)


_IN_PLACE = ("allOf", "anyOf", "oneOf", "not", "if", "then", "else")  # the same value again


def _loops_in_place(root: Any) -> bool:
    """Whether a ``$ref`` leads back to itself without descending into the value (``{"$ref":
    "#"}`` at the root): jsonschema recurses until it fails, which the compiled validator
    does not; such schemas keep jsonschema's answer (no fit)."""

    def in_place(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
        ref = node.get("$ref")
        targets = [local_target(root, ref)] if isinstance(ref, str) else []
        for keyword in _IN_PLACE:
            value = node.get(keyword)
            targets += value if isinstance(value, list) else [value]
        return iter([t for t in targets if isinstance(t, dict)])

    done: set[int] = set()
    for start in _every_schema(root):
        if id(start) in done:
            continue
        # Depth-first with an explicit path: a node met again on the path is a loop.
        path: set[int] = {id(start)}
        stack: list[tuple[dict[str, Any], Iterator[Any]]] = [(start, in_place(start))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:  # every way on from `node` explored: no loop through it
                stack.pop()
                path.discard(id(node))
                done.add(id(node))
                continue
            if id(child) in done:
                continue
            if id(child) in path:
                return True
            path.add(id(child))
            stack.append((child, in_place(child)))
    return False


def _every_schema(root: Any) -> Iterator[dict[str, Any]]:
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if isinstance(node, dict) and id(node) not in seen:
            on_time()
            seen.add(id(node))
            yield node
            stack.extend(subschemas(node))


def compiled_validator_for(schema: Any) -> CompiledValidator | None:
    """A compiled validator (``jsonschema-rs``, offline: it never retrieves) for ``schema``,
    or None when the schema uses a keyword the two may read differently, or it does not
    compile. Its ``is_valid`` may raise for a value Rust cannot hold (a lone surrogate), or
    one it could take too long on (:class:`TooMuchWork`): the caller then asks
    :func:`validator_for`. Trust only its *yes*."""
    if not _same_meaning(schema):
        return None
    try:
        return CompiledValidator(schema, jsonschema_rs.Draft202012Validator(schema, offline=True))
    except Exception:  # a malformed schema: the reference validator says what it makes of it
        return None


FAST_PATH_WORK = 10_000_000
"""The most subschema evaluations (at worst, :meth:`CompiledValidator.work`) the compiled
validator is given one value for: about a tenth of a second. It cannot be interrupted, and
it branches as jsonschema does (``allOf`` of two ``$ref``s, 30 deep, takes it minutes), so
a schema and value that could take longer are left to jsonschema, which keeps a budget."""


class TooMuchWork(Exception):
    """The compiled validator could take too long on this value (:data:`FAST_PATH_WORK`)."""


class CompiledValidator:
    """``jsonschema-rs``'s validator of one schema, given only values it is done with soon."""

    def __init__(self, schema: Any, compiled: Any) -> None:
        self.schema = schema
        self._compiled = compiled
        self._evaluations: dict[tuple[int, int], int] = {}

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` fits (trust only a *yes*); :class:`TooMuchWork` when checking
        it could take more than :data:`FAST_PATH_WORK` evaluations."""
        if self.work(instance) > FAST_PATH_WORK:
            raise TooMuchWork
        return bool(self._compiled.is_valid(instance))

    def work(self, instance: Any) -> int:
        """How many (subschema, value) evaluations checking ``instance`` takes at most
        (counting stops past :data:`FAST_PATH_WORK`): for each depth, the values there times
        the ways the schema reaches that depth (:meth:`_reach`)."""
        counts = _values_by_depth(instance)
        if counts is None:
            return FAST_PATH_WORK + 1
        total = 0
        try:
            for depth, count in enumerate(counts):
                total += count * self._reach(self.schema, depth)
                if total > FAST_PATH_WORK:
                    break
        except RecursionError:  # a $ref chain deeper than Python's stack: no estimate
            return FAST_PATH_WORK + 1
        return total

    def _reach(self, node: Any, depth: int) -> int:
        """The evaluations ``node`` leads to on one value ``depth`` levels below the one
        it is applied to (at most :data:`FAST_PATH_WORK` + 1). In place, every branch
        counts (``allOf``, ``anyOf``, ``$ref``, ``if``/``then``/``else``, ``not``,
        ``dependentSchemas``); one level down, a member's value meets one of ``properties``
        and ``additionalProperties`` (plus ``propertyNames`` on its key), an item one of
        ``prefixItems`` and ``items`` (plus ``contains``)."""
        key = (id(node), depth)
        found = self._evaluations.get(key)
        if found is not None:
            return found
        total = 0
        if not isinstance(node, dict):
            total = 1 if depth == 0 else 0
        else:
            if depth == 0:
                total = 1 + sum(len(node[k]) for k in ("enum", "required") if _sized(node.get(k)))
            for child in _in_place(self.schema, node):
                total += self._reach(child, depth)
            if depth > 0:
                member = [*_members(node.get("properties")), node.get("additionalProperties")]
                item = [*_items(node.get("prefixItems")), node.get("items")]
                total += max(
                    self._most(member, depth - 1)
                    + self._most([node.get("propertyNames")], depth - 1),
                    self._most(item, depth - 1) + self._most([node.get("contains")], depth - 1),
                )
        total = min(total, FAST_PATH_WORK + 1)
        self._evaluations[key] = total
        return total

    def _most(self, nodes: list[Any], depth: int) -> int:
        return max((self._reach(n, depth) for n in nodes if n is not None), default=0)


def _sized(value: Any) -> bool:
    return isinstance(value, list | dict)


def _members(value: Any) -> list[Any]:
    return list(value.values()) if isinstance(value, dict) else []


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _in_place(root: Any, node: dict[str, Any]) -> Iterator[Any]:
    """The subschemas applied to the very value ``node`` is (the compiled validator's keywords)."""
    ref = node.get("$ref")
    if isinstance(ref, str):
        yield local_target(root, ref)
    for keyword in ("allOf", "anyOf", "oneOf"):
        yield from _items(node.get(keyword))
    for keyword in ("not", "if", "then", "else"):
        if keyword in node:
            yield node[keyword]
    yield from _members(node.get("dependentSchemas"))


def _values_by_depth(instance: Any) -> list[int] | None:
    """How many values ``instance`` holds at each depth (itself at 0); None when there are
    more than :data:`FAST_PATH_WORK` (each costs at least one evaluation)."""
    counts: list[int] = []
    level = [instance]
    while level:
        counts.append(len(level))
        if sum(counts) > FAST_PATH_WORK:
            return None
        below: list[Any] = []
        for value in level:
            if isinstance(value, dict):
                below.extend(value.values())
            elif isinstance(value, list):
                below.extend(value)
        level = below
    return counts


def keyword_locations(root: Any, errors: Sequence[ValidationError]) -> list[tuple[str | int, ...]]:
    """Where in ``root`` (the schema the validator was made of: ``validator.schema``) the
    keyword each of ``errors`` failed on is.

    jsonschema's ``absolute_schema_path`` leaves out every ``$ref`` it followed: a
    ``required`` at ``/$defs/Shelf`` reached through ``/properties/shelves/items``'s
    ``$ref`` is at ``/properties/shelves/items/required`` there, a place that need not
    exist. An error carries the very subschema its keyword is in (the resolver hands out
    the schema's own objects, through ``$id`` and ``$anchor`` too), and that object is found
    in ``root``. A ``false`` subschema carries nothing to find: its error keeps
    jsonschema's path (the place of the ``$ref`` that led to it)."""
    places: dict[int, tuple[str | int, ...]] | None = None
    found = []
    for error in errors:
        path = tuple(error.absolute_schema_path)
        keyword, schema = error.validator, error.schema
        if not isinstance(keyword, str) or not isinstance(schema, dict):
            found.append(path)
            continue
        if places is None:
            places = _places(root)
        where = places.get(id(schema))
        if where is None:  # not an object of root (a meta-schema's): as jsonschema says
            found.append(path)
            continue
        # What follows the keyword in the path is inside it (a `false` under `properties`).
        last = len(path) - 1 - path[::-1].index(keyword) if keyword in path else len(path)
        found.append((*where, keyword, *path[last + 1 :]))
    return found


def _places(root: Any) -> dict[int, tuple[str | int, ...]]:
    """The JSON pointer (as tokens) of every object and array in ``root``, by identity."""
    places: dict[int, tuple[str | int, ...]] = {}
    # Iterative, not recursive: a page can nest a schema deeper than Python's stack.
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(root, ())]
    while stack:
        node, where = stack.pop()
        if id(node) in places:
            continue
        if isinstance(node, dict):
            places[id(node)] = where
            stack.extend((value, (*where, key)) for key, value in node.items())
        elif isinstance(node, list):
            places[id(node)] = where
            stack.extend((value, (*where, index)) for index, value in enumerate(node))
    return places


def unresolvable_references(schema: Any) -> list[str]:
    """Every ``$ref`` / ``$dynamicRef`` of ``schema`` that does not lead inside it.

    References are resolved the way validation resolves them (``$id`` changes the base
    URI, anchors and JSON pointers count), against a registry that never retrieves; the
    JSON Schema meta-schemas are the only documents known besides the schema itself.
    """
    if not isinstance(schema, dict):
        return []
    try:
        resolver: Any = _KNOWN.resolver_with_root(DRAFT202012.create_resource(schema))
    except Exception:  # a malformed $id: nothing can be resolved against it
        return [str(schema.get("$id"))]
    found: list[str] = []
    # Iterative, not recursive: a page can nest a schema deeper than Python's stack.
    stack: list[tuple[Any, Any]] = [(schema, resolver)]
    while stack:
        node, current = stack.pop()
        if not isinstance(node, dict):
            continue
        on_time()  # inside a budget (a schema's own checks), the walk keeps it
        if node is not schema and isinstance(node.get("$id"), str):
            try:
                current = current.in_subresource(DRAFT202012.create_resource(node))
            except Exception:
                found.append(str(node["$id"]))
                continue
        for keyword in _REFERENCES:
            ref = node.get(keyword)
            if isinstance(ref, str) and ref not in found:
                try:
                    current.lookup(ref)
                except Unresolvable:
                    found.append(ref)
                except Exception:  # a reference referencing cannot even parse
                    found.append(ref)
        stack.extend((child, current) for child in subschemas(node))
    return found


# -- where references lead ----------------------------------------------------------------


class Followed(NamedTuple):
    """Where the ``$ref`` / ``$dynamicRef`` of one schema object lead."""

    targets: tuple[Any, ...]
    """The subschemas they lead to (objects of the schema, or of a meta-schema)."""
    unresolved: tuple[str, ...]
    """Those that lead nowhere, or nowhere certain (see :func:`resolve_references`)."""


_NOWHERE = Followed((), ())
_TWO_SCOPES = "a subschema reached in two scopes"


class References:
    """Where the references of one schema lead, by schema object: made once per schema by
    :func:`resolve_references`, read by a walk that follows the schema alongside a value."""

    def __init__(self, followed: dict[int, Followed]) -> None:
        self._followed = followed  # by id() of the schema object that holds the references

    def of(self, node: dict[str, Any]) -> Followed:
        """Where ``node``'s references lead. A reference the resolution never reached (inside
        an ``$id`` it could not read) is unresolved: nothing is guessed."""
        found = self._followed.get(id(node))
        if found is not None:
            return found
        if "$ref" not in node and "$dynamicRef" not in node:  # the walk's common case
            return _NOWHERE
        refs = tuple(ref for keyword in _REFERENCES if isinstance(ref := node.get(keyword), str))
        return Followed((), refs) if refs else _NOWHERE


def resolve_references(schema: Any) -> References:
    """Where every ``$ref`` / ``$dynamicRef`` of ``schema`` leads, read as validation reads
    it (:func:`validator_for`: Draft 2020-12, a registry that never retrieves).

    Each schema object is read in its own scope: ``$id`` sets the base URI of what is
    inside it (``#/$defs/x`` under ``"$id": "urn:a"`` is urn:a's ``$defs``), and ``#tok``
    is the anchor ``tok`` of the resource the reference is written in. Each reference is
    looked up as jsonschema looks it up (:mod:`referencing`). It is *unresolved* when it
    leads nowhere (outside the schema, a pointer to nothing), and when where it leads is
    not certain: two resources with one URI, or one anchor twice in a resource (the
    registry keeps one of them, and which one depends on the order of lookups); a
    subschema reached in two scopes; a reference that lands on a ``$dynamicAnchor`` whose
    name more than one subschema bears, or that meets a meta-schema's (validation picks
    one by the path it took to get there).
    """
    if not isinstance(schema, dict):
        return References({})
    try:
        root = DRAFT202012.create_resource(schema)
        uri = root.id() or ""
        registry = _KNOWN.with_resource(uri, root)
    except Exception:  # a malformed $id: nothing can be resolved against it
        return References({id(schema): Followed((), (str(schema.get("$id")),))})
    resolution = _Resolution()
    resolution.read(schema, registry.resolver(base_uri=uri))
    if resolution.pending:  # looking references up needs the whole registry crawled
        claims: dict[Any, set[int]] = {}
        dynamic: Counter[str] = Counter()
        try:
            registry = registry.crawl()
            _claims(uri, root, claims, dynamic)
        except Exception:  # a subschema referencing cannot read (say, "$schema": 5)
            # Validation's own crawl fails the same way: only pointers into the root
            # resolve, and without a crawl no resource can take another's place.
            claims, dynamic = {}, Counter()
        resolution.follow_all(registry, claims, dynamic)
    return resolution.references()


def _claims(
    uri: str, root: Resource[Any], claims: dict[Any, set[int]], dynamic: Counter[str]
) -> None:
    """Which schema objects take each URI and each (URI, anchor) in the registry, crawled
    as :meth:`referencing.Registry.crawl` crawls (so a collision it hides is seen here);
    ``dynamic`` counts the ``$dynamicAnchor``s of each name."""
    claims.setdefault(uri, set()).add(id(root.contents))  # Registry.with_resource
    uncrawled = [(uri, root)]
    while uncrawled:
        uri, resource = uncrawled.pop()
        own = resource.id()
        if own is not None:
            uri = urljoin(uri, own)
            claims.setdefault(uri, set()).add(id(resource.contents))
        for anchor in resource.anchors():
            claims.setdefault((uri, anchor.name), set()).add(id(resource.contents))
            if isinstance(anchor, DynamicAnchor):
                dynamic[anchor.name] += 1
        uncrawled.extend((uri, each) for each in resource.subresources())


def _base_uri(resolver: Any) -> str:
    # referencing keeps a resolver's base URI to itself; it is all the scope a $ref is read in
    return str(resolver._base_uri)


class _Resolution:
    """The state of :func:`resolve_references`: each schema object read with the resolver
    of its scope, and the references still to look up."""

    def __init__(self) -> None:
        self.base: dict[int, str] = {}  # the base URI each schema object was read in
        self.targets: dict[int, list[Any]] = {}
        self.unresolved: dict[int, list[str]] = {}
        self.pending: list[tuple[dict[str, Any], str, str]] = []  # (holder, its base, ref)
        self.dynamic: list[tuple[dict[str, Any], str, str]] = []  # (holder, ref, anchor name)
        self.outside = False  # a reference led into a meta-schema

    def lost(self, node: dict[str, Any], what: str) -> None:
        self.unresolved.setdefault(id(node), []).append(what)

    def read(self, top: dict[str, Any], resolver: Any) -> None:
        """Read ``top`` and the subschemas inside it, each in its scope, as validation
        descends into them (iterative: a page can nest deeper than Python's stack)."""
        stack = [(top, resolver)]
        while stack:
            node, current = stack.pop()
            self.base[id(node)] = here = _base_uri(current)
            for keyword in _REFERENCES:
                ref = node.get(keyword)
                if isinstance(ref, str):
                    self.targets.setdefault(id(node), [])
                    self.pending.append((node, here, ref))
            for child in subschemas(node):
                if not isinstance(child, dict):
                    continue
                inner, base = current, here  # without an $id, the scope goes on inside
                if "$id" in child:
                    try:
                        inner = current.in_subresource(DRAFT202012.create_resource(child))
                        base = _base_uri(inner)
                    except Exception:  # a malformed $id: nothing inside it can be placed
                        self.lost(child, str(child.get("$id")))
                        continue
                seen = self.base.get(id(child))
                if seen is None:
                    stack.append((child, inner))
                elif seen != base:
                    self.lost(child, _TWO_SCOPES)

    def follow_all(self, registry: Any, claims: dict[Any, set[int]], dynamic: Counter[str]) -> None:
        """Look every reference up in ``registry`` (crawled), reading what they lead to;
        ``claims`` and ``dynamic`` are :func:`_claims`'. One that lands on a
        ``$dynamicAnchor`` is certain only when that anchor is the one of its name."""
        looked: dict[tuple[str, str], tuple[Any, str | None] | None] = {}  # one per scope
        while self.pending:
            node, base, ref = self.pending.pop()
            if (base, ref) not in looked:
                looked[base, ref] = self.look_up(registry.resolver(base_uri=base), ref, claims)
            found = looked[base, ref]
            if found is None:
                self.lost(node, ref)
                continue
            target, name = found
            self.targets[id(node)].append(target)
            if name is not None:
                self.dynamic.append((node, ref, name))
        for node, ref, name in self.dynamic:
            if self.outside or dynamic[name] > 1:
                self.lost(node, ref)

    def look_up(
        self, current: Any, ref: str, claims: dict[Any, set[int]]
    ) -> tuple[Any, str | None] | None:
        """What ``ref`` leads to from ``current``'s scope, as validation looks it up, and the
        name of the ``$dynamicAnchor`` it landed on; None when it leads nowhere certain."""
        base = _base_uri(current)
        try:
            resolved = current.lookup(ref)
            uri, fragment = (
                (base, ref[1:]) if ref.startswith("#") else urldefrag(urljoin(base, ref))
            )
        except Exception:  # Unresolvable, or a reference referencing cannot even parse
            return None
        named = bool(fragment) and not fragment.startswith("/")
        taken = len(claims.get(uri, ()))
        if taken > 1 or (uri in _KNOWN_URIS and taken):
            return None  # two resources with one URI
        if named and len(claims.get((uri, fragment), ())) > 1:
            return None  # one anchor twice in a resource
        self.outside = self.outside or uri in _KNOWN_URIS
        target = resolved.contents
        if not isinstance(target, dict):
            return target, None
        seen = self.base.get(id(target))
        if seen is None:
            self.read(target, resolved.resolver)
        elif seen != _base_uri(resolved.resolver):
            return None  # validation reads it in another scope than where it stands
        dynamic = named and target.get("$dynamicAnchor") == fragment
        return target, fragment if dynamic else None

    def references(self) -> References:
        """Where the references lead, once every one was looked up."""
        holders = self.targets.keys() | self.unresolved.keys()
        return References(
            {
                holder: Followed(
                    tuple(self.targets.get(holder, ())), tuple(self.unresolved.get(holder, ()))
                )
                for holder in holders
            }
        )
