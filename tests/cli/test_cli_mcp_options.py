"""``mcp``'s HTTP-only options (``--host``, ``--port``) are refused without ``--transport
http``: a usage error (exit 2, one line on stderr naming the fix) rather than a stdio server
that says nothing of them. Parsed and checked in this process: no browser starts."""

from __future__ import annotations

import pytest

import harness.cli.commands as commands
from harness.cli import main

URL = "http://127.0.0.1:8101/"


@pytest.fixture(autouse=True)
def no_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    """Serving over stdio would start with the browser: a test that gets there failed."""

    async def early_harness(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("served over stdio")

    monkeypatch.setattr(commands, "early_harness", early_harness)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--host", "10.0.0.1", "--port", "1234"], "--host and --port go"),
        (["--port", "0"], "--port goes"),
        (["--host", "127.0.0.1"], "--host goes"),  # the default, said: still said in vain
        (["--transport", "stdio", "--port", "8765"], "--port goes"),
    ],
)
def test_http_options_without_http_are_a_usage_error(
    options: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["mcp", URL, *options])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert f"{named} with --transport http" in err and "add --transport http" in err, err


def test_a_host_off_loopback_over_http_is_still_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["mcp", URL, "--transport", "http", "--host", "10.0.0.1"])
    _, err = capsys.readouterr()
    assert code == 2 and "listens on loopback only" in err, err
