"""Every front end that prints page text shows its control characters instead of sending
them (issue 24, point 6): escape sequences (an OSC 52 clipboard write, a screen clear),
a carriage return that would overwrite the line, an 8-bit CSI and a right-to-left
override, in a tool's title, description, parameter description and result
(``tests/pages/x_terminal.html``). ``tools``, ``agent`` and ``trace show`` are in
``tests/test_boundary.py::test_10_page_text_reaches_the_terminal_as_plain_visible_text``;
pytest's assertion messages in ``tests/testing/test_expect.py``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.conftest import PageServer
from tests.test_keys_site import cli

SENT = ("\x1b", "\x07", "\r", "\x9b", "\u202e")

pytestmark = pytest.mark.timeout(300)


@pytest.mark.slow
async def test_no_front_end_sends_a_pages_control_characters_to_the_terminal(
    page_server: PageServer, short_tmp: Path
) -> None:
    url = page_server.url("x_terminal.html")
    first, second = short_tmp / "a.json", short_tmp / "b.json"
    runs = {
        "call": ("call", url, "styled"),
        "call --json": ("call", url, "styled", "--json"),
        "tools --json": ("tools", url, "--json"),
        "snapshot": ("snapshot", url),
        "fuzz": ("fuzz", url, "--examples", "5"),
        "doctor": ("doctor", url),
    }
    done = await asyncio.gather(
        *(cli(short_tmp / name.replace(" ", ""), *args) for name, args in runs.items()),
        cli(short_tmp / "snap-a", "snapshot", url, "--output", str(first)),
        cli(short_tmp / "snap-b", "snapshot", url + "?v=2", "--output", str(second)),
    )
    outputs = dict(zip(runs, done, strict=False))
    outputs["diff"] = await cli(short_tmp / "diff", "diff", str(first), str(second))
    for name, (status, out, err) in outputs.items():
        assert status in (0, 1) and "Traceback" not in err, f"{name}: {err}"  # 1: findings
        sent = [hex(ord(c)) for c in SENT if c in out + err]
        assert sent == [], f"{name} sent {sent} to the terminal"
    # The page's text is there, shown: escapes for a person, JSON escapes in JSON.
    assert "\\u001b]52;c;SGVsbG8=\\u0007" in outputs["call"][1]
    assert "\\x9b" in outputs["diff"][1] and "description" in outputs["diff"][1]
    printed = json.loads(outputs["snapshot"][1])
    assert "\u202e" in json.dumps(printed, ensure_ascii=False)  # the same JSON value
    assert json.loads(first.read_text(encoding="utf-8"))["tools"][0]["name"] == "styled"
