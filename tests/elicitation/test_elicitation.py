"""Elicitation: the form's rules, auto and scripted answers, the record, tool questions, --elicit."""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp.types import CallToolResult, TextContent

from harness import BrowserPool, ConfigError, Harness
from harness.cli import main as cli_main
from harness.elicitation.answers import ScriptedHandler, load_answers
from harness.elicitation.base import (
    AutoHandler,
    ElicitationRequest,
    ElicitationResult,
    RecordingHandler,
    TimeLimit,
    Unanswered,
    ask,
    unanswered,
)
from harness.elicitation.browser import BrowserHandler
from harness.elicitation.choice import handler_from_option
from harness.elicitation.form import answer_problems, field_problem, value_from_text
from harness.elicitation.questions import answer_tool_question
from harness.elicitation.terminal import TerminalHandler
from harness.elicitation.wording import FORM_REVIEW, NAVIGATION_LEAVE, POLICY_CALL, TOOL_INTERACT
from harness.models import CallRequest
from harness.schemas import SCHEMA_BUDGET_S
from tests.cli.test_cli import run
from tests.conftest import PageServer
from tests.elicitation_forms import TODO_SCHEMA, todo_request, with_fields

EXAMPLES = Path(__file__).parent.parent.parent / "examples" / "answers"

# Every kind of HTML constraint, for the rules' tests.
RULES_SCHEMA = with_fields(
    code={"type": "string", "pattern": "^[A-Z]{3}$"},
    email={"type": "string", "format": "email"},
    urgent={"type": "boolean"},
)


class Silent:
    """A user who never answers."""

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


class Fixed:
    """Returns one prepared answer."""

    def __init__(self, result: ElicitationResult) -> None:
        self.result = result

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        return self.result


# ---- the form's rules -------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "problem"),
    [
        ("description", "ab", "must be at least 3 characters long"),
        ("description", "x" * 141, "must be at most 140 characters long"),
        ("description", 42, "must be text"),
        ("priority", "urgent", "must be one of: low, medium, high"),
        ("count", 0, "must be at least 1"),
        ("count", 11, "must be at most 10"),
        ("count", 2.5, "must be a whole number"),
        ("code", "abc", "must match the pattern ^[A-Z]{3}$"),
        ("email", "not-an-address", "must be an email address"),
        ("urgent", "yes", "must be yes or no"),
    ],
)
def test_each_html_constraint_is_a_field_problem(name: str, value: Any, problem: str) -> None:
    assert field_problem(RULES_SCHEMA["properties"][name], value) == problem


def test_a_fitting_answer_has_no_problems_and_required_is_checked() -> None:
    request = todo_request()
    good = {"description": "Buy oat milk", "priority": "high", "count": 3}
    assert answer_problems(request.requested_schema, good) == {}
    assert answer_problems(request.requested_schema, {"priority": "low"}) == {
        "description": "is required"
    }


def test_problems_never_repeat_the_value() -> None:
    secret = {"type": "string", "format": "password", "minLength": 12}
    problem = field_problem(secret, "hunter2")
    assert problem == "must be at least 12 characters long"


@pytest.mark.parametrize(
    ("pattern", "answer", "problem"),
    [
        (r"^\p{Lu}", "Ärger", None),  # `\p{…}`: ECMAScript's, an error to Python's `re`
        (r"^\p{Lu}", "ärger", r"must match the pattern ^\p{Lu}"),
        (r"^(?<w>a)\k<w>$", "aa", None),  # named groups as JavaScript writes them
        ("^a$", "a\n", "must match the pattern ^a$"),  # `re`'s `$` takes a final newline
    ],
)
def test_a_field_pattern_is_read_as_ecmascript(pattern: str, answer: str, problem: str) -> None:
    # A question's field pattern is the page's, written for JavaScript (the browser handler's
    # page checks it so): the answer is judged as the page would judge it.
    assert field_problem({"type": "string", "pattern": pattern}, answer) == problem


@pytest.mark.timeout(60)
def test_a_field_pattern_that_backtracks_is_stopped_within_the_budget() -> None:
    # Python's `re` on `^(a+)+$` and 32 a's and a "!" runs for hours, and nothing stops it:
    # one answer held the whole process.
    started = time.monotonic()
    problem = field_problem({"type": "string", "pattern": "^(a+)+$"}, "a" * 32 + "!")
    assert time.monotonic() - started < SCHEMA_BUDGET_S + 3
    assert problem is not None and "in time" in problem


@pytest.mark.parametrize(
    ("prop", "text", "value"),
    [
        ({"type": "integer"}, "7", 7),
        ({"type": "number"}, "2.5", 2.5),
        ({"type": "boolean"}, "yes", True),
        ({"type": "boolean"}, "n", False),
        ({"type": "string", "enum": ["low", "high"]}, "2", "high"),
        ({"type": "string", "enum": ["low", "high"]}, "low", "low"),
        (
            {"oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]},
            "Green",
            "g",
        ),
        ({"type": "array", "items": {"enum": ["a", "b", "c"]}}, "a, 3", ["a", "c"]),
        ({"type": "string"}, "  kept as typed ", "  kept as typed "),
    ],
)
def test_typed_text_becomes_the_field_type(prop: dict[str, Any], text: str, value: Any) -> None:
    assert value_from_text(prop, text) == value


@pytest.mark.parametrize(
    ("prop", "text"),
    [({"type": "integer"}, "2.5"), ({"type": "number"}, "many"), ({"enum": ["a"]}, "b")],
)
def test_unreadable_text_is_a_value_error(prop: dict[str, Any], text: str) -> None:
    with pytest.raises(ValueError):
        value_from_text(prop, text)


# ---- ask: the safe side ---------------------------------------------------


async def test_unanswered_within_the_time_limit_is_cancel() -> None:
    result = await ask(Silent(), todo_request(timeout=0.2))
    assert result.action == "cancel" and result.reason == "no answer within 0.2 s"


async def test_time_limit_wrapper_caps_the_request_limit() -> None:
    started = asyncio.get_running_loop().time()
    result = await ask(TimeLimit(Silent(), 0.2), todo_request(timeout=300))
    assert result.action == "cancel" and result.reason == "no answer within 0.2 s"
    assert asyncio.get_running_loop().time() - started < 2
    with pytest.raises(ConfigError):
        TimeLimit(Silent(), 0)


async def test_an_accept_that_breaks_the_rules_is_cancel_never_passed_on() -> None:
    bad = ElicitationResult(action="accept", content={"description": "ab"})
    result = await ask(Fixed(bad), todo_request())
    assert result.action == "cancel" and result.content is None
    assert result.reason == (
        "the answer breaks the form's rules: description must be at least 3 characters long"
    )


async def test_a_failing_handler_is_cancel() -> None:
    class Broken:
        async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
            raise RuntimeError("display gone")

    result = await ask(Broken(), todo_request())
    assert result.action == "cancel"
    assert result.reason == "the elicitation handler failed: RuntimeError: display gone"


# ---- auto -------------------------------------------------------------------


async def test_auto_accept_takes_defaults_then_the_agents_values() -> None:
    schema = {
        "type": "object",
        "properties": {
            "description": {"type": "string", "default": "from the form"},
            "priority": {"type": "string", "enum": ["low", "high"], "default": "low"},
        },
    }
    request = todo_request(requested_schema=schema, prefilled={"description": "from the agent"})
    result = await ask(AutoHandler("accept"), request)
    assert result.action == "accept"
    assert result.content == {"description": "from the agent", "priority": "low"}


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_auto_decline_and_cancel(action: str) -> None:
    result = await ask(AutoHandler(action), todo_request())  # type: ignore[arg-type]
    assert result.action == action and result.content is None


async def test_auto_accept_without_a_required_value_is_cancel() -> None:
    result = await ask(AutoHandler("accept"), todo_request(prefilled={}))
    assert result.action == "cancel" and "description is required" in (result.reason or "")


# ---- scripted ---------------------------------------------------------------


def policy_request(rule: str = "confirm-irreversible-actions") -> ElicitationRequest:
    return ElicitationRequest(
        source="policy",
        message=POLICY_CALL,
        tool="add_todo",
        rule=rule,
        facts={"consequentialHint": True},
    )


async def test_the_issue_format_first_matching_entry_answers() -> None:
    handler = ScriptedHandler.from_file(EXAMPLES / "todo.yaml")
    answered = await ask(handler, todo_request(prefilled={"description": "Buy milk", "count": 2}))
    # The user's answer wins over the agent's value; untouched fields keep what was shown.
    assert answered.action == "accept"
    assert answered.content == {"description": "Buy oat milk", "count": 2}
    assert answered.reason == "scripted answer #1"
    declined = await ask(handler, policy_request())
    assert declined.action == "decline" and declined.reason == "scripted answer #2"


async def test_all_keys_of_an_entry_must_match() -> None:
    handler = ScriptedHandler.from_data(
        {"answers": [{"tool": "add_todo", "field": "title", "action": "accept"}]}
    )
    result = await ask(handler, todo_request())  # add_todo, but no field "title"
    assert result.action == "cancel"


async def test_message_matches_a_substring_of_the_harness_s_own_sentence() -> None:
    handler = ScriptedHandler.from_data(
        {"answers": [{"message": "let the agent call", "action": "accept"}]}
    )
    assert (await ask(handler, policy_request())).action == "accept"


async def test_unmatched_is_cancel_with_the_reason_and_recorded() -> None:
    handler = ScriptedHandler.from_file(EXAMPLES / "decline-policies.json")
    recorder = RecordingHandler(handler)
    request = policy_request(rule="confirm-payments").model_copy(update={"tool": "pay"})
    result = await ask(recorder, request)
    assert result.action == "cancel"
    assert result.reason is not None and result.reason.startswith("no scripted answer matches")
    assert "tool='pay'" in result.reason and "rule='confirm-payments'" in result.reason
    assert handler.misses == [request]
    assert recorder.records[0].action == "cancel" and recorder.records[0].reason == result.reason


async def test_origins_are_matched_as_the_file_names_them_and_kept_as_they_are() -> None:
    # An experiment's worker serves the store on a free port (here 8101, todo's fixed one)
    # and the attacker on another; the file names them by their fixed origins.
    served = {
        "http://127.0.0.1:8101": "http://127.0.0.1:8107",
        "http://127.0.0.1:43001": "http://127.0.0.1:8108",
    }
    handler = ScriptedHandler.from_data(
        {
            "answers": [
                {"origin": "http://127.0.0.1:8101", "action": "decline"},  # todo's
                {"source": "form-review", "origin": "http://127.0.0.1:8107", "action": "accept"},
                {"destination": "http://127.0.0.1:8108", "action": "accept"},
            ]
        },
        served,
    )
    review = ElicitationRequest(
        source="form-review", message=FORM_REVIEW, origin="http://127.0.0.1:8101"
    )
    answered = await ask(handler, review)  # the store's question, not todo's
    assert (answered.action, answered.reason) == ("accept", "scripted answer #2")
    leave = ElicitationRequest(
        source="navigation",
        message=NAVIGATION_LEAVE,
        origin="http://127.0.0.1:9",
        destination="http://127.0.0.1:43001",
    )
    assert (await ask(handler, leave)).reason == "scripted answer #3"
    elsewhere = review.model_copy(update={"source": "policy", "origin": "http://127.0.0.1:43001"})
    missed = await ask(handler, elsewhere)
    assert missed.action == "cancel" and missed.reason is not None
    assert "origin='http://127.0.0.1:43001' (named 'http://127.0.0.1:8108')" in missed.reason
    assert handler.misses == [elsewhere]  # the question as it was asked


def test_a_malformed_answers_file_says_what_is_wrong(tmp_path: Path) -> None:
    typo = tmp_path / "answers.yaml"
    typo.write_text("answers:\n  - tool: add_todo\n    action: acept\n")
    with pytest.raises(ConfigError, match=r"answers\.0\.action"):
        load_answers(typo)
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("answers:\n  - tol: add_todo\n    action: accept\n")
    with pytest.raises(ConfigError, match=r"answers\.0\.tol"):
        load_answers(unknown)
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text("answers:\n  - rule: r\n    action: decline\n    values: {a: 1}\n")
    with pytest.raises(ConfigError, match="values only go with action: accept"):
        load_answers(mixed)
    with pytest.raises(ConfigError, match="Cannot read"):
        load_answers(tmp_path / "missing.yaml")


# ---- the record -------------------------------------------------------------


async def test_the_record_keeps_question_action_and_changed_fields() -> None:
    recorder = RecordingHandler(
        ScriptedHandler.from_data(
            {"answers": [{"tool": "add_todo", "action": "accept", "values": {"count": 4}}]}
        )
    )
    await ask(recorder, todo_request(prefilled={"description": "Buy milk", "count": 2}))
    await ask(recorder, todo_request(prefilled={"description": "Buy milk", "count": 4}))
    first, second = recorder.records
    assert first.source == "tool-elicit" and first.tool == "add_todo"
    assert first.origin == "http://127.0.0.1:8101"
    assert first.message == "Confirm the todo before it is added."
    assert first.fields == list(TODO_SCHEMA["properties"])
    assert first.action == "accept" and first.changed == ["count"]
    assert second.changed == []  # confirmed as shown
    assert first.duration_ms >= 0


async def test_the_record_omits_password_and_x_sensitive_values() -> None:
    schema = {
        "type": "object",
        "properties": {
            "user": {"type": "string"},
            "password": {"type": "string", "format": "password"},
            "card": {"type": "string", "x-sensitive": True},
        },
    }
    request = ElicitationRequest(
        source="tool-question",
        message="Log in",
        requested_schema=schema,
        prefilled={"user": "ada", "password": "agent-guess", "card": "4111"},
    )
    answer = {"user": "ada", "password": "hunter2-secret", "card": "4242 4242"}
    recorder = RecordingHandler(Fixed(ElicitationResult(action="accept", content=answer)))
    result = await ask(recorder, request)
    assert result.content == answer  # the caller gets the values ...
    record = recorder.records[0]
    assert record.values == {"user": "ada"}  # ... the record does not
    assert record.prefilled == {"user": "ada"}
    assert record.redacted == ["password", "card"]
    assert record.changed == ["password", "card"]
    dumped = record.model_dump_json()
    for secret in ("hunter2-secret", "4242 4242", "agent-guess", "4111"):
        assert secret not in dumped


async def test_the_record_keeps_timeouts_as_cancel() -> None:
    recorder = RecordingHandler(Silent())
    result = await ask(recorder, todo_request(timeout=0.1))
    assert result.action == "cancel"
    assert recorder.records[0].action == "cancel"
    assert recorder.records[0].reason == "no answer within 0.1 s"


async def test_what_went_unanswered_tells_an_answer_the_rules_refused_from_no_answer() -> None:
    # Found from outside: an answers file answered with a value the form refused, and the
    # hint said "nobody answered".
    refused = RecordingHandler(
        ScriptedHandler.from_data(
            {"answers": [{"tool": "add_todo", "action": "accept", "values": {"count": 99}}]}
        )
    )
    await ask(refused, todo_request(source="form-review"))
    assert unanswered(refused.records) == Unanswered(True, "count must be at most 10")
    nobody = RecordingHandler(AutoHandler("cancel"))
    await ask(nobody, todo_request(source="form-review"))
    await ask(nobody, todo_request())
    assert unanswered(nobody.records) == Unanswered(True, None)
    assert unanswered(nobody.records[1:]) == Unanswered(False, None)
    await ask(nobody, policy_request())  # the policy's questions have a hint of their own
    assert unanswered(nobody.records[2:]) is None
    answered = RecordingHandler(AutoHandler("accept"))
    await ask(answered, todo_request(source="form-review"))
    assert unanswered(answered.records) is None
    # A cancel someone chose: a person or an MCP client (no reason: nothing to hint), an
    # answers file's entry (named); a question nobody answered beside it comes first.
    chose = RecordingHandler(Fixed(ElicitationResult(action="cancel")))
    await ask(chose, todo_request(source="form-review"))
    assert unanswered(chose.records) is None
    scripted = RecordingHandler(
        ScriptedHandler.from_data({"answers": [{"source": "form-review", "action": "cancel"}]})
    )
    await ask(scripted, todo_request(source="form-review"))
    assert unanswered(scripted.records) == Unanswered(True, None, "the answers file's entry #1")
    assert unanswered([*scripted.records, *nobody.records[1:2]]) == Unanswered(False, None)


@pytest.fixture(scope="module")
async def harness(browser_pool: BrowserPool) -> AsyncIterator[Harness]:
    async with Harness(browsers=browser_pool, call_timeout=10) as h:
        yield h


PIN = "HXCANARY-pin-5831"


async def test_a_session_records_every_elicitation_whatever_the_handler(
    harness: Harness, page_server: PageServer
) -> None:
    session = await harness.open(page_server.url("s_tools.html"))
    try:
        assert isinstance(session.elicitation, RecordingHandler)
        # A stage that asks the user before each call, as the policy and tool-elicit stages do.
        secret_schema = {
            "type": "object",
            "properties": {"pin": {"type": "string", "x-sensitive": True}},
            "required": ["pin"],
        }

        async def confirm(request: CallRequest) -> CallToolResult | None:
            question = ElicitationRequest(
                source="policy",
                message=f"Run {request.tool.name}?",
                tool=request.tool.name,
                origin=request.tool.origin,
                rule="confirm-everything",
                requested_schema=secret_schema,
            )
            answer = await ask(session.elicitation, question)
            if answer.action == "accept":
                return None
            return CallToolResult(
                content=[TextContent(type="text", text=f"The user chose {answer.action}.")],
                isError=True,
            )

        session.pipeline.before.append(confirm)
        refused = await session.call("echo", {"text": "hi"})  # the default handler: cancel
        assert refused.is_error
        # Replacing the handler keeps the recording.
        session.elicitation = ScriptedHandler.from_data(
            {
                "answers": [
                    {"rule": "confirm-everything", "action": "accept", "values": {"pin": PIN}}
                ]
            }
        )
        ran = await session.call("echo", {"text": "hi"})
        assert not ran.is_error
        assert [r.action for r in session.elicitations] == ["cancel", "accept"]
        assert session.elicitations[1].rule == "confirm-everything"
        assert session.elicitations[1].tool == "echo"
        assert session.elicitations[1].values == {} and session.elicitations[1].redacted == ["pin"]
        # A canary no record can hold by chance ("1234" met a timestamp's microseconds).
        assert PIN not in json.dumps([r.model_dump(mode="json") for r in session.elicitations])
    finally:
        await session.close()


# ---- questions from inside execute -----------------------------------------


def question(request: Any, request_id: str = "q1") -> dict[str, Any]:
    return {"type": "elicit", "callId": "c1", "requestId": request_id, "request": request}


FORM_QUESTION = {
    "mode": "form",
    "message": "Which list should the todo go on?",
    "requestedSchema": {
        "type": "object",
        "properties": {"list": {"type": "string", "enum": ["groceries", "work"]}},
        "required": ["list"],
    },
}
ORIGIN = "http://127.0.0.1:8101"


async def test_request_user_input_form_accept_round_trip() -> None:
    handler = RecordingHandler(ScriptedHandler.from_file(EXAMPLES / "todo.yaml"))
    reply = await answer_tool_question(
        question(FORM_QUESTION), handler=handler, origin=ORIGIN, tool="add_todo"
    )
    assert reply == {
        "op": "elicit-answer",
        "requestId": "q1",
        "answer": {"action": "accept", "content": {"list": "groceries"}},
    }
    record = handler.records[0]
    assert record.source == "tool-question" and record.mode == "form"
    assert record.origin == ORIGIN and record.tool == "add_todo"


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_request_user_input_decline_and_cancel_have_no_content(action: str) -> None:
    reply = await answer_tool_question(
        question(FORM_QUESTION, "q7"),
        handler=AutoHandler(action),  # type: ignore[arg-type]
        origin=ORIGIN,
        tool="add_todo",
    )
    assert reply == {"op": "elicit-answer", "requestId": "q7", "answer": {"action": action}}


async def test_an_unmatched_question_is_cancel_for_the_page() -> None:
    # The page's wording never chooses an entry: another field does (the example file
    # answers a question for `list`).
    other = {"type": "object", "properties": {"colour": {"type": "string"}}}
    reply = await answer_tool_question(
        question({**FORM_QUESTION, "requestedSchema": other}),
        handler=ScriptedHandler.from_file(EXAMPLES / "todo.yaml"),
        origin=ORIGIN,
        tool="other_tool",
    )
    assert reply["answer"] == {"action": "cancel"}


async def test_the_page_only_gets_the_fields_it_asked_for() -> None:
    answer = {"list": "work", "extra": "not asked"}
    reply = await answer_tool_question(
        question(FORM_QUESTION),
        handler=Fixed(ElicitationResult(action="accept", content=answer)),
        origin=ORIGIN,
        tool="add_todo",
    )
    assert reply["answer"] == {"action": "accept", "content": {"list": "work"}}


async def test_url_and_interactive_modes_answer_without_content() -> None:
    seen: list[ElicitationRequest] = []

    class Accepting:
        async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
            seen.append(request)
            return ElicitationResult(action="accept", content={})

    url_reply = await answer_tool_question(
        question({"mode": "url", "message": "Sign in", "url": "https://example.test/login"}),
        handler=Accepting(),
        origin=ORIGIN,
        tool="t",
    )
    interactive_reply = await answer_tool_question(
        question({"mode": "interactive"}), handler=Accepting(), origin=ORIGIN, tool="t"
    )
    assert url_reply["answer"] == {"action": "accept"}
    assert interactive_reply["answer"] == {"action": "accept"}
    assert seen[0].mode == "url" and seen[0].url == "https://example.test/login"
    assert seen[1].mode == "interactive" and seen[1].message == TOOL_INTERACT


@pytest.mark.parametrize(
    ("asked", "words"),
    [
        ("not an object", "options object"),
        ({"mode": "popup", "message": "x"}, "mode must be"),
        ({"mode": "form"}, "non-empty message"),
        (
            {
                "message": "nested",
                "requestedSchema": {
                    "type": "object",
                    "properties": {"address": {"type": "object", "properties": {}}},
                },
            },
            "flat",
        ),
        ({"mode": "url", "message": "go", "url": "javascript:alert(1)"}, "http(s) url"),
    ],
)
async def test_a_malformed_question_rejects_with_type_error(asked: Any, words: str) -> None:
    handler = RecordingHandler(AutoHandler("accept"))
    reply = await answer_tool_question(question(asked), handler=handler, origin=ORIGIN, tool="t")
    assert reply["error"]["name"] == "TypeError" and words in reply["error"]["message"]
    assert "answer" not in reply and handler.records == []  # the user was not bothered


async def test_a_question_outside_a_running_call_is_invalid_state() -> None:
    reply = await answer_tool_question(
        question(FORM_QUESTION), handler=AutoHandler("accept"), origin=ORIGIN, tool=None
    )
    assert reply["error"]["name"] == "InvalidStateError"


# ---- --elicit -----------------------------------------------------------------


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_handler_from_option_maps_every_value(harness: Harness) -> None:
    auto = handler_from_option("decline")
    assert isinstance(auto, AutoHandler) and auto.action == "decline"
    assert isinstance(handler_from_option("terminal"), TerminalHandler)
    assert isinstance(
        handler_from_option("browser", browser=lambda: harness.browser), BrowserHandler
    )
    scripted = handler_from_option(str(EXAMPLES / "todo.yaml"))
    assert isinstance(scripted, ScriptedHandler) and len(scripted.answers) == 5
    limited = handler_from_option("accept", timeout=5)
    assert isinstance(limited, TimeLimit) and limited.seconds == 5
    with pytest.raises(ConfigError, match="not one of accept, decline"):
        handler_from_option("termnal")
    with pytest.raises(ConfigError, match="needs the harness's browser"):
        handler_from_option("browser")


def test_without_elicit_a_terminal_asks_and_otherwise_cancel() -> None:
    assert isinstance(handler_from_option(None, stdin=FakeTTY()), TerminalHandler)
    fallback = handler_from_option(None, stdin=io.StringIO())
    assert isinstance(fallback, AutoHandler) and fallback.action == "cancel"


async def test_cli_call_takes_elicit_and_reports_elicitations(page_server: PageServer) -> None:
    url = page_server.url("s_tools.html")
    answers = str(EXAMPLES / "todo.yaml")
    code, out, err = await run(
        "call", url, "echo", "--args", '{"text": "hi"}', "--elicit", answers, "--json"
    )
    assert code == 0, err
    assert json.loads(out)["elicitations"] == []


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--elicit", "termnal"], "--elicit 'termnal': not one of accept, decline"),
        (["--elicit", "accept", "--elicit-timeout", "0"], "--elicit-timeout must be a positive"),
    ],
)
def test_cli_bad_elicit_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], option: list[str], message: str
) -> None:
    # Checked before the browser starts, so the command can run in-process.
    assert cli_main(["call", "http://127.0.0.1:9/", "echo", *option]) == 2
    assert message in capsys.readouterr().err


def test_cli_malformed_answers_file_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "answers.yaml"
    bad.write_text("answers:\n  - action: maybe\n")
    assert cli_main(["call", "http://127.0.0.1:9/", "echo", "--elicit", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "does not fit the format" in err and "Traceback" not in err
