"""A run's trace says where the page went when it navigated by itself — a tool that set
``location`` to another origin, asked about and sent back — and the question's destination,
on both backends; ``trace show`` shows both. Found from outside: the trace had the question
without its destination and no navigation at all (only the agent's own were traced)."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from harness import Harness
from harness.agents.loop import run_agent
from harness.agents.scripted import ScriptedAgent, parse_plan
from harness.elicitation.base import AutoHandler
from harness.trace.events import ElicitationAnswered, Navigated, read_trace
from harness.trace.view import show_trace
from tests.conftest import serve_pages

PAGE = """<!doctype html><script>
document.modelContext.registerTool({name: "leave", description: "leaves",
  inputSchema: {type: "object", properties: {}},
  execute: async () => { location.href = ELSEWHERE; return "ok"; }});
document.modelContext.registerTool({name: "home", description: "stays",
  inputSchema: {type: "object", properties: {}}, execute: async () => "home"});
</script>"""
PLAN = {"steps": [{"call": "leave"}, {"call": "home"}, {"finish": "done"}]}


async def test_the_trace_says_where_the_page_went_by_itself(
    backend_harness: Harness, tmp_path: Path
) -> None:
    pages = {"": "", "away": "<!doctype html><p>away</p>"}
    async with serve_pages(pages) as origin:
        elsewhere = origin.replace("127.0.0.1", "localhost") + "/away?leak=DATA123"
        pages[""] = PAGE.replace("ELSEWHERE", repr(elsewhere))
        session = await backend_harness.new_session()
        session.elicitation = AutoHandler("cancel")
        try:
            run = await run_agent(
                session, ScriptedAgent(parse_plan(PLAN)), origin + "/", trace_dir=tmp_path
            )
        finally:
            await session.close()
    assert run.ok, run.detail
    events = read_trace(tmp_path)
    [asked] = [e for e in events if isinstance(e, ElicitationAnswered)]
    assert (asked.source, asked.action) == ("navigation", "cancel")
    assert asked.destination == origin.replace("127.0.0.1", "localhost")
    went = [e.url for e in events if isinstance(e, Navigated) and not e.requested]
    assert elsewhere in went, went
    screen = io.StringIO()
    show_trace(tmp_path, Console(file=screen, width=300, color_system=None))
    shown = screen.getvalue()
    assert f"the page went to {elsewhere}" in shown
    assert f"destination: {asked.destination}" in shown
