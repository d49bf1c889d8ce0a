"""Page text holding a lone UTF-16 surrogate (a description, a parameter name, a result's
key and text, an error message) reaches the harness well-formed — each lone surrogate as
U+FFFD — on both backends, so the agent view, the CLI's output, traces and MCP's JSON can
all carry it (each used to fail on it: a traceback, an MCP listing never answered)."""

from __future__ import annotations

import json

from harness import Session
from tests.console_script import run_script

PAGE = "u_lone_surrogates.html"


def utf8(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    text.encode("utf-8")  # raises on a lone surrogate
    return text


async def test_descriptions_and_schemas_are_listed_well_formed(page_session: Session) -> None:
    tools = {t.name: t for t in await page_session.tools()}
    assert tools["described"].description == "desc \ufffd"
    assert list(tools["param"].input_schema["properties"]) == ["p\ufffd"]
    utf8([t.public() for t in tools.values()])


async def test_results_and_errors_reach_the_agent_well_formed(page_session: Session) -> None:
    key = await page_session.call("key")
    assert "k\ufffd" in utf8(key.agent_json())
    text = await page_session.call("text")
    assert "abc\ufffddef" in utf8(text.agent_json())
    thrown = await page_session.call("throws")
    assert thrown.result.is_error and "bad\ufffd" in utf8(thrown.agent_json())


async def test_the_cli_prints_them_without_a_traceback(page_session: Session) -> None:
    url = page_session.url
    backend = page_session.backend.name
    code, out, err = await run_script("tools", url, "--backend", backend, timeout=120)
    assert code == 0 and "Traceback" not in err, err
    assert "desc \ufffd" in out
    code, out, err = await run_script(
        "call", url, "key", "--backend", backend, "--json", timeout=120
    )
    assert code == 0 and "Traceback" not in err, err
    assert "k\\ufffd" in out or "k\ufffd" in out
