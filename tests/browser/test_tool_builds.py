"""ToolBuilds: a frame's snapshots become Tools once, and are reused while unchanged."""

from __future__ import annotations

import json
from typing import Any

from harness.browser.backends.snapshots import ToolBuilds, read_listing, snapshot_texts
from harness.catalog import FrameInfo

MAIN = FrameInfo(key="main", url="http://a.test/", origin="http://a.test", is_main=True)
MOVED = FrameInfo(key="main", url="http://a.test/next", origin="http://a.test", is_main=True)
CHILD = FrameInfo(key="frame-1", url="http://b.test/", origin="http://b.test", is_main=False)


def text(name: str, **fields: Any) -> str:
    return json.dumps({"name": name, "description": f"Tool {name}", **fields})


def test_an_unchanged_snapshot_is_not_built_again() -> None:
    builds = ToolBuilds()
    texts = [text("a"), text("b"), text("c")]
    first, _ = builds.build(MAIN, "http://a.test", snapshot_texts(texts))
    assert builds.built == 3
    again, _ = builds.build(MAIN, "http://a.test", snapshot_texts(list(texts)))
    assert builds.built == 3
    assert all(x is y for x, y in zip(first, again, strict=True))
    texts[1] = text("b", title="Now with a title")
    changed, _ = builds.build(MAIN, "http://a.test", snapshot_texts(texts))
    assert builds.built == 4
    assert changed[0] is first[0] and changed[2] is first[2]
    assert changed[1].title == "Now with a title"


def test_a_frame_at_another_url_is_built_anew() -> None:
    builds = ToolBuilds()
    [tool], _ = builds.build(MAIN, "http://a.test", snapshot_texts([text("a")]))
    [moved], _ = builds.build(MOVED, "http://a.test", snapshot_texts([text("a")]))
    assert builds.built == 2
    assert (tool.frame_url, moved.frame_url) == ("http://a.test/", "http://a.test/next")


def test_a_cross_origin_frame_is_judged_against_the_current_top_origin() -> None:
    builds = ToolBuilds()
    exposed = [text("a", exposedTo=["http://a.test"])]
    assert [t.name for t in builds.build(CHILD, "http://a.test", snapshot_texts(exposed))[0]] == [
        "a"
    ]
    assert builds.build(CHILD, "http://c.test", snapshot_texts(exposed))[0] == []
    assert builds.built == 2


def test_warnings_stay_with_their_snapshot() -> None:
    builds = ToolBuilds()
    texts = [text("bad name!"), text("ok", annotations={"readOnly": True})]
    for _ in range(2):
        tools, warnings = builds.build(MAIN, "http://a.test", snapshot_texts(texts))
        assert [t.name for t in tools] == ["ok"]
        assert [w.code for w in warnings] == ["malformed-tool", "annotation-spelling"]
    assert builds.built == 2


def test_what_is_not_a_snapshot_text_is_ignored() -> None:
    builds = ToolBuilds()
    entries = snapshot_texts([{"name": "a", "description": "d"}, 7, None, "not json", text("b")])
    tools, warnings = builds.build(MAIN, "http://a.test", entries)
    assert [t.name for t in tools] == ["b"]
    assert warnings == []
    assert snapshot_texts("not a list") == []


def test_a_forgotten_frame_is_built_again() -> None:
    builds = ToolBuilds()
    builds.build(MAIN, "http://a.test", snapshot_texts([text("a")]))
    builds.forget("main")
    builds.build(MAIN, "http://a.test", snapshot_texts([text("a")]))
    assert builds.built == 2


def test_a_listing_reads_as_plain_data() -> None:
    answer = json.dumps({"tools": [text("a")], "native": False, "refused": []})
    assert read_listing(answer) == {
        "tools": [{"name": "a", "description": "Tool a"}],
        "native": False,
        "refused": [],
    }
    assert read_listing("{broken") is None
    assert read_listing({"status": "error"}) == {"status": "error", "tools": []}


def test_two_reports_that_alternate_are_both_kept() -> None:
    builds = ToolBuilds()
    one, other = [text("a"), text("b")], [text("a", title="A"), text("b")]
    for texts in (one, other, one, other):
        builds.build(MAIN, "http://a.test", snapshot_texts(texts))
    assert builds.built == 3
