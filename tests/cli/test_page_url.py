"""A page's address on the command line: a URL Chromium opens as a page, or the path of an
HTML file (opened as its ``file:`` URL); anything else is a usage error (exit 2) that says
what would work, before any browser starts — not Playwright's "invalid URL" as a failure."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from harness.cli.options import page_url
from harness.cli.qa import catalog_source
from tests.console_script import run_script


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000/page",
        "HTTPS://example.test/",
        "file:///srv/site/index.html",
        "data:text/html,<p>hi",
        "about:blank",
    ],
)
def test_urls_of_pages_pass_unchanged(url: str) -> None:
    assert page_url(url) == url


def test_the_path_of_a_file_is_its_file_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = tmp_path / "a page.html"
    page.write_text("<p>hi</p>", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert page_url("a page.html") == page.resolve().as_uri()
    assert page_url(str(page)) == page.resolve().as_uri()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("notaurl", "neither a URL"),
        ("localhost:8000", "did you mean http://localhost:8000 ?"),
        ("example.test/shop", "did you mean http://example.test/shop ?"),
        ("javascript:alert(1)", "javascript: pages cannot be opened"),
        ("ftp://files.test/", "ftp: pages cannot be opened"),
        ("http://", "not a whole URL"),
        ("https:example.test", "not a whole URL"),
        ("missing.html", "no such file"),
        ("./site/index.htm", "no such file"),
    ],
)
def test_anything_else_is_refused_saying_what_would_work(text: str, says: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        page_url(text)
    assert says in str(refused.value)


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="is a directory"):
        page_url(str(tmp_path))


def test_diff_reads_a_page_as_every_command_does_and_anything_else_as_a_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "page.html").write_text("<p>hi</p>", encoding="utf-8")
    pages = {
        "file:///srv/site/page.html": "file:///srv/site/page.html",  # was read as a file
        "http://127.0.0.1:8000/": "http://127.0.0.1:8000/",
        "page.html": (tmp_path / "page.html").resolve().as_uri(),
    }
    for text, url in pages.items():
        assert catalog_source(text).page == url
    for text in ("catalog.json", "baselines/catalog.json", "missing.json"):
        assert catalog_source(text).page is None  # a catalog file (read, or refused, later)
    for text, says in (
        ("localhost:8000/", "did you mean http://localhost:8000/ ?"),
        ("missing.html", "no such file"),
        ("javascript:alert(1)", "javascript: pages cannot be opened"),
    ):
        with pytest.raises(argparse.ArgumentTypeError, match=re.escape(says)):
            catalog_source(text)


@pytest.mark.parametrize(
    "command",
    [
        ["tools", "{url}"],
        ["call", "{url}", "echo"],
        ["agent", "{url}", "--agent", "obedient", "--task", "t"],
        ["mcp", "{url}"],
        ["fuzz", "{url}"],
        ["snapshot", "{url}"],
        ["doctor", "{url}"],
        ["diff", "catalog.json", "{url}"],
    ],
)
async def test_every_command_that_opens_a_page_refuses_a_non_url_as_usage(
    command: list[str],
) -> None:
    code, out, err = await run_script(*[a.replace("{url}", "localhost:8000") for a in command])
    assert code == 2, err
    assert "did you mean http://localhost:8000 ?" in err
    assert "Traceback" not in err and "Page.goto" not in err and out == ""


async def test_with_json_the_refusal_is_a_usage_error_object() -> None:
    code, out, err = await run_script("tools", "notaurl", "--json")
    assert code == 2, err
    assert json.loads(out)["error"]["code"] == "usage"


async def test_a_local_html_file_is_opened_and_its_tools_listed(tmp_path: Path) -> None:
    (tmp_path / "page.html").write_text(
        "<script>document.modelContext.registerTool({name: 'local_echo', description: 'Echo.',"
        " inputSchema: {type: 'object'}, execute: (a) => JSON.stringify(a)});</script>",
        encoding="utf-8",
    )
    code, out, err = await run_script("tools", "page.html", "--json", cwd=tmp_path)
    assert code == 0, err
    assert [tool["name"] for tool in json.loads(out)["tools"]] == ["local_echo"]
