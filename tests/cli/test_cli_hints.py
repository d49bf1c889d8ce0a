"""What a QA engineer trying the CLI on a site of their own needs to be told: declared
false is not "not declared", a tool not there yet can be waited for, and a policy refusal
of their own tool — or a form left waiting for its submit — names the options that let it
run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.cli.test_cli import run
from tests.qa.pages import QAServer, page, serve

TOOLS = """
const mc = document.modelContext;
mc.registerTool({name: "plain", description: "Declares nothing.", execute: async () => 1});
mc.registerTool({name: "writes", description: "Declared not read-only.",
                 annotations: {readOnlyHint: false}, execute: async () => 1});
mc.registerTool({name: "reads", description: "Declared read-only, not idempotent.",
                 annotations: {readOnlyHint: true, idempotentHint: false},
                 execute: async () => 1});
mc.registerTool({name: "wipe", description: "Deletes everything.",
                 annotations: {destructiveHint: true}, execute: async () => ({wiped: true})});
setTimeout(() => mc.registerTool({name: "late", description: "Comes late.",
                                  execute: async () => 1}), 1500);
"""

WIDE = {"COLUMNS": "200"}


FORM = """<!doctype html><form toolname="send_note" tooldescription="Sends a note."
  action="/sent"><input name="note" required><button>Send</button></form>"""


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[QAServer]:
    async with serve({"/": page(TOOLS), "/form": FORM, "/sent": "<p>sent</p>"}) as qa:
        yield qa


@pytest.mark.slow  # `tools` and `call` runs (~4 s)
async def test_the_tools_table_tells_declared_false_from_not_declared(server: QAServer) -> None:
    code, out, err = await run("tools", server.url("/"), env=WIDE)
    assert code == 0, err
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") > 3}
    assert "(none declared)" in rows["plain"]
    assert "readOnlyHint=false" in rows["writes"]
    assert "readOnlyHint=true, idempotentHint=false" in rows["reads"]


@pytest.mark.slow
async def test_calling_a_tool_not_there_yet_says_how_to_wait(server: QAServer) -> None:
    code, _, err = await run("call", server.url("/"), "late", "--settle", "100")
    assert code == 1
    assert "No tool named 'late'" in err and "--wait-for-tool NAME" in err and "--settle MS" in err
    code, out, err = await run("call", server.url("/"), "late", "--wait-for-tool", "late", "--json")
    assert '"isError": false' in out
    assert code == 0, err


@pytest.mark.slow
async def test_a_policy_refusal_of_your_own_tool_names_the_fix(
    server: QAServer, tmp_path: Path
) -> None:
    code, out, err = await run("call", server.url("/"), "wipe", "--elicit", "cancel")
    assert code == 0 and "isError" in out
    assert "--elicit accept" in err and "--policy none" in err
    code, out, err = await run(
        "call", server.url("/"), "wipe", "--elicit", "cancel", "--policy", "none"
    )
    assert code == 0 and "--elicit accept" not in err
    plan = tmp_path / "plan.yaml"
    plan.write_text("task: wipe\nsteps:\n  - call: wipe\n    expect: {isError: false}\n")
    code, out, err = await run(
        "agent",
        server.url("/"),
        "--agent",
        f"scripted:{plan}",
        "--elicit",
        "cancel",
        "--trace-dir",
        str(tmp_path / "run"),
    )
    assert code == 1
    assert "--elicit accept" in err and "--policy none" in err


@pytest.mark.slow  # two `call` runs, each with its browser (~4 s)
async def test_a_form_left_waiting_for_its_submit_names_the_fix(server: QAServer) -> None:
    # Found from outside: "the review was cancelled (auto-cancel)" and nothing on stderr.
    args = ["call", server.url("/form"), "send_note", "--args", '{"note": "hi"}']
    code, out, err = await run(*args, "--elicit", "cancel")
    assert code == 0 and "review was cancelled" in out
    assert "no toolautosubmit" in err and "--elicit accept" in err
    code, out, err = await run(*args, "--elicit", "accept")
    assert code == 0 and "sent" in out and "--elicit" not in err


async def test_an_answer_the_form_refused_is_not_called_unanswered() -> None:
    # Found from outside: `call --elicit answers.yaml` whose entry gives weeks 9 to a form
    # with max 4 was rightly cancelled, and the hint said "nobody answered ... --elicit accept".
    from harness.cli.options import unanswered_hint
    from harness.elicitation.answers import ScriptedHandler
    from harness.elicitation.base import AutoHandler, RecordingHandler, ask
    from tests.elicitation_forms import todo_request

    answers = {"answers": [{"source": "form-review", "action": "accept", "values": {"count": 99}}]}
    refused = RecordingHandler(ScriptedHandler.from_data(answers))
    await ask(refused, todo_request(source="form-review"))
    hint = unanswered_hint(refused.records) or ""
    assert "nobody answered" not in hint and "--elicit accept" not in hint
    assert "the answer given breaks its rules (count must be at most 10)" in hint
    assert "`values`" in hint and "nothing was sent" in hint
    nobody = RecordingHandler(AutoHandler("cancel"))
    await ask(nobody, todo_request(source="form-review"))
    hint = unanswered_hint(nobody.records) or ""
    assert "no toolautosubmit" in hint and "nobody answered" in hint and "--elicit accept" in hint


async def test_an_answers_file_that_cancels_on_purpose_is_not_called_unanswered() -> None:
    # Found from outside: an answers file whose entry says `action: cancel` got the hint
    # "nobody answered ... --elicit accept": the file did answer, and its entry is the fix.
    from harness.cli.options import unanswered_hint
    from harness.elicitation.answers import ScriptedHandler
    from harness.elicitation.base import RecordingHandler, ask
    from tests.elicitation_forms import todo_request

    answers = {
        "answers": [
            {"source": "tool-question", "action": "accept"},
            {"source": "form-review", "action": "cancel"},
        ]
    }
    chosen = RecordingHandler(ScriptedHandler.from_data(answers))
    await ask(chosen, todo_request(source="form-review"))
    hint = unanswered_hint(chosen.records) or ""
    assert "nobody answered" not in hint and "--elicit accept" not in hint
    assert "the answers file's entry #2 answers cancel" in hint and "action: accept" in hint
    # A file with no entry for the question did leave it unanswered.
    unmatched = RecordingHandler(ScriptedHandler.from_data({"answers": answers["answers"][:1]}))
    await ask(unmatched, todo_request(source="form-review"))
    assert "nobody answered" in (unanswered_hint(unmatched.records) or "")
