"""Test ids are files wpt.fyi's results processor can store a result at
(``harness/conformance/ids.py``): every id a site audit, the WPT runner and the user-agent
suite give, in every shape a URL or a test's variant can take, read by the model of the
processor (``wptfyi.py``), which writes each result at ``<directory> + <test id>``."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.conformance.audit import site_targets
from harness.conformance.ids import ID_BYTES, SEGMENT_BYTES, apart, storable
from harness.conformance.ua.suite import all_files
from harness.conformance.wpt import discover
from tests.conformance import wptfyi
from tests.console_script import run_script

TESTHARNESS = '<script src="/resources/testharness.js"></script>'

# What a site's URLs look like, the start page first (its directory is the site's root).
SITE = [
    "/",  # the start page: the usual case
    "/?lang=en",
    "/blog",  # a page, and the directory of the next two
    "/blog/",
    "/blog/post-1",
    "/blog/post-1?comments=/all/../../../../etc",  # a query holding a path
    "/docs/a b/intro",  # a space, as typed
    "/docs/a%20b/intro",  # the same page, as a browser asks for it
    "/search?q=caf%C3%A9&next=%2Fhome",
    "/café/ünïcode",
    "/a//b",  # an empty segment
    "/a/b",  # where the empty segment would have stored its result
    "/x/./y/%2e%2E/z",  # dot segments, resolved as a browser resolves them
    "/../../../../etc/passwd",  # never above the site's root
    "/back\\slash",
    "/%zz/100%",  # a '%' that starts no escape
    "/{index}",  # a page named as a repair would name it
    "/@root/x.html",  # the site's own @root, not the audit's
    "/x.html",
    "/" + "long-" * 80,  # a segment longer than a file name may be
    "/" + "/".join(["deep"] * 300),  # an id longer than a stored object's name may be
    "/q?" + "v=" * 600,  # a query longer than a file name may be
    "/nul%00byte",
    "/ctrl\x01char",
]


def test_every_page_of_a_site_is_a_file_wpt_fyi_stores_apart_from_the_others() -> None:
    urls = ["http://127.0.0.1:8777" + path for path in SITE if path != "/docs/a%20b/intro"]
    ids = [t.test for t in site_targets([(url, "mine") for url in urls])]
    assert len(set(ids)) == len(ids)
    assert len(wptfyi.read_tests(ids).stored) == len(
        ids
    )  # each result a file of its own, in the run
    assert ids[:5] == [
        "/mine/{index}",
        "/mine/{index}?lang=en",
        "/mine/blog/{page}",
        "/mine/blog/{index}",
        "/mine/blog/post-1",
    ]
    assert "/mine/x.html" in ids and "/mine/%40root/x.html" in ids
    assert "/mine/etc/passwd" in ids  # the page the browser opens: inside the run
    assert all(len(t.encode()) <= ID_BYTES for t in ids)
    assert all(len(s.encode()) <= SEGMENT_BYTES for t in ids for s in t.split("/"))
    # Stable: the same ids in every run, on every host and port.
    assert [t.test for t in site_targets([(url, "mine") for url in urls])] == ids
    moved = [url.replace("http://127.0.0.1:8777", "https://shop.example") for url in urls]
    assert [t.test for t in site_targets([(url, "mine") for url in moved])] == ids
    # One page however it is spelled: one id (two of them in one run are refused).
    same = [(f"http://h/docs/{p}/intro", "mine") for p in ("a b", "a%20b")]
    assert site_targets(same[:1])[0].test == site_targets(same[1:])[0].test


def test_pages_outside_the_start_directory_are_stored_too() -> None:
    urls = ["http://h/app/", "http://h/", "http://h/app", "http://other/app/", "http://h/app/../"]
    ids = [t.test for t in site_targets([(url, "mine") for url in urls[:4]])]
    assert ids == [
        "/mine/{index}",
        "/mine/@root/{index}",
        "/mine/@root/app/{page}",  # the directory of the next one
        "/mine/@root/app/{index}",  # another origin's /app/: outside too
    ]
    assert len(wptfyi.read_tests(ids).stored) == 4
    assert site_targets([(urls[0], "mine"), (urls[4], "mine")])[1].test == "/mine/@root/{index}"


def test_ids_that_are_files_already_stay_as_they_are() -> None:
    for test in [
        "/webmcp/imperative/register-tool.https.html",
        "/webmcp/a.any.html?1-10",
        "/webmcp/a.window.html#frag",
        "/webmcp/a.html?include=/webmcp/b",  # WPT's ids keep a variant's '/'
        *(file.path for file in all_files()),  # the user-agent suite's
    ]:
        assert storable(test) == test
    assert apart(["/a/b.html", "/a/c.html"]) == {"/a/b.html": "/a/b.html", "/a/c.html": "/a/c.html"}
    wptfyi.read_tests([file.path for file in all_files()])


def test_a_wpt_variant_never_steers_where_a_reader_writes(tmp_path: Path) -> None:
    webmcp = tmp_path / "webmcp"
    webmcp.mkdir()
    variants = ["?a/../../../../outside", "?/", "?x//y", "?long=" + "v" * 300, "?ok"]
    meta = "".join(f'<meta name="variant" content="{v}">' for v in variants)
    (webmcp / "t.html").write_text(meta + TESTHARNESS, encoding="utf-8")
    tests = discover(tmp_path)
    assert [t.path for t in tests] == [f"/webmcp/t.html{v}" for v in variants]  # what loads
    ids = [t.test for t in tests]
    assert ids[:3] == [
        "/webmcp/t.html?a/%2E%2E/%2E%2E/%2E%2E/%2E%2E/outside",
        "/webmcp/t.html?/{index}",
        "/webmcp/t.html?x/{}/y",
    ]
    assert ids[4] == "/webmcp/t.html?ok"
    assert len(wptfyi.read_tests(ids).stored) == len(ids)
    assert [t.test for t in discover(tmp_path, [ids[0]])] == [ids[0]]  # --tests by its id


@pytest.mark.timeout(300)
async def test_the_audit_of_a_sites_start_page_is_stored_by_wpt_fyi(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, stdout, err = await run_script(
        "conformance",
        "site",
        "bundled:todo",
        "bundled:todo/?from=/../../x",
        "--output",
        str(out),
        "--no-progress",
        timeout=240,
    )
    assert code == 0, err + stdout
    run = wptfyi.read(out / "wptreport-polyfill.json")
    assert list(run.summary) == ["/todo/{index}", "/todo/{index}?from=%2F..%2F..%2Fx"]
    assert run.stored == ["todo/{index}", "todo/{index}?from=%2F..%2F..%2Fx"]
