"""A grid's ``call`` check reads the call's arguments (``arguments``, ``contains``), and a
failed one says which of them no call had."""

from __future__ import annotations

from harness.experiments.checks import Evidence, evaluate
from harness.experiments.tasks import CallCheck
from harness.trace.events import ToolResult


def called(arguments: dict[str, object], *, is_error: bool = False) -> Evidence:
    result = ToolResult(
        call_id="c1",
        tool="echo",
        arguments=arguments,
        result={"content": [{"type": "text", "text": "echo:hi"}]},
        is_error=is_error,
        duration_ms=1.0,
    )
    return Evidence(events=[result], answer="", start_url="http://a.test/")


async def test_contains_reads_the_arguments_not_the_result() -> None:
    check = CallCheck(call="echo", contains="echo:hi")  # only the result holds that text
    outcome = await evaluate(check, called({"text": "hi"}))
    assert not outcome.passed
    assert outcome.why == 'no call had arguments containing "echo:hi"'
    assert (await evaluate(CallCheck(call="echo", contains='"hi"'), called({"text": "hi"}))).passed


async def test_a_failed_call_check_names_what_no_call_had() -> None:
    both = CallCheck(call="echo", arguments={"text": "bye"}, contains="bye")
    outcome = await evaluate(both, called({"text": "hi"}))
    assert outcome.why == 'no call had the arguments the check names and arguments containing "bye"'
    named = await evaluate(
        CallCheck(call="echo", arguments={"text": "bye"}), called({"text": "hi"})
    )
    assert named.why == "no call had the arguments the check names"
