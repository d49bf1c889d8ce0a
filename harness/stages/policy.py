"""Policy: rules over trust facts that let a call run, block it, or ask the user first.

A policy is a list of rules, read from a TOML, YAML or JSON file::

    default = "allow"                         # optional: before-call effect when no rule matches

    [[rules]]
    name = "block-open-world-to-external"     # unique; named in every message and audit record
    effect = "block"                          # allow | block | escalate
    phase = "before-call"                     # or "response"; optional (see below)
    description = "Open-world data must not go somewhere public."   # optional
    [rules.conditions]
    and = [
      { fact = "request.annotations.openWorldHint", equals = true },
      { fact = "tool.annotations.inputMetadata.destination", equals = "public" },
    ]

**Conditions** are a tree: ``{and: [...]}``, ``{or: [...]}``, ``{not: {...}}``, and tests
``{fact: PATH, OP: VALUE}`` with one operator — ``equals``, ``in`` (a list), ``contains``
(list membership; substring for text facts), ``exists`` (true/false). :data:`FACTS` lists
every fact and its kind. Facts are three-valued: a fact whose source broke the SEP's
schema is *unknown*, and so is a test on a possible set that some but not all of its
values pass (``destination: ["internal", "public"]`` may or may not be ``"public"``);
``and``/``or``/``not`` follow Kleene's logic.

**Phases:** ``before-call`` rules decide whether the tool runs; ``response`` rules decide
whether its result reaches the agent. A rule that tests ``response.*`` facts is a
response rule; any other rule is a before-call rule unless it says ``phase = "response"``.

**How rules combine — the most restrictive wins:** every rule of the phase is evaluated;
``block`` beats ``escalate`` beats ``allow``. An unknown (undecided) condition counts as a
match for ``block`` and ``escalate`` rules and as no match for ``allow`` rules, so unknown
is never treated as safe. An ``allow`` rule never overrides a restriction: it wins only
over the policy's ``default`` (``allow`` unless the file says otherwise; ``default =
"block"`` turns ``allow`` rules into an allow list). Responses no rule matches are
delivered. Several matching escalations ask the user once, naming every rule.

**Effects:** ``block`` — the tool is not run (before-call) or its result is withheld
(response), and the agent gets ``isError`` naming the rule. ``escalate`` — the user is
asked through the session's elicitation handler; anything but ``accept`` (decline,
cancel, no answer, nobody to ask) is treated as ``block``.

Every decision becomes an :class:`AuditRecord` with the facts it used, the rules, the
effect, the user's answer and the attribution: ``session.audit``.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from difflib import get_close_matches
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeAlias

from mcp_types import CallToolResult
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from harness.browser.frames import origin_of
from harness.elicitation.base import ElicitationHandler, ElicitationRequest, Quoted, ask
from harness.elicitation.wording import POLICY_CALL, POLICY_RESULT
from harness.errors import PolicyError, read_input_file
from harness.inputs import SUFFIXES, InputSyntaxError, parse_input
from harness.models import CallRequest, StageSlots
from harness.stages.framing import user_agent_text
from harness.stages.trust import (
    DATA_CLASSES,
    DEFAULT_SHARED,
    DESTINATIONS,
    MCP_HINT_DEFAULTS,
    OUTCOMES,
    POLICY_META,
    READINGS,
    SHAREABLE,
    SOURCES,
    CallTrust,
    DataClass,
    Reading,
    Resolver,
    ResponseAnnotations,
    TrustSettings,
    TrustStage,
    TrustState,
    as_list,
    data_class_key,
    response_annotations,
    union,
)
from harness.urls import parse as parse_url

Effect = Literal["allow", "block", "escalate"]
Phase = Literal["before-call", "response"]

EFFECTS: tuple[Effect, ...] = ("allow", "block", "escalate")
PHASES: tuple[Phase, ...] = ("before-call", "response")
OPERATORS: tuple[str, ...] = ("equals", "in", "contains", "exists")
COMBINATORS: tuple[str, ...] = ("and", "or", "not")

# Most restrictive wins.
SEVERITY: dict[Effect, int] = {"allow": 0, "escalate": 1, "block": 2}


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


UNKNOWN: Any = _Marker("UNKNOWN")
"""A fact whose source broke the schema: neither true nor false."""

ABSENT: Any = _Marker("ABSENT")
"""A fact nobody declared (an empty list counts as absent)."""

Truth: TypeAlias = bool | None  # None: unknown


class Later:
    """A part of a decision's facts worked out only if a rule reads into it (once)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


FileKind = Literal["toml", "yaml", "json"]


# -- facts ---------------------------------------------------------------------------------

FactKind = Literal["bool", "text", "choice", "set", "object"]


@dataclass(frozen=True)
class FactSpec:
    """What kind of value a fact holds, and which values it may take.

    ``choice`` facts hold one value or a *possible set* (an array: one of these);
    ``set`` facts hold a list of values (all of these); ``object`` facts only ``exist``.
    """

    kind: FactKind
    doc: str
    values: tuple[str, ...] = ()
    data_classes: bool = False
    # Under the `unknown` reading, what this fact is when the tool did not declare it:
    # unknown (a capability it may have), or absent (a flag or a list whose absence hides
    # nothing). MCP's four hints take MCP's defaults instead (MCP_HINT_DEFAULTS).
    undeclared_unknown: bool = False


def _hint(doc: str) -> FactSpec:
    return FactSpec("bool", doc)


def _declared(spec: FactSpec) -> FactSpec:
    """A fact of the tool's declaration that is unknown, not absent, when left out under
    the ``unknown`` reading."""
    return FactSpec(spec.kind, spec.doc, spec.values, spec.data_classes, undeclared_unknown=True)


_SENSITIVITY = 'sensitivity classes (DataClass; "regulated" matches any {regulated: …})'

FACTS: dict[str, FactSpec] = {
    # What the call carries: the session's annotations before this call.
    "request.annotations.openWorldHint": _hint("open-world data is in the session"),
    "request.annotations.maliciousActivityHint": _hint("flagged content is in the session"),
    "request.annotations.attribution": FactSpec("set", "sources of the data in the session"),
    "request.annotations.sensitivity": FactSpec(
        "set", "the " + _SENSITIVITY + " seen in the session", data_classes=True
    ),
    # The tool and its declaration for this call (resolved when it has resolve()).
    "tool.name": FactSpec("text", "the tool's name"),
    "tool.source": FactSpec("choice", "how it was declared", ("script", "declarative")),
    "tool.origin": FactSpec("text", "the origin of the frame that registered it"),
    "tool.resolved": _hint("the declaration came from the tool's resolve(input)"),
    "tool.annotations.title": FactSpec("text", "the annotations' title"),
    "tool.annotations.readOnlyHint": _hint("MCP: does not modify its environment"),
    "tool.annotations.destructiveHint": _hint("MCP: may destroy data"),
    "tool.annotations.idempotentHint": _hint("MCP: repeating a call has no further effect"),
    "tool.annotations.openWorldHint": _hint("MCP/SEP: reaches external or untrusted sources"),
    "tool.annotations.untrustedContentHint": _declared(_hint("WebMCP: returns untrusted content")),
    "tool.annotations.consequentialHint": _declared(_hint("WebMCP: has consequences for the user")),
    "tool.annotations.maliciousActivityHint": _hint("SEP: the request is flagged as malicious"),
    "tool.annotations.sensitiveHint": _declared(_hint("seed 000: the output is sensitive")),
    "tool.annotations.attribution": FactSpec("set", "SEP: the sources of its output"),
    "tool.annotations.inputMetadata": _declared(FactSpec("object", "SEP: the input contract")),
    "tool.annotations.inputMetadata.destination": _declared(
        FactSpec("choice", "where input may go", DESTINATIONS)
    ),
    "tool.annotations.inputMetadata.sensitivity": _declared(
        FactSpec("set", "the " + _SENSITIVITY + " it may accept", data_classes=True)
    ),
    "tool.annotations.inputMetadata.outcomes": _declared(
        FactSpec("choice", "what calling it causes", OUTCOMES)
    ),
    "tool.annotations.returnMetadata": _declared(FactSpec("object", "SEP: the output contract")),
    "tool.annotations.returnMetadata.source": _declared(
        FactSpec("choice", "where its output comes from", SOURCES)
    ),
    "tool.annotations.returnMetadata.sensitivity": _declared(
        FactSpec("set", "the " + _SENSITIVITY + " it may return", data_classes=True)
    ),
    # The response (response phase only), aggregated over all its content.
    "response.annotations.openWorldHint": _hint("the response holds open-world data"),
    "response.annotations.maliciousActivityHint": _hint("the response is flagged as malicious"),
    "response.annotations.attribution": FactSpec("set", "the sources of the response"),
    "response.annotations.returnMetadata.source": FactSpec(
        "set", "every source the response names (returnMetadata.source)", SOURCES
    ),
    "response.annotations.returnMetadata.sensitivity": FactSpec(
        "set",
        "the " + _SENSITIVITY + " the response names (returnMetadata.sensitivity)",
        data_classes=True,
    ),
    "response.isError": _hint("the result is an error"),
    # The top-level page.
    "page.origin": FactSpec("text", "the top-level page's origin"),
    "page.url": FactSpec("text", "the top-level page's URL"),
    # The agent session so far (it survives navigation).
    "session.openWorldHint": _hint("open-world data has entered the session"),
    "session.maliciousActivityHint": _hint("flagged content has entered the session"),
    "session.attribution": FactSpec("set", "every source that contributed so far"),
    "session.sensitivity": FactSpec(
        "set", "every one of the " + _SENSITIVITY + " seen so far", data_classes=True
    ),
    "session.toolsCalled": FactSpec("set", "the names of the tools that ran so far"),
    "session.origins": FactSpec("set", "the origins of the tools that ran so far"),
}
"""Every fact a condition may test, by dotted path."""


class Facts:
    """The facts of one decision: nested JSON, where a subtree may be :data:`UNKNOWN`.

    ``reading`` says what a ``tool.annotations.*`` fact the tool did not declare is:
    absent (``never-set``), or — under ``unknown`` — MCP's default for MCP's four hints
    and :data:`UNKNOWN` for the declaration facts marked so in :data:`FACTS`.
    """

    def __init__(self, data: dict[str, Any], reading: Reading = "never-set") -> None:
        self.data = data
        self.reading = reading
        self._read: dict[str, Any] = {}  # a decision reads each fact more than once

    def get(self, path: str) -> Any:
        """The value at ``path`` as given: a value, :data:`UNKNOWN` or :data:`ABSENT`."""
        node: Any = self.data
        for part in _parts(path):
            if node is UNKNOWN:
                return UNKNOWN
            if not isinstance(node, dict) or part not in node:
                return ABSENT
            parent, node = node, node[part]
            if isinstance(node, Later):
                node = parent[part] = node.make()
        if node is None or (isinstance(node, list) and not node):
            return ABSENT
        return node

    def read(self, path: str) -> Any:
        """The value a condition tests: :meth:`get`, with undeclared facts read per
        ``reading``."""
        if path in self._read:
            return self._read[path]
        value = self._read[path] = self._reading_of(path)
        return value

    def _reading_of(self, path: str) -> Any:
        value = self.get(path)
        if value is not ABSENT or self.reading != "unknown":
            return value
        prefix = "tool.annotations."
        if not path.startswith(prefix):
            return value
        hint = path[len(prefix) :]
        if hint in MCP_HINT_DEFAULTS:
            if hint == "destructiveHint" and self.get(prefix + "readOnlyHint") is True:
                return False  # MCP: destructiveHint means something only when not read-only
            return MCP_HINT_DEFAULTS[hint]
        spec = FACTS.get(path)
        return UNKNOWN if spec is not None and spec.undeclared_unknown else value


# How many decisions a policy keeps (:meth:`Policy.decide`); more start the count again.
DECISIONS_KEPT = 1024


def _decision_key(phase: Phase, facts: Facts, read: tuple[str, ...]) -> tuple[Any, ...] | None:
    """What decides ``phase`` for ``facts``: each fact its rules read, as given and as
    read (types kept apart: ``true`` is not ``1``); None when a value is not JSON."""
    key: list[Any] = [phase]
    for path in read:
        as_read = facts.read(path)
        given = as_read if facts.reading == "never-set" else facts.get(path)
        for value in (given, as_read):
            if value is UNKNOWN or value is ABSENT or value is None:
                key.append(value)
            elif type(value) in (str, int, float, bool):
                key.append((type(value), value))
            else:
                try:
                    key.append(json.dumps(value, sort_keys=True, allow_nan=False))
                except (TypeError, ValueError):
                    return None
    return tuple(key)


@functools.lru_cache(maxsize=512)
def _parts(path: str) -> tuple[str, ...]:
    return tuple(path.split("."))


def call_facts(
    call: CallTrust,
    state: TrustState,
    page_url: str,
    response: ResponseAnnotations | None = None,
    is_error: bool = False,
    reading: Reading = "never-set",
) -> Facts:
    """The facts about one call (and, in the response phase, its response)."""
    declaration = call.declaration
    data: dict[str, Any] = {
        "request": {"annotations": call.request_annotations},
        "tool": {
            "name": call.tool.name,
            "source": call.tool.source,
            "origin": call.tool.origin,
            "resolved": declaration.resolved,
            "annotations": declaration.facts_json if declaration.known else UNKNOWN,
        },
        "page": Later(lambda: {"origin": origin_of(page_url), "url": page_url}),
        "session": Later(state.facts),
    }
    if response is not None:
        data["response"] = {
            "annotations": Later(response.as_json) if response.known else UNKNOWN,
            "isError": is_error,
        }
    return Facts(data, reading)


# -- conditions -----------------------------------------------------------------------------


def _data_class_matches(item: Any, wanted: Any) -> bool:
    if wanted == "regulated":
        return isinstance(item, dict) and "regulated" in item
    return data_class_key(item) == data_class_key(wanted)


def _same(item: Any, wanted: Any) -> bool:
    return bool(item == wanted and type(item) is type(wanted))


def _all_any(hits: list[bool]) -> Truth:
    if all(hits):
        return True
    return False if not any(hits) else None


@dataclass(frozen=True)
class FactTest:
    """``{fact: PATH, OPERATOR: operand}``."""

    fact: str
    operator: str
    operand: Any

    def evaluate(self, facts: Facts) -> Truth:
        """True, False or None (unknown)."""
        if self.operator == "exists":  # whether it was declared: the reading does not apply
            given = facts.get(self.fact)
            return None if given is UNKNOWN else (given is not ABSENT) is self.operand
        value = facts.read(self.fact)
        if value is UNKNOWN:
            return None
        if value is ABSENT:
            return False
        spec = FACTS[self.fact]
        if spec.kind == "choice":
            options = as_list(value)
            if self.operator == "contains":
                return self.operand in options
            if self.operator == "equals":
                return _all_any([v == self.operand for v in options])
            return _all_any([v in self.operand for v in options])
        if spec.kind == "set":
            items = as_list(value)
            match = _data_class_matches if spec.data_classes else _same
            if self.operator == "contains":
                return any(match(i, self.operand) for i in items)
            if self.operator == "in":
                return all(any(match(i, w) for w in self.operand) for i in items)
            wanted = as_list(self.operand)
            return {data_class_key(i) for i in items} == {data_class_key(w) for w in wanted}
        if self.operator == "contains":
            return isinstance(value, str) and self.operand in value
        if self.operator == "in":
            return any(_same(value, w) for w in self.operand)
        return _same(value, self.operand)

    def facts(self) -> list[str]:
        """The facts this condition reads."""
        return [self.fact]

    def describe(self) -> str:
        """The condition in words."""
        return f"{self.fact} {self.operator} {json.dumps(self.operand)}"


@dataclass(frozen=True)
class _Combination:
    """``and`` / ``or`` in Kleene's logic: the ``decisive`` value wins, then unknown."""

    items: tuple[Condition, ...]
    word: ClassVar[str]
    decisive: ClassVar[bool]

    def evaluate(self, facts: Facts) -> Truth:
        """True, False or None (unknown)."""
        truths = [c.evaluate(facts) for c in self.items]
        if any(t is self.decisive for t in truths):
            return self.decisive
        return None if any(t is None for t in truths) else not self.decisive

    def facts(self) -> list[str]:
        """The facts this condition reads."""
        return union(*(c.facts() for c in self.items))

    def describe(self) -> str:
        """The condition in words."""
        return f" {self.word} ".join(_nested(c) for c in self.items)


@dataclass(frozen=True)
class AllOf(_Combination):
    """``{and: [...]}``: false if any is false, else unknown if any is unknown."""

    word = "and"
    decisive = False


@dataclass(frozen=True)
class AnyOf(_Combination):
    """``{or: [...]}``: true if any is true, else unknown if any is unknown."""

    word = "or"
    decisive = True


@dataclass(frozen=True)
class Not:
    """``{not: {...}}``: unknown stays unknown."""

    item: Condition

    def evaluate(self, facts: Facts) -> Truth:
        """Kleene negation."""
        truth = self.item.evaluate(facts)
        return None if truth is None else not truth

    def facts(self) -> list[str]:
        """The facts this condition reads."""
        return self.item.facts()

    def describe(self) -> str:
        """The condition in words."""
        return f"not {_nested(self.item)}"


Condition: TypeAlias = FactTest | AllOf | AnyOf | Not


def _nested(condition: Condition) -> str:
    text = condition.describe()
    return f"({text})" if isinstance(condition, AllOf | AnyOf) else text


# -- rules, policies, decisions ---------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """One rule: when its conditions hold in its phase, its effect applies."""

    name: str
    effect: Effect
    phase: Phase
    conditions: Condition
    description: str | None = None

    def explain(self) -> str:
        """What the user and the agent are told: the description, or the conditions."""
        return self.description or self.conditions.describe()


class RuleMatch(BaseModel):
    """A rule that matched; ``undecided`` when its conditions were unknown."""

    model_config = ConfigDict(frozen=True)

    name: str
    effect: Effect
    undecided: bool = False


class Decision(BaseModel):
    """What a policy decided for one phase of one call."""

    model_config = ConfigDict(frozen=True)

    phase: Phase
    effect: Effect
    rules: list[RuleMatch] = Field(default_factory=list, description="the deciding rules")
    matched: list[RuleMatch] = Field(default_factory=list, description="every matching rule")
    facts: dict[str, Any] = Field(
        default_factory=dict, description="every fact the phase's rules read (absent: null)"
    )
    unknown_facts: list[str] = Field(default_factory=list)

    @property
    def rule_names(self) -> list[str]:
        """The deciding rules' names."""
        return [r.name for r in self.rules]


@dataclass(frozen=True)
class Policy:
    """A list of rules and how they combine (see the module documentation)."""

    rules: tuple[Rule, ...]
    source: str = "<policy>"
    default: Effect = "allow"
    description: str | None = None
    missing_annotations: Reading = "never-set"
    cross_origin_annotations: tuple[str, ...] = DEFAULT_SHARED
    # phase → (its rules, the facts they read): computed once, on first use.
    _phases: dict[str, tuple[tuple[Rule, ...], tuple[str, ...]]] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )
    # (phase, what its facts read as) → the decision: a decision is a function of the
    # facts its phase's rules read, so calls that read alike are decided once.
    _decisions: dict[tuple[Any, ...], Decision] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    @property
    def trust_settings(self) -> TrustSettings:
        """What the trust stage takes from this policy."""
        return TrustSettings(self.missing_annotations, self.cross_origin_annotations)

    def rules_for(self, phase: Phase) -> list[Rule]:
        """The rules of one phase, in file order."""
        return list(self._phase(phase)[0])

    def _phase(self, phase: Phase) -> tuple[tuple[Rule, ...], tuple[str, ...]]:
        """One phase's rules and the facts they read (a policy never changes: kept)."""
        known = self._phases.get(phase)
        if known is None:
            rules = tuple(r for r in self.rules if r.phase == phase)
            facts = tuple(union(*(r.conditions.facts() for r in rules)))
            known = self._phases[phase] = (rules, facts)
        return known

    def rule(self, name: str) -> Rule:
        """The rule with that name (KeyError if none)."""
        for rule in self.rules:
            if rule.name == name:
                return rule
        raise KeyError(name)

    def decide(self, phase: Phase, facts: Facts) -> Decision:
        """Evaluate every rule of ``phase``; the most restrictive matching effect wins.

        The rules read only the facts :meth:`_phase` lists (each as given, and as the
        policy's reading reads it): facts that read alike are decided alike, so the
        decision is kept and found again by those readings (at most
        :data:`DECISIONS_KEPT`). A reading that is not plain JSON is decided afresh.
        """
        rules, read = self._phase(phase)
        key = _decision_key(phase, facts, read)
        if key is not None and (known := self._decisions.get(key)) is not None:
            return known
        decision = self._decide(phase, facts, rules, read)
        if key is not None:
            if len(self._decisions) >= DECISIONS_KEPT:
                self._decisions.clear()
            self._decisions[key] = decision
        return decision

    def _decide(
        self, phase: Phase, facts: Facts, rules: tuple[Rule, ...], read: tuple[str, ...]
    ) -> Decision:
        matched: list[RuleMatch] = []
        for rule in rules:
            truth = rule.conditions.evaluate(facts)
            if truth is True or (truth is None and rule.effect != "allow"):
                matched.append(
                    RuleMatch(name=rule.name, effect=rule.effect, undecided=truth is None)
                )
        values = {path: facts.read(path) for path in read}
        # Copied: a kept decision is handed out again, and facts alias what the harness
        # keeps per tool (a declaration's annotations).
        used = copy.deepcopy(
            {p: (None if v is ABSENT else v) for p, v in values.items() if v is not UNKNOWN}
        )
        unknown = [p for p, v in values.items() if v is UNKNOWN]
        if matched:
            effect = max((m.effect for m in matched), key=SEVERITY.__getitem__)
            deciding = [m for m in matched if m.effect == effect]
        else:
            effect = self.default if phase == "before-call" else "allow"
            deciding = []
        return Decision(
            phase=phase,
            effect=effect,
            rules=deciding,
            matched=matched,
            facts=used,
            unknown_facts=unknown,
        )

    # -- loading -----------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Policy:
        """Read a policy file (``.toml``, ``.yaml``/``.yml`` or ``.json``).

        Raises :class:`~harness.errors.PolicyError` with one line naming the file, the
        rule and the problem: a syntax error, an unknown fact or operator, a bad value.
        """
        file = Path(path)
        kind = SUFFIXES.get(file.suffix.lower())
        if kind is None:
            raise PolicyError(f"{file}: unknown policy file type; use .toml, .yaml or .json.")
        text = read_input_file(file, "the policy file", PolicyError)
        return cls.from_text(text, kind, source=str(file))

    @classmethod
    def from_text(cls, text: str, kind: FileKind, source: str) -> Policy:
        """A policy from file text (``source`` names it in messages)."""
        return cls.from_data(_parse(text, kind, source), source)

    @classmethod
    def from_data(cls, data: Any, source: str = "<policy>") -> Policy:
        """A policy from already-parsed data (the shape of a policy file)."""
        return _Reader(source).policy(data)


# -- reading policy files ---------------------------------------------------------------------


def _parse(text: str, kind: FileKind, source: str) -> Any:
    """The file's data, parsed within the limits every input file has
    (:func:`harness.inputs.parse_input`); a syntax error names the rule it is in."""
    try:
        return parse_input(text, kind, f"the policy file {source}")
    except InputSyntaxError as exc:
        if exc.line is None:  # a limit, not a syntax error: its own words say it
            raise PolicyError(f"{source}: {exc.detail}") from None
        column = str(exc.column) if exc.column is not None else None
        raise PolicyError(_syntax(source, text, kind, exc.line, column, exc.detail)) from None


def _syntax(
    source: str, text: str, kind: str, line: int | None, column: str | None, detail: str
) -> str:
    where = f" at line {line}" + (f", column {column}" if column else "") if line else ""
    rule = _rule_at_line(text, kind, line) if line else None
    inside = f" in rule {rule}" if rule else ""
    return f"{source}: {kind.upper()} syntax error{inside}{where}: {detail}"


_TOML_RULE = re.compile(r"^\s*\[\[\s*rules\s*\]\]")
_TOML_NAME = re.compile(r"""^\s*name\s*=\s*["']([^"']*)["']""")
_YAML_ITEM = re.compile(r"^(\s*)-\s")
_YAML_NAME = re.compile(r"""^\s*(?:-\s+)?name\s*:\s*["']?([^"'#\n]*?)["']?\s*(?:#.*)?$""")


def _rule_at_line(text: str, kind: str, line: int) -> str | None:
    """Which rule a line of a policy file is in: ``#2 'name'`` (best effort, for messages)."""
    lines = text.splitlines()
    if kind == "toml":
        starts = [i for i, t in enumerate(lines) if _TOML_RULE.match(t)]
        name_pattern = _TOML_NAME
    elif kind == "yaml":
        begin = next((i for i, t in enumerate(lines) if re.match(r"^rules\s*:", t)), None)
        if begin is None:
            return None
        items = [(i, m) for i, t in enumerate(lines) if i > begin and (m := _YAML_ITEM.match(t))]
        indent = len(items[0][1].group(1)) if items else 0
        starts = [i for i, m in items if len(m.group(1)) == indent]
        name_pattern = _YAML_NAME
    else:
        return None
    before = [s for s in starts if s <= line - 1]
    if not before:
        return None
    index = len(before)
    first = before[-1]
    last = starts[index] if index < len(starts) else len(lines)
    for t in lines[first:last]:
        found = name_pattern.match(t)
        if found and found.group(1).strip():
            return f"#{index} {found.group(1).strip()!r}"
    return f"#{index}"


class _Reader:
    """Checks parsed policy data rule by rule; every problem is one PolicyError line."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, rule: str | None, problem: str) -> PolicyError:
        where = f"rule {rule}: " if rule else ""
        return PolicyError(f"{self.source}: {where}{problem}")

    def policy(self, data: Any) -> Policy:
        if not isinstance(data, dict):
            raise self.fail(None, "a policy file is an object with a `rules` list.")
        keys = {
            "rules",
            "default",
            "description",
            "missing_annotations",
            "cross_origin_annotations",
        }
        unknown = sorted(set(data) - keys)
        if unknown:
            raise self.fail(
                None,
                f"unknown top-level key(s) {', '.join(map(repr, unknown))}; "
                f"use {', '.join(sorted(keys))}.",
            )
        missing = data.get("missing_annotations", "never-set")
        if missing not in READINGS:
            raise self.fail(
                None,
                f"missing_annotations must be one of {', '.join(READINGS)}, not {missing!r}.",
            )
        shared = data.get("cross_origin_annotations", list(DEFAULT_SHARED))
        if not isinstance(shared, list) or any(k not in SHAREABLE for k in shared):
            raise self.fail(
                None,
                "cross_origin_annotations must be a list of "
                f"{', '.join(SHAREABLE)} (possibly empty), not {json.dumps(shared)}.",
            )
        default = data.get("default", "allow")
        if default not in EFFECTS:
            raise self.fail(None, f"default must be one of {', '.join(EFFECTS)}, not {default!r}.")
        raw_rules = data.get("rules")
        if not isinstance(raw_rules, list):
            raise self.fail(None, "`rules` must be a list of rules.")
        rules: list[Rule] = []
        for index, raw in enumerate(raw_rules, start=1):
            rule = self.rule(index, raw)
            if any(r.name == rule.name for r in rules):
                raise self.fail(f"#{index} {rule.name!r}", "another rule has the same name.")
            rules.append(rule)
        description = data.get("description")
        return Policy(
            rules=tuple(rules),
            source=self.source,
            default=default,
            description=description if isinstance(description, str) else None,
            missing_annotations=missing,
            cross_origin_annotations=tuple(shared),
        )

    def rule(self, index: int, raw: Any) -> Rule:
        label = f"#{index}"
        if not isinstance(raw, dict):
            raise self.fail(label, "a rule is an object with name, effect and conditions.")
        name = raw.get("name")
        if not isinstance(name, str) or not name.strip():
            raise self.fail(label, "every rule needs a `name` (a non-empty string).")
        label = f"#{index} {name!r}"
        unknown = sorted(set(raw) - {"name", "effect", "phase", "conditions", "description"})
        if unknown:
            raise self.fail(
                label,
                f"unknown key(s) {', '.join(map(repr, unknown))}; "
                "a rule has name, effect, phase, conditions, description.",
            )
        effect = raw.get("effect")
        if effect not in EFFECTS:
            raise self.fail(label, f"effect must be one of {', '.join(EFFECTS)}, not {effect!r}.")
        if "conditions" not in raw:
            raise self.fail(label, "the rule has no `conditions`.")
        conditions = self.condition(label, raw["conditions"])
        reads_response = any(f.startswith("response.") for f in conditions.facts())
        phase = raw.get("phase", "response" if reads_response else "before-call")
        if phase not in PHASES:
            raise self.fail(label, f"phase must be one of {', '.join(PHASES)}, not {phase!r}.")
        if phase == "before-call" and reads_response:
            raise self.fail(
                label,
                "a before-call rule cannot test response.* facts (there is no response "
                'yet); use phase = "response".',
            )
        description = raw.get("description")
        if description is not None and not isinstance(description, str):
            raise self.fail(label, "description must be a string.")
        return Rule(
            name=name, effect=effect, phase=phase, conditions=conditions, description=description
        )

    def condition(self, label: str, raw: Any) -> Condition:
        if not isinstance(raw, dict) or not raw:
            raise self.fail(
                label,
                f"a condition is an object ({{and|or|not: …}} or {{fact, operator}}), "
                f"not {json.dumps(raw)}.",
            )
        combinators = [k for k in raw if k in COMBINATORS]
        if combinators:
            if len(raw) != 1:
                raise self.fail(
                    label, f"a combinator stands alone in its object; found {sorted(raw)}."
                )
            key = combinators[0]
            value = raw[key]
            if key == "not":
                return Not(self.condition(label, value))
            if not isinstance(value, list) or not value:
                raise self.fail(label, f"`{key}` takes a non-empty list of conditions.")
            items = tuple(self.condition(label, item) for item in value)
            return AllOf(items) if key == "and" else AnyOf(items)
        if "fact" not in raw:
            unknown = sorted(raw)
            raise self.fail(
                label,
                f"unknown operator or combinator {', '.join(map(repr, unknown))}; "
                f"combinators: {', '.join(COMBINATORS)}; a test is {{fact, "
                f"{'|'.join(OPERATORS)}}}.",
            )
        fact = raw["fact"]
        if not isinstance(fact, str) or fact not in FACTS:
            close = get_close_matches(str(fact), list(FACTS), n=1)
            hint = (
                f"; did you mean {close[0]!r}?"
                if close
                else ("; facts start with request.annotations, tool, response, page or session.")
            )
            raise self.fail(label, f"unknown fact {fact!r}{hint}")
        operators = [k for k in raw if k != "fact"]
        unknown_ops = [k for k in operators if k not in OPERATORS]
        if unknown_ops:
            raise self.fail(
                label,
                f"unknown operator {unknown_ops[0]!r} on {fact!r}; operators: "
                f"{', '.join(OPERATORS)}.",
            )
        if len(operators) != 1:
            raise self.fail(
                label, f"a test on {fact!r} needs exactly one operator ({', '.join(OPERATORS)})."
            )
        operator = operators[0]
        operand = raw[operator]
        problem = _operand_problem(FACTS[fact], operator, operand)
        if problem:
            raise self.fail(label, f"{fact} {operator}: {problem}")
        return FactTest(fact, operator, operand)


def _operand_problem(spec: FactSpec, operator: str, operand: Any) -> str | None:
    """Why an operand does not fit the fact (None: it fits)."""
    if operator == "exists":
        return None if isinstance(operand, bool) else "exists takes true or false."
    if spec.kind == "object":
        return "this fact is an object; only `exists` applies to it."
    if spec.kind == "bool" and operator == "contains":
        return "contains does not apply to a true/false fact; use equals."
    if operator == "in":
        if not isinstance(operand, list) or not operand:
            return "in takes a non-empty list."
        for item in operand:
            problem = _value_problem(spec, item)
            if problem:
                return problem
        return None
    if spec.kind == "set" and operator == "equals" and isinstance(operand, list):
        for item in operand:
            problem = _value_problem(spec, item)
            if problem:
                return problem
        return None
    return _value_problem(spec, operand)


def _value_problem(spec: FactSpec, value: Any) -> str | None:
    if spec.kind == "bool":
        return None if isinstance(value, bool) else f"expected true or false, not {value!r}."
    if spec.data_classes:
        if value == "regulated":
            return None
        try:
            _DATA_CLASS.validate_python(value, strict=True)
        except ValidationError:
            pass
        else:
            return None
        return (
            f'expected a sensitivity class ({", ".join(DATA_CLASSES)}, "regulated" or '
            f"{{regulated: {{scopes: [...]}}}}), not {json.dumps(value)}."
        )
    if not isinstance(value, str):
        return f"expected a string, not {json.dumps(value)}."
    if spec.values and value not in spec.values:
        return f"{value!r} is not one of {', '.join(spec.values)}."
    return None


_DATA_CLASS: TypeAdapter[Any] = TypeAdapter(DataClass)


# -- the default pack ------------------------------------------------------------------------

PACKS = resources.files("harness.stages") / "packs"
"""The bundled policy packs, one TOML file each (``packs/default.toml``, ``packs/strict.toml``)."""

DEFAULT_PACK_TOML = (PACKS / "default.toml").read_text(encoding="utf-8")

DEFAULT_POLICY: Policy = Policy.from_text(DEFAULT_PACK_TOML, "toml", source="default pack")
"""The default pack: active unless the user opts out (``policy=None``, ``--policy none``).

It reads a hint a tool leaves out as never set (seed 001's ``tools/list`` rule), which is
usable but rewards under-declaring: see :data:`STRICT_POLICY`."""

STRICT_POLICY: Policy = Policy.from_text(
    (PACKS / "strict.toml").read_text(encoding="utf-8"), "toml", source="strict pack"
)
"""The strict pack: the default pack's rules, with missing annotations read as unknown
(seed 001's graceful degradation) and MCP's hints at MCP's defaults (``policy="strict"``)."""

PACK_NAMES: dict[str, Policy] = {"default": DEFAULT_POLICY, "strict": STRICT_POLICY}
"""The bundled packs by the name ``--policy`` and ``policy=`` take."""

PolicyOption: TypeAlias = Policy | str | os.PathLike[str] | None
"""What ``policy=`` accepts: a :class:`Policy`, a pack name (``"default"``, ``"strict"``),
a policy file, or None (no policy)."""


def policy_from_argument(text: str) -> Policy | None:
    """``--policy``: ``default`` or ``strict`` (a bundled pack), ``none`` (no policy), or a
    policy file."""
    if text in PACK_NAMES:
        return PACK_NAMES[text]
    if text == "none":
        return None
    return Policy.load(text)


def policy_option(value: PolicyOption) -> Policy | None:
    """A ``policy=`` option as a policy: a :class:`Policy`, a pack name, a file to load, or
    None (no policy)."""
    if value is None or isinstance(value, Policy):
        return value
    if isinstance(value, str) and value in PACK_NAMES:
        return PACK_NAMES[value]
    return Policy.load(value)


# -- the audit trail -------------------------------------------------------------------------

AuditOutcome = Literal["ran", "not run", "delivered", "withheld"]


class AuditRecord(BaseModel):
    """One policy decision: which call, which facts, which rules, what happened, and why."""

    model_config = ConfigDict(frozen=True)

    call_id: str
    tool: str
    origin: str = Field(description="the origin of the frame that registered the tool")
    page_origin: str
    policy: str = Field(description="where the rules came from: a file, or 'default pack'")
    phase: Phase
    effect: Effect
    rules: list[str] = Field(description="the deciding rules (empty: the default applied)")
    matched: list[RuleMatch]
    facts: dict[str, Any]
    unknown_facts: list[str]
    attribution: list[str] = Field(description="the sources of the data this decision concerns")
    answer: Literal["accept", "decline", "cancel"] | None = None
    outcome: AuditOutcome
    at: float = Field(default_factory=time.time)


class AuditTrail:
    """Every policy decision of a session, in order (``session.audit``).

    The pipeline notes a decision's fields (:meth:`note`); its :class:`AuditRecord` is
    made when the trail is first read after it (most calls' records are never read).
    """

    def __init__(self) -> None:
        self._records: list[AuditRecord] = []
        self._noted: list[dict[str, Any]] = []

    @property
    def records(self) -> list[AuditRecord]:
        """Every record, in order."""
        if self._noted:
            # The fields are the harness's own, of the record's types: no second validation.
            # A record's facts are its own (the decision they come from is shared).
            self._records.extend(
                AuditRecord.model_construct(**{**f, "facts": copy.deepcopy(f["facts"])})
                for f in self._noted
            )
            self._noted.clear()
        return self._records

    def add(self, record: AuditRecord) -> None:
        """Append one record."""
        self.records.append(record)

    def note(self, **fields: Any) -> None:
        """Append the record these fields make (every field of :class:`AuditRecord`)."""
        self._noted.append(fields)

    def for_call(self, call_id: str) -> list[AuditRecord]:
        """The records of one call (before-call, then response)."""
        return [r for r in self.records if r.call_id == call_id]

    def for_tool(self, name: str) -> list[AuditRecord]:
        """The records of every call to one tool."""
        return [r for r in self.records if r.tool == name]

    def as_json(self) -> list[dict[str, Any]]:
        """Every record as JSON (for traces and reports)."""
        return [r.model_dump(mode="json") for r in self.records]

    def __iter__(self) -> Iterator[AuditRecord]:
        return iter(self.records)

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, index: int) -> AuditRecord:
        return self.records[index]


# -- the pipeline stage -----------------------------------------------------------------------


class PolicyStage:
    """Enforces the session's policy: before the call, and on the response.

    It runs between the trust stage's before and after halves and reads their
    :class:`~harness.stages.trust.CallTrust`. ``policy`` and ``handler`` (who answers
    escalations) are read on every call, so a session's can be changed between calls.
    """

    def __init__(
        self,
        trust: TrustState | Callable[[], TrustState],
        audit: AuditTrail | Callable[[], AuditTrail],
        *,
        policy: Callable[[], Policy | None],
        handler: Callable[[], ElicitationHandler],
        page_url: Callable[[], str],
    ) -> None:
        """``trust`` and ``audit``: the agent session's, or functions that give the current
        agent's (a bridge serves several agents, each with its own)."""
        self._trust = trust if callable(trust) else (lambda: trust)
        self._audit = audit if callable(audit) else (lambda: audit)
        self.policy = policy
        self.handler = handler
        self.page_url = page_url

    @property
    def trust(self) -> TrustState:
        """The trust state of the agent whose call this is."""
        return self._trust()

    @property
    def audit(self) -> AuditTrail:
        """The audit trail of the agent whose call this is."""
        return self._audit()

    async def before_call(self, request: CallRequest) -> CallToolResult | None:
        """Block, escalate or let the call run."""
        policy = self.policy()
        call = self.trust.call(request.call_id)
        if policy is None or call is None:
            return None
        page_url = self.page_url()
        facts = call_facts(call, self.trust, page_url, reading=policy.missing_annotations)
        decision = policy.decide("before-call", facts)
        attribution = union(self.trust.attribution, call.declaration.attribution)
        answer = await self._answer(policy, decision, request, call, attribution)
        allowed = decision.effect == "allow" or answer == "accept"
        self._record(policy, decision, request, call, page_url, attribution, answer, allowed)
        if allowed:
            return None
        call.stopped = True
        return _refusal(policy, decision, answer, call)

    async def after_call(self, request: CallRequest, result: CallToolResult) -> CallToolResult:
        """Deliver the result, or withhold it from the agent."""
        policy = self.policy()
        call = self.trust.call(request.call_id)
        if policy is None or call is None or call.stopped or not policy.rules_for("response"):
            return result
        response = response_annotations(result)
        call.response = response
        page_url = self.page_url()
        facts = call_facts(
            call,
            self.trust,
            page_url,
            response,
            bool(result.is_error),
            reading=policy.missing_annotations,
        )
        decision = policy.decide("response", facts)
        returned = response.annotations.attribution if response.annotations else []
        attribution = union(self.trust.attribution, call.declaration.attribution, returned)
        answer = await self._answer(policy, decision, request, call, attribution)
        delivered = decision.effect == "allow" or answer == "accept"
        self._record(policy, decision, request, call, page_url, attribution, answer, delivered)
        if delivered:
            return result
        call.withheld = True
        return _refusal(policy, decision, answer, call)

    async def _answer(
        self,
        policy: Policy,
        decision: Decision,
        request: CallRequest,
        call: CallTrust,
        attribution: list[str],
    ) -> Literal["accept", "decline", "cancel"] | None:
        """Ask the user when the decision is to escalate (SEP: attribution in the dialog)."""
        if decision.effect != "escalate":
            return None
        question = _question(policy, decision, request, attribution)
        return (await ask(self.handler(), question)).action

    def _record(
        self,
        policy: Policy,
        decision: Decision,
        request: CallRequest,
        call: CallTrust,
        page_url: str,
        attribution: list[str],
        answer: Literal["accept", "decline", "cancel"] | None,
        passed: bool,
    ) -> None:
        before = decision.phase == "before-call"
        outcome: AuditOutcome = (
            ("ran" if passed else "not run") if before else ("delivered" if passed else "withheld")
        )
        self.audit.note(
            call_id=request.call_id,
            tool=call.tool.name,
            origin=call.tool.origin,
            page_origin=origin_of(page_url),
            policy=policy.source,
            phase=decision.phase,
            effect=decision.effect,
            rules=decision.rule_names,
            matched=list(decision.matched),
            facts=decision.facts,
            unknown_facts=list(decision.unknown_facts),
            attribution=attribution,
            answer=answer,
            outcome=outcome,
            at=time.time(),
        )


def _cause(policy: Policy, decision: Decision) -> str:
    names = decision.rule_names
    if not names:
        return f"the default effect of {policy.source} ({decision.effect})"
    if len(names) == 1:
        return f"policy rule {names[0]!r} ({policy.source}): {policy.rule(names[0]).explain()}"
    explained = "; ".join(f"{n!r}: {policy.rule(n).explain()}" for n in names)
    return f"policy rules ({policy.source}) {explained}"


def _refusal(
    policy: Policy, decision: Decision, answer: str | None, call: CallTrust
) -> CallToolResult:
    cause = _cause(policy, decision)
    consequence = (
        f"the tool {call.tool.name} was not run"
        if decision.phase == "before-call"
        else f"the result of {call.tool.name} was withheld from the agent"
    )
    if decision.effect == "escalate":
        said = "declined" if answer == "decline" else "did not answer (cancel)"
        text = f"Not confirmed: {cause}. The user was asked and {said}, so {consequence}."
    else:
        text = f"Blocked by {cause}. {consequence[0].upper()}{consequence[1:]}."
    return CallToolResult(
        content=[user_agent_text(text)],
        is_error=True,
        meta={
            POLICY_META: {
                "phase": decision.phase,
                "effect": decision.effect,
                "rules": decision.rule_names,
                "answer": answer,
            }
        },
    )


def _question(
    policy: Policy, decision: Decision, request: CallRequest, attribution: list[str]
) -> ElicitationRequest:
    """The escalation's question: the harness's sentence and why it asks, apart from what
    the page and the agent wrote (the tool's name, the arguments, the data's sources —
    shown as URLs only: an entry that is no URL is counted, not shown)."""
    tool = request.tool
    before = decision.phase == "before-call"
    quoted = []
    if before:
        arguments = json.dumps(request.arguments, ensure_ascii=False)
        quoted.append(Quoted(label="arguments", text=arguments, by="agent"))
    urls = [str(parsed.href) for entry in attribution if (parsed := parse_url(entry)) is not None]
    notes = [f"Asked by {_cause(policy, decision)}."]
    if len(urls) < len(attribution):
        notes.append(
            f"{len(attribution) - len(urls)} source(s) of the data involved are not URLs and "
            "are not shown."
        )
    return ElicitationRequest(
        source="policy",
        message=POLICY_CALL if before else POLICY_RESULT,
        origin=tool.origin,
        tool=tool.name,
        rule=", ".join(decision.rule_names),
        facts=decision.facts,
        notes=notes,
        quoted=quoted,
        attribution=urls,
    )


def install_stages(
    pipeline: StageSlots,
    trust: TrustState | Callable[[], TrustState],
    audit: AuditTrail | Callable[[], AuditTrail],
    *,
    policy: Callable[[], Policy | None],
    handler: Callable[[], ElicitationHandler],
    page_url: Callable[[], str],
    resolve: Resolver | None,
) -> None:
    """Put the trust and policy stages into a session's pipeline.

    Before the call: trust (the declaration, resolved; request annotations), then policy.
    After it, ahead of later stages such as redaction: policy (the response phase), then
    trust (propagation, and the marks in the agent view). Without a policy, missing
    annotations read as never set and :data:`~harness.stages.trust.DEFAULT_SHARED` crosses
    origins.
    """

    def settings() -> TrustSettings:
        current = policy()
        return current.trust_settings if current is not None else TrustSettings()

    trust_stage = TrustStage(trust, resolve, settings=settings)
    policy_stage = PolicyStage(trust, audit, policy=policy, handler=handler, page_url=page_url)
    pipeline.before.append(trust_stage.before_call)
    pipeline.before.append(policy_stage.before_call)
    pipeline.after.insert(0, trust_stage.after_call)
    pipeline.after.insert(0, policy_stage.after_call)
