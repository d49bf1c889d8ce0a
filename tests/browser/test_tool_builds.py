"""ToolBuilds: a frame's snapshots become Tools once, and are reused while unchanged."""

from __future__ import annotations

import json
from typing import Any

from harness.browser.backends.snapshots import (
    ToolBuilds,
    read_listing,
    snapshot_texts,
    split_registration,
)
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


def layer_text(name: str, registration: int | None, **fields: Any) -> str:
    """A snapshot as the layer writes it (channel.js): its registration number last."""
    return json.dumps({"name": name, "description": f"Tool {name}", **fields})[:-1] + (
        f',"registration":{json.dumps(registration)}}}'
    )


def test_the_registration_number_is_not_part_of_the_key() -> None:
    one = layer_text("a", 7, inputSchema={"type": "object"})
    key, number = split_registration(one)
    assert number == 7 and "registration" not in key and json.loads(key)["name"] == "a"
    assert split_registration(layer_text("a", 8, inputSchema={"type": "object"})) == (key, 8)
    # A form's number is null: its text is its key. So is anything that does not end as
    # the layer ends a script tool's snapshot.
    form = layer_text("f", None)
    assert split_registration(form) == (form, None)
    for odd in ('{"name":"a","registration":"7"}', '{"name":"a","registration":7.5}', "7}"):
        assert split_registration(odd) == (odd, None)
    assert split_registration('{"registration":١٢}') == ('{"registration":١٢}', None)


def test_a_schema_that_names_registration_does_not_fool_the_key() -> None:
    """The page's raw schema can hold `"registration":` unescaped; the layer's own member
    comes after every page-provided value, and only the last one is taken."""
    schema = {"type": "object", "properties": {"x": {"type": "string"}}, "registration": 1}
    text = layer_text("a", 42, inputSchema=schema)
    key, number = split_registration(text)
    assert number == 42
    assert json.loads(key)["inputSchema"] == schema


def test_a_tool_registered_again_elsewhere_is_reused_with_its_new_number() -> None:
    builds = ToolBuilds()
    [first], _ = builds.build(MAIN, "http://a.test", snapshot_texts([layer_text("a", 1)]))
    [again], _ = builds.build(MAIN, "http://a.test", snapshot_texts([layer_text("a", 2)]))
    assert builds.built == 1
    assert (first.registration, again.registration) == (1, 2)
    assert again.model_copy(update={"registration": 1}) == first
    [form], _ = builds.build(MAIN, "http://a.test", snapshot_texts([layer_text("f", None)]))
    assert form.registration is None
