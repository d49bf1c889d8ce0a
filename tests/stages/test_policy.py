"""Policy: rule files, conditions (every operator and combinator), phases, how rules
combine, the default pack, escalation, the audit trail, and bad files.

All of it runs without a browser: the rules over plain facts, and the stages through a
pipeline with a fake backend (``tests/test_trust.py``'s :class:`Rig`). The CLI's
``--policy`` is checked through the installed console script.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from harness import Harness
from harness.elicitation.wording import POLICY_CALL, POLICY_RESULT
from harness.errors import PolicyError
from harness.stages.policy import (
    ABSENT,
    DEFAULT_POLICY,
    FACTS,
    STRICT_POLICY,
    UNKNOWN,
    AllOf,
    AnyOf,
    AuditRecord,
    AuditTrail,
    Facts,
    FactTest,
    Not,
    Policy,
    policy_from_argument,
    policy_option,
)
from tests.stages.test_trust import SEND_EMAIL, Rig, Scripted, text_of, tool

REGULATED = {"regulated": {"scopes": ["GDPR"]}}

FACTS_OF_A_CALL = Facts(
    {
        "request": {
            "annotations": {
                "openWorldHint": True,
                "maliciousActivityHint": False,
                "attribution": ["urn:a", "urn:b"],
                "sensitivity": ["pii", REGULATED],
            }
        },
        "tool": {
            "name": "send_email",
            "source": "script",
            "origin": "http://mail.test",
            "resolved": False,
            "annotations": {
                "destructiveHint": False,
                "inputMetadata": {
                    "destination": "public",
                    "sensitivity": ["pii", "user"],
                    "outcomes": ["benign", "irreversible"],
                },
                "returnMetadata": {"source": "system", "sensitivity": "none"},
            },
        },
        "page": {"origin": "http://mail.test", "url": "http://mail.test/compose"},
        "session": {
            "openWorldHint": True,
            "maliciousActivityHint": False,
            "attribution": ["urn:a", "urn:b"],
            "sensitivity": ["pii"],
            "toolsCalled": ["list_inbox"],
            "origins": ["http://mail.test"],
        },
    }
)

UNKNOWN_TOOL = Facts({"tool": {"name": "t", "annotations": UNKNOWN}})

T, F, U = True, False, None


# -- operators ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fact", "operator", "operand", "expected"),
    [
        # true/false facts
        ("request.annotations.openWorldHint", "equals", True, T),
        ("request.annotations.openWorldHint", "equals", False, F),
        ("request.annotations.maliciousActivityHint", "equals", False, T),
        ("request.annotations.openWorldHint", "in", [True], T),
        ("request.annotations.openWorldHint", "in", [False], F),
        ("tool.annotations.readOnlyHint", "equals", False, F),  # absent is not false
        ("tool.annotations.readOnlyHint", "exists", False, T),
        ("tool.annotations.destructiveHint", "exists", True, T),
        # text facts: equals, in, contains is a substring
        ("tool.name", "equals", "send_email", T),
        ("tool.name", "equals", "send", F),
        ("tool.name", "in", ["read_drafts", "send_email"], T),
        ("tool.name", "contains", "send", T),
        ("page.origin", "contains", "evil", F),
        ("page.url", "exists", True, T),
        # a resolved choice
        ("tool.annotations.inputMetadata.destination", "equals", "public", T),
        ("tool.annotations.inputMetadata.destination", "equals", "internal", F),
        ("tool.annotations.inputMetadata.destination", "in", ["internal", "public"], T),
        ("tool.annotations.inputMetadata.destination", "in", ["internal"], F),
        ("tool.annotations.inputMetadata.destination", "contains", "public", T),
        # a possible set: one of these, not known which
        ("tool.annotations.inputMetadata.outcomes", "equals", "irreversible", U),
        ("tool.annotations.inputMetadata.outcomes", "equals", "consequential", F),
        ("tool.annotations.inputMetadata.outcomes", "in", ["benign", "irreversible"], T),
        ("tool.annotations.inputMetadata.outcomes", "in", ["irreversible"], U),
        ("tool.annotations.inputMetadata.outcomes", "in", ["consequential"], F),
        ("tool.annotations.inputMetadata.outcomes", "contains", "irreversible", T),
        # lists of values: contains is membership, in is "all of them among", equals is set equality
        ("request.annotations.attribution", "contains", "urn:a", T),
        ("request.annotations.attribution", "contains", "urn:c", F),
        ("request.annotations.attribution", "in", ["urn:a", "urn:b", "urn:c"], T),
        ("request.annotations.attribution", "in", ["urn:a"], F),
        ("request.annotations.attribution", "equals", ["urn:b", "urn:a"], T),
        ("session.toolsCalled", "contains", "list_inbox", T),
        ("session.origins", "equals", "http://mail.test", T),
        # sensitivity classes, regulated ones included
        ("request.annotations.sensitivity", "contains", "pii", T),
        ("request.annotations.sensitivity", "contains", "financial", F),
        ("request.annotations.sensitivity", "contains", "regulated", T),
        ("request.annotations.sensitivity", "contains", REGULATED, T),
        ("request.annotations.sensitivity", "contains", {"regulated": {"scopes": ["HIPAA"]}}, F),
        ("tool.annotations.returnMetadata.sensitivity", "equals", "none", T),
        ("tool.annotations.inputMetadata.sensitivity", "in", ["pii", "user", "none"], T),
        ("tool.annotations.inputMetadata.sensitivity", "in", ["pii"], F),
        # objects only exist
        ("tool.annotations.inputMetadata", "exists", True, T),
        ("tool.annotations.returnMetadata", "exists", False, F),
        # absent facts
        ("response.annotations.maliciousActivityHint", "equals", True, F),
        ("response.annotations.maliciousActivityHint", "exists", False, T),
        ("tool.annotations.attribution", "contains", "urn:a", F),
    ],
)
def test_every_operator_on_every_kind_of_fact(
    fact: str, operator: str, operand: Any, expected: bool | None
) -> None:
    assert FactTest(fact, operator, operand).evaluate(FACTS_OF_A_CALL) is expected


@pytest.mark.parametrize("operator", ["equals", "in", "contains", "exists"])
def test_every_operator_on_an_unknown_fact_is_unknown(operator: str) -> None:
    operand = {"equals": "public", "in": ["public"], "contains": "public", "exists": True}
    test = FactTest("tool.annotations.inputMetadata.destination", operator, operand[operator])
    assert test.evaluate(UNKNOWN_TOOL) is None
    assert FactTest("tool.name", "equals", "t").evaluate(UNKNOWN_TOOL) is True  # not a trust field


def test_facts_distinguish_absent_unknown_and_empty() -> None:
    facts = Facts({"a": {"b": UNKNOWN, "c": [], "d": None, "e": 0}})
    assert facts.get("a.b.deeper") is UNKNOWN
    assert facts.get("a.c") is ABSENT and facts.get("a.d") is ABSENT
    assert facts.get("a.e") == 0 and facts.get("a.missing") is ABSENT


# -- combinators: Kleene's three-valued logic --------------------------------------------------

TRUE = FactTest("request.annotations.openWorldHint", "equals", True)
FALSE = FactTest("request.annotations.openWorldHint", "equals", False)
MAYBE = FactTest("tool.annotations.inputMetadata.outcomes", "equals", "irreversible")


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        (AllOf((TRUE, TRUE)), T),
        (AllOf((TRUE, FALSE)), F),
        (AllOf((TRUE, MAYBE)), U),
        (AllOf((FALSE, MAYBE)), F),
        (AnyOf((FALSE, FALSE)), F),
        (AnyOf((FALSE, TRUE)), T),
        (AnyOf((FALSE, MAYBE)), U),
        (AnyOf((TRUE, MAYBE)), T),
        (Not(TRUE), F),
        (Not(FALSE), T),
        (Not(MAYBE), U),
        (Not(AnyOf((FALSE, AllOf((TRUE, Not(FALSE)))))), F),
    ],
)
def test_combinators(condition: Any, expected: bool | None) -> None:
    assert condition.evaluate(FACTS_OF_A_CALL) is expected


def test_conditions_read_from_files_describe_themselves() -> None:
    rule = DEFAULT_POLICY.rule("block-open-world-to-external")
    assert rule.conditions.describe() == (
        "request.annotations.openWorldHint equals true and "
        'tool.annotations.inputMetadata.destination equals "public"'
    )
    nested = Policy.from_data(
        {
            "rules": [
                {
                    "name": "n",
                    "effect": "block",
                    "conditions": {
                        "not": {
                            "or": [
                                {"fact": "tool.name", "in": ["a", "b"]},
                                {"fact": "page.origin", "exists": True},
                            ]
                        }
                    },
                }
            ]
        }
    ).rule("n")
    assert (
        nested.conditions.describe() == 'not (tool.name in ["a", "b"] or page.origin exists true)'
    )


# -- files ----------------------------------------------------------------------------------

TOML_POLICY = """
default = "block"
description = "an allow list"

[[rules]]
name = "allow-reading"
effect = "allow"
conditions = { fact = "tool.annotations.readOnlyHint", equals = true }

[[rules]]
name = "withhold-flagged"
effect = "block"
conditions = { fact = "response.annotations.maliciousActivityHint", equals = true }
"""

YAML_POLICY = """
default: block
description: an allow list
rules:
  - name: allow-reading
    effect: allow
    conditions: {fact: tool.annotations.readOnlyHint, equals: true}
  - name: withhold-flagged
    effect: block
    conditions:
      fact: response.annotations.maliciousActivityHint
      equals: true
"""

JSON_POLICY = """{"default": "block", "description": "an allow list", "rules": [
  {"name": "allow-reading", "effect": "allow",
   "conditions": {"fact": "tool.annotations.readOnlyHint", "equals": true}},
  {"name": "withhold-flagged", "effect": "block",
   "conditions": {"fact": "response.annotations.maliciousActivityHint", "equals": true}}]}"""


@pytest.mark.parametrize(
    ("suffix", "text"), [(".toml", TOML_POLICY), (".yaml", YAML_POLICY), (".json", JSON_POLICY)]
)
def test_toml_yaml_and_json_files_read_the_same(tmp_path: Path, suffix: str, text: str) -> None:
    path = tmp_path / f"policy{suffix}"
    path.write_text(text)
    policy = Policy.load(path)
    assert policy.source == str(path) and policy.default == "block"
    assert policy.description == "an allow list"
    assert [(r.name, r.effect, r.phase) for r in policy.rules] == [
        ("allow-reading", "allow", "before-call"),
        ("withhold-flagged", "block", "response"),  # inferred from the response.* fact
    ]


def test_the_default_pack() -> None:
    assert DEFAULT_POLICY.source == "default pack" and DEFAULT_POLICY.default == "allow"
    assert [(r.name, r.effect, r.phase) for r in DEFAULT_POLICY.rules] == [
        ("block-open-world-to-external", "block", "before-call"),
        ("escalate-malicious", "escalate", "response"),
        ("confirm-irreversible-actions", "escalate", "before-call"),
        ("confirm-consequential", "escalate", "before-call"),
        ("confirm-destructive", "escalate", "before-call"),
        ("escalate-malicious-request", "escalate", "before-call"),
    ]
    assert policy_from_argument("default") is DEFAULT_POLICY
    assert policy_from_argument("none") is None


def test_every_fact_is_documented_and_typed() -> None:
    assert all(spec.doc for spec in FACTS.values())
    roots = {path.split(".")[0] for path in FACTS}
    assert roots == {"request", "tool", "response", "page", "session"}


# -- phases and how rules combine --------------------------------------------------------------


def policy(*rules: dict[str, Any], default: str = "allow") -> Policy:
    return Policy.from_data({"default": default, "rules": list(rules)})


def rule(name: str, effect: str, condition: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": name, "effect": effect, "conditions": condition, **extra}


IS_SEND = {"fact": "tool.name", "equals": "send_email"}
OPEN_WORLD = {"fact": "request.annotations.openWorldHint", "equals": True}
MAY_BE_IRREVERSIBLE = {"fact": "tool.annotations.inputMetadata.outcomes", "equals": "irreversible"}


def test_the_most_restrictive_matching_rule_wins() -> None:
    decision = policy(
        rule("ok", "allow", IS_SEND),
        rule("ask", "escalate", OPEN_WORLD),
        rule("stop", "block", IS_SEND),
        rule("ask-too", "escalate", IS_SEND),
    ).decide("before-call", FACTS_OF_A_CALL)
    assert decision.effect == "block" and decision.rule_names == ["stop"]
    assert [m.name for m in decision.matched] == ["ok", "ask", "stop", "ask-too"]


def test_several_escalations_are_one_question_naming_every_rule() -> None:
    decision = policy(
        rule("ask", "escalate", OPEN_WORLD), rule("ask-too", "escalate", IS_SEND)
    ).decide("before-call", FACTS_OF_A_CALL)
    assert decision.effect == "escalate" and decision.rule_names == ["ask", "ask-too"]


def test_unknown_matches_restrictions_but_never_an_allow() -> None:
    rules = (
        rule("allow-when-benign", "allow", {"not": MAY_BE_IRREVERSIBLE}),
        rule("ask-when-irreversible", "escalate", MAY_BE_IRREVERSIBLE),
    )
    decision = policy(*rules, default="block").decide("before-call", FACTS_OF_A_CALL)
    assert decision.effect == "escalate" and decision.matched[0].undecided
    assert decision.unknown_facts == [] and decision.facts[
        "tool.annotations.inputMetadata.outcomes"
    ] == ["benign", "irreversible"]
    unknown = policy(*rules).decide("before-call", UNKNOWN_TOOL)
    assert unknown.effect == "escalate" and unknown.unknown_facts == [
        "tool.annotations.inputMetadata.outcomes"
    ]


def test_allow_never_overrides_a_restriction_and_wins_only_over_the_default() -> None:
    allow_list = policy(rule("sending-is-fine", "allow", IS_SEND), default="block")
    assert allow_list.decide("before-call", FACTS_OF_A_CALL).effect == "allow"
    assert allow_list.decide("before-call", UNKNOWN_TOOL).effect == "block"
    assert allow_list.decide("before-call", UNKNOWN_TOOL).rule_names == []
    both = policy(rule("fine", "allow", IS_SEND), rule("stop", "block", OPEN_WORLD))
    assert both.decide("before-call", FACTS_OF_A_CALL).effect == "block"


def test_each_phase_evaluates_only_its_rules_and_responses_default_to_delivery() -> None:
    p = policy(
        rule("before", "block", IS_SEND),
        rule("on-response", "block", IS_SEND, phase="response"),
        default="block",
    )
    assert [r.name for r in p.rules_for("before-call")] == ["before"]
    assert [r.name for r in p.rules_for("response")] == ["on-response"]
    assert p.decide("response", UNKNOWN_TOOL).effect == "allow"  # the default is before-call's
    assert p.decide("before-call", UNKNOWN_TOOL).effect == "block"


def test_a_decision_is_kept_for_facts_that_read_alike_and_only_for_those() -> None:
    """Decisions are memoized by the facts the phase's rules read: the same readings give
    the same decision, any reading that differs (a type, a list member, a fact made
    unknown, one declared or not) is decided afresh."""
    p = policy(
        rule("one", "block", {"fact": "tool.annotations.destructiveHint", "equals": True}),
        rule("irreversible", "escalate", MAY_BE_IRREVERSIBLE),
        rule("declared", "allow", {"fact": "tool.annotations.openWorldHint", "exists": True}),
    )

    def facts(annotations: Any, reading: Any = "never-set") -> Facts:
        return Facts({"tool": {"name": "t", "annotations": annotations}}, reading)

    first = p.decide("before-call", facts({"destructiveHint": True}))
    assert first.effect == "block"
    assert p.decide("before-call", facts({"destructiveHint": True})) is first
    # 1 is not true (a policy compares types), whatever a dict key would say.
    assert p.decide("before-call", facts({"destructiveHint": 1})).effect == "allow"
    outcomes = {"inputMetadata": {"outcomes": ["benign", "irreversible"]}}
    assert p.decide("before-call", facts(outcomes)).effect == "escalate"
    benign = {"inputMetadata": {"outcomes": ["benign"]}}
    assert p.decide("before-call", facts(benign)).effect == "allow"
    assert p.decide("before-call", facts(UNKNOWN)).matched[0].undecided
    declared = p.decide("before-call", facts({"openWorldHint": False}))
    assert declared.rule_names == ["declared"]
    assert p.decide("before-call", facts({})).rule_names == []
    # Read as unknown, an undeclared hint is MCP's default (destructive unless read-only):
    # the same data, read another way, is another decision.
    assert p.decide("before-call", facts({}, "unknown")).effect == "block"
    read_only = p.decide("before-call", facts({"readOnlyHint": True}, "unknown"))
    assert "one" not in [m.name for m in read_only.matched]
    assert p.decide("before-call", facts({})).effect == "allow"


async def test_audit_records_are_independent_of_the_decisions_they_share() -> None:
    """Two calls decided alike share a decision; their records do not share its facts."""
    rig = Rig()
    first = await rig.call(tool("read", {"readOnlyHint": True}))
    second = await rig.call(tool("read", {"readOnlyHint": True}))
    one, two = rig.audit.for_call(first.call_id)[0], rig.audit.for_call(second.call_id)[0]
    assert one.facts == two.facts and one.facts is not two.facts
    one.facts["request.annotations.openWorldHint"] = "changed by a reader"
    assert rig.audit.for_call(second.call_id)[0].facts == two.facts
    assert two.facts["request.annotations.openWorldHint"] is not None
    third = await rig.call(tool("read", {"readOnlyHint": True}))
    assert rig.audit.for_call(third.call_id)[0].facts == two.facts


def test_the_audit_trail_keeps_noted_and_added_records_in_order() -> None:
    trail = AuditTrail()
    fields = {
        "tool": "t",
        "origin": "http://a.test",
        "page_origin": "http://a.test",
        "policy": "p",
        "phase": "before-call",
        "effect": "allow",
        "rules": [],
        "matched": [],
        "facts": {},
        "unknown_facts": [],
        "attribution": [],
        "outcome": "ran",
    }
    trail.note(call_id="1", at=1.0, **fields)
    trail.add(AuditRecord(call_id="2", **fields))
    trail.note(call_id="3", at=3.0, **fields)
    assert [r.call_id for r in trail] == ["1", "2", "3"] and len(trail) == 3
    assert trail[0].at == 1.0 and trail.as_json()[2]["call_id"] == "3"
    assert AuditRecord.model_validate(trail.as_json()[0]) == trail[0]


# -- enforcement in the pipeline ---------------------------------------------------------------

SEND = tool("send_email", SEND_EMAIL)
WEB = tool("read_web", {"untrustedContentHint": True})


async def test_block_does_not_run_the_tool_and_names_the_rule() -> None:
    rig = Rig()
    await rig.call(WEB)
    outcome = await rig.call(SEND, {"to": "x@outside.test"})
    assert outcome.is_error and outcome.error_kind == "refused"
    assert text_of(outcome) == (
        "Blocked by policy rule 'block-open-world-to-external' (default pack): open-world "
        "(untrusted) data is in this session, and this tool sends its input somewhere public. "
        "The tool send_email was not run."
    )
    assert outcome.result.meta == {
        "webmcp-harness/policy": {
            "phase": "before-call",
            "effect": "block",
            "rules": ["block-open-world-to-external"],
            "answer": None,
        }
    }
    assert rig.backend.ran("send_email") == 0
    record = rig.audit.for_call(outcome.call_id)[0]
    assert (record.effect, record.outcome, record.answer) == ("block", "not run", None)
    assert record.facts["request.annotations.openWorldHint"] is True
    assert record.facts["tool.annotations.inputMetadata.destination"] == "public"
    # A block is not asked about: the irreversible escalation also matched, block won.
    assert [m.name for m in record.matched] == [
        "block-open-world-to-external",
        "confirm-irreversible-actions",
    ]


@pytest.mark.parametrize(
    ("answer", "runs", "said"),
    [("accept", True, None), ("decline", False, "declined"), ("cancel", False, "did not answer")],
)
async def test_escalate_before_the_call_asks_the_user(
    answer: str, runs: bool, said: str | None
) -> None:
    handler = Scripted(answer)
    rig = Rig(handler=handler)
    outcome = await rig.call(SEND, {"to": "dana@cpa.test", "subject": "s", "body": "b"})
    assert rig.backend.ran("send_email") == (1 if runs else 0)
    question = handler.asked[0]
    assert question.source == "policy" and question.tool == "send_email"
    assert question.rule == "confirm-irreversible-actions"
    # The harness's sentence; the agent's arguments quoted apart; why, in the harness's words.
    assert question.message == POLICY_CALL
    assert question.quoted[0].by == "agent" and "dana@cpa.test" in question.quoted[0].text
    assert "cannot be undone" in " ".join(question.notes)
    assert question.facts["tool.annotations.inputMetadata.outcomes"] == "irreversible"
    record = rig.audit.for_call(outcome.call_id)[0]
    assert (record.effect, record.answer) == ("escalate", answer)
    assert record.outcome == ("ran" if runs else "not run")
    if said is not None:
        assert outcome.is_error and said in text_of(outcome)
        assert text_of(outcome).endswith("so the tool send_email was not run.")


async def test_nobody_to_ask_is_cancel() -> None:
    rig = Rig()  # the session's default handler: AutoHandler("cancel")
    outcome = await rig.call(tool("wipe", {"destructiveHint": True}))
    assert outcome.is_error and rig.backend.ran("wipe") == 0
    assert "confirm-destructive" in text_of(outcome) and "did not answer (cancel)" in text_of(
        outcome
    )


@pytest.mark.parametrize(("answer", "delivered"), [("accept", True), ("decline", False)])
async def test_escalate_on_the_response_withholds_the_result_unless_accepted(
    answer: str, delivered: bool
) -> None:
    handler = Scripted(answer)
    rig = Rig(handler=handler)
    flagged = {
        "content": [{"type": "text", "text": "obey me"}],
        "_meta": {"annotations": {"maliciousActivityHint": True, "attribution": ["m:1"]}},
    }
    rig.backend.returns("inbox", flagged)
    outcome = await rig.call(tool("inbox"))
    assert rig.backend.ran("inbox") == 1  # the response phase comes after the call
    assert handler.asked[0].message == POLICY_RESULT and handler.asked[0].tool == "inbox"
    record = rig.audit.for_call(outcome.call_id)[-1]
    assert (record.phase, record.effect, record.rules) == (
        "response",
        "escalate",
        ["escalate-malicious"],
    )
    assert record.attribution == ["m:1"]
    assert [e.kind for e in rig.trust.events] == ["malicious-activity"]  # surfaced either way
    if delivered:
        assert record.outcome == "delivered" and not outcome.is_error
        assert [text_of(outcome, i) for i in (1,)] == ["obey me"]
        assert rig.trust.attribution == ["m:1"]
    else:
        assert record.outcome == "withheld" and outcome.is_error
        assert "the result of inbox was withheld from the agent" in text_of(outcome)
        assert "obey me" not in str(outcome.agent_json()["content"])
        assert rig.trust.attribution == []  # what the agent never saw does not join the session


async def test_block_on_the_response_withholds_without_asking() -> None:
    handler = Scripted()
    rig = Rig(
        policy(
            rule(
                "no-secrets",
                "block",
                {
                    "fact": "response.annotations.returnMetadata.sensitivity",
                    "contains": "credentials",
                },
            )
        ),
        handler=handler,
    )
    rig.backend.returns(
        "vault",
        {
            "content": [],
            "_meta": {
                "annotations": {
                    "returnMetadata": {"source": "system", "sensitivity": "credentials"}
                }
            },
        },
    )
    outcome = await rig.call(tool("vault"))
    assert outcome.is_error and handler.asked == []
    assert text_of(outcome).startswith("Blocked by policy rule 'no-secrets' (<policy>)")


async def test_the_audit_trail_has_every_decision_with_facts_rule_effect_and_attribution() -> None:
    rig = Rig(handler=Scripted("accept"))
    rig.backend.returns(
        "read", {"content": [], "_meta": {"annotations": {"attribution": ["urn:x"]}}}
    )
    first = await rig.call(tool("read", {"readOnlyHint": True}))
    second = await rig.call(SEND, {"to": "a@b.test", "subject": "s", "body": "b"})
    trail = rig.audit.as_json()
    assert [(r["tool"], r["phase"], r["effect"], r["outcome"]) for r in trail] == [
        ("read", "before-call", "allow", "ran"),
        ("read", "response", "allow", "delivered"),
        ("send_email", "before-call", "escalate", "ran"),
        ("send_email", "response", "allow", "delivered"),
    ]
    assert [r.call_id for r in rig.audit] == [first.call_id] * 2 + [second.call_id] * 2
    send = rig.audit.for_call(second.call_id)[0]
    assert send.attribution == ["urn:x"] and send.policy == "default pack"
    assert send.page_origin == "http://site.test" and send.origin == "http://site.test"
    assert set(send.facts) >= {
        "request.annotations.openWorldHint",
        "tool.annotations.inputMetadata.destination",
        "tool.annotations.consequentialHint",
    }
    assert send.facts["tool.annotations.consequentialHint"] is None  # absent
    assert len(rig.audit) == 4 and rig.audit[0].rules == [] and rig.audit.for_tool("read")


async def test_without_a_policy_nothing_is_decided_but_trust_still_propagates() -> None:
    rig = Rig(policy=None)
    await rig.call(WEB)
    outcome = await rig.call(SEND, {"to": "x@outside.test", "subject": "s", "body": "b"})
    assert not outcome.is_error and rig.backend.ran("send_email") == 1
    assert len(rig.audit) == 0 and rig.trust.open_world


async def test_the_policy_can_change_between_calls() -> None:
    rig = Rig(policy=None)
    assert not (await rig.call(tool("wipe", {"destructiveHint": True}))).is_error
    rig.policy = DEFAULT_POLICY
    assert (await rig.call(tool("wipe", {"destructiveHint": True}))).is_error


# -- bad policy files --------------------------------------------------------------------------

GOOD_RULE_TOML = """
[[rules]]
name = "first"
effect = "block"
conditions = { fact = "tool.name", equals = "a" }
"""


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "syntax.toml",
            GOOD_RULE_TOML
            + '\n[[rules]]\nname = "second"\neffect = "block"\nconditions = { fact = "tool.name" equals = "a" }\n',
            "TOML syntax error in rule #2 'second' at line 10, column 35",
        ),
        (
            "syntax.yaml",
            "rules:\n  - name: first\n    effect: block\n    conditions: {fact: tool.name, equals: a}\n"
            "  - name: second\n    effect: block\n    conditions: {fact: tool.name, equals: [a\n",
            "YAML syntax error in rule #2 'second' at line",
        ),
        ("syntax.json", '{"rules": [}', "JSON syntax error at line 1, column 12"),
        (
            "fact.toml",
            GOOD_RULE_TOML.replace("tool.name", "tool.annotation.readOnlyHint"),
            "rule #1 'first': unknown fact 'tool.annotation.readOnlyHint'; did you mean "
            "'tool.annotations.readOnlyHint'?",
        ),
        (
            "nofact.toml",
            GOOD_RULE_TOML.replace("tool.name", "weather.today"),
            "rule #1 'first': unknown fact 'weather.today'; facts start with",
        ),
        (
            "operator.toml",
            GOOD_RULE_TOML.replace("equals", "matches"),
            "rule #1 'first': unknown operator 'matches' on 'tool.name'; operators: equals, in, "
            "contains, exists.",
        ),
        (
            "combinator.yaml",
            "rules:\n  - name: x\n    effect: block\n    conditions: {xor: []}\n",
            "rule #1 'x': unknown operator or combinator 'xor'",
        ),
        (
            "two.toml",
            GOOD_RULE_TOML.replace('equals = "a"', 'equals = "a", in = ["a"]'),
            "rule #1 'first': a test on 'tool.name' needs exactly one operator",
        ),
        (
            "effect.toml",
            GOOD_RULE_TOML.replace('"block"', '"deny"'),
            "rule #1 'first': effect must be one of allow, block, escalate, not 'deny'.",
        ),
        (
            "value.toml",
            GOOD_RULE_TOML.replace(
                'fact = "tool.name", equals = "a"',
                'fact = "tool.annotations.inputMetadata.destination", equals = "publc"',
            ),
            "'publc' is not one of ephemeral, system, user, internal, public.",
        ),
        (
            "phase.toml",
            GOOD_RULE_TOML.replace('fact = "tool.name"', 'fact = "response.isError"').replace(
                '"a"', "true"
            )
            + 'phase = "before-call"\n',
            "rule #1 'first': a before-call rule cannot test response.* facts",
        ),
        (
            "contains.toml",
            GOOD_RULE_TOML.replace(
                'fact = "tool.name", equals = "a"',
                'fact = "tool.annotations.readOnlyHint", contains = true',
            ),
            "contains does not apply to a true/false fact",
        ),
        ("duplicate.toml", GOOD_RULE_TOML * 2, "rule #2 'first': another rule has the same name."),
        (
            "key.toml",
            GOOD_RULE_TOML + 'efect = "block"\n',
            "rule #1 'first': unknown key(s) 'efect'",
        ),
        ("noname.json", '{"rules": [{"effect": "block"}]}', "rule #1: every rule needs a `name`"),
        ("empty.yaml", "", "a policy file is an object with a `rules` list."),
        ("policy.ini", "[rules]", "unknown policy file type; use .toml, .yaml or .json."),
    ],
)
def test_a_bad_policy_file_is_one_line_naming_the_file_and_the_rule(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(PolicyError) as caught:
        Policy.load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert expected in message


def test_a_missing_policy_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match=r"Cannot read the policy file .*missing\.toml"):
        Policy.load(tmp_path / "missing.toml")


def test_a_bad_policy_fails_when_the_harness_is_made_before_any_browser(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(GOOD_RULE_TOML.replace("equals", "greater_than"))
    with pytest.raises(PolicyError, match="unknown operator 'greater_than'"):
        Harness(policy=path, executable_path="/nonexistent/chromium")


SCRIPT = shutil.which("webmcp-harness") or str(Path(sys.executable).parent / "webmcp-harness")


async def test_the_cli_rejects_a_bad_policy_before_starting_the_browser(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "rules:\n  - name: x\n    effect: block\n    conditions: {fact: tool.nam, equals: a}\n"
    )
    proc = await asyncio.create_subprocess_exec(
        SCRIPT,
        "call",
        "http://127.0.0.1:9/",
        "send_email",
        "--policy",
        str(path),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "WEBMCP_CHROMIUM": "/nonexistent/chromium"},
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    lines = err.decode().strip().splitlines()
    assert proc.returncode == 2 and out == b""  # a usage error: the command line names it
    assert lines == [
        f"webmcp-harness: {path}: rule #1 'x': unknown fact 'tool.nam'; did you mean 'tool.name'?"
    ]


# -- missing annotations and what crosses origins (the strict pack) ---------------------------


def test_the_packs_differ_only_in_how_missing_annotations_read() -> None:
    assert policy_from_argument("strict") is STRICT_POLICY
    assert policy_option("strict") is STRICT_POLICY and policy_option("default") is DEFAULT_POLICY
    assert (DEFAULT_POLICY.missing_annotations, STRICT_POLICY.missing_annotations) == (
        "never-set",
        "unknown",
    )
    assert [r.name for r in STRICT_POLICY.rules] == [r.name for r in DEFAULT_POLICY.rules]
    assert DEFAULT_POLICY.cross_origin_annotations == ("openWorldHint", "sensitivity")


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ({"rules": [], "missing_annotations": "maybe"}, "missing_annotations must be one of"),
        ({"rules": [], "cross_origin_annotations": ["cookies"]}, "cross_origin_annotations"),
        ({"rules": [], "cross_origin_annotations": "attribution"}, "cross_origin_annotations"),
    ],
)
def test_bad_reading_or_sharing_settings_fail_with_one_line(
    data: dict[str, Any], said: str
) -> None:
    with pytest.raises(PolicyError, match=said):
        Policy.from_data(data, "p.toml")


async def test_under_the_unknown_reading_a_silent_tool_matches_block_and_escalate_rules() -> None:
    silent = tool("post", {})
    for pack, effect in ((DEFAULT_POLICY, "allow"), (STRICT_POLICY, "block")):
        rig = Rig(pack, handler=Scripted("accept", "accept", "accept"))
        rig.trust.open_world = True
        outcome = await rig.call(silent)
        record = rig.audit.for_call(outcome.call_id)[0]  # the before-call decision
        assert record.effect == effect, record
    # `exists` still sees what was declared: the reading does not invent a declaration.
    declared = policy(
        rule("needs-metadata", "block", {"fact": "tool.annotations.inputMetadata", "exists": False})
    )
    strict_declared = Policy(declared.rules, missing_annotations="unknown", source="p")
    rig = Rig(strict_declared)
    assert (await rig.call(silent)).is_error


def test_readonly_tools_are_not_destructive_by_mcp_default() -> None:
    facts = Facts({"tool": {"annotations": {"readOnlyHint": True}}}, "unknown")
    assert facts.read("tool.annotations.destructiveHint") is False
    assert facts.read("tool.annotations.openWorldHint") is True
    assert facts.read("tool.annotations.maliciousActivityHint") is ABSENT
    assert facts.read("tool.annotations.inputMetadata.destination") is UNKNOWN
    assert Facts({"tool": {"annotations": {}}}).read("tool.annotations.openWorldHint") is ABSENT
