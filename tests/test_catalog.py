"""The catalog merges frames, refuses duplicate names loudly, and reports diffs."""

from __future__ import annotations

import pytest

from harness.catalog import Catalog, FrameInfo
from harness.models import Tool, ToolChange

MAIN = FrameInfo(key="main", url="http://a.test/", origin="http://a.test", is_main=True)
CHILD = FrameInfo(key="frame-1", url="http://a.test/f", origin="http://a.test", is_main=False)
HIDDEN = FrameInfo(
    key="frame-2", url="http://b.test/", origin="http://b.test", is_main=False, exposed=False
)


def tool(name: str, frame: FrameInfo, description: str = "d") -> Tool:
    return Tool(name=name, description=description, origin=frame.origin, frame=frame.key)


def test_changes_carry_the_diff() -> None:
    catalog = Catalog()
    seen: list[ToolChange] = []
    catalog.subscribe(seen.append)
    catalog.replace_frame(MAIN, [tool("a", MAIN), tool("b", MAIN)])
    catalog.replace_frame(MAIN, [tool("b", MAIN, "changed"), tool("c", MAIN)])
    assert [c.model_dump() for c in seen] == [
        {"added": ["a", "b"], "removed": [], "changed": []},
        {"added": ["c"], "removed": ["a"], "changed": ["b"]},
    ]


def test_no_event_when_nothing_changed() -> None:
    catalog = Catalog()
    seen: list[ToolChange] = []
    catalog.replace_frame(MAIN, [tool("a", MAIN)])
    catalog.subscribe(seen.append)
    catalog.replace_frame(MAIN, [tool("a", MAIN)])
    assert seen == []


def test_duplicate_name_across_frames_is_refused_with_a_warning() -> None:
    catalog = Catalog()
    catalog.replace_frame(CHILD, [tool("dup", CHILD, "child")])
    catalog.replace_frame(MAIN, [tool("dup", MAIN, "main")])
    # The top-level frame's definition wins; the other is refused, never silently.
    assert catalog.get("dup") is not None
    assert catalog.get("dup").description == "main"  # type: ignore[union-attr]
    [warning] = catalog.warnings
    assert warning.code == "duplicate-name"
    assert "frame main" in warning.message and "frame frame-1" in warning.message


def test_unexposed_frames_offer_nothing() -> None:
    catalog = Catalog()
    catalog.replace_frame(HIDDEN, [tool("secret", HIDDEN)])
    assert catalog.tools() == []


def test_drop_frame_and_unsubscribe() -> None:
    catalog = Catalog()
    seen: list[ToolChange] = []
    unsubscribe = catalog.subscribe(seen.append)
    catalog.replace_frame(CHILD, [tool("x", CHILD)])
    catalog.drop_frame("frame-1")
    unsubscribe()
    catalog.replace_frame(CHILD, [tool("y", CHILD)])
    assert [c.removed for c in seen] == [[], ["x"]]
    assert catalog.names() == ["y"]


def test_a_held_catalog_keeps_its_tools_and_publishes_once_released() -> None:
    catalog = Catalog()
    seen: list[ToolChange] = []
    catalog.replace_frame(MAIN, [tool("running", MAIN), tool("other", MAIN)])
    catalog.subscribe(seen.append)
    release = catalog.hold()
    inner = catalog.hold()
    # The running tool unregisters itself and another appears, mid-call: nothing shows yet.
    catalog.replace_frame(MAIN, [tool("other", MAIN), tool("next", MAIN)])
    catalog.drop_frame(CHILD.key)
    assert catalog.names() == ["other", "running"] and seen == []
    assert inner() == ToolChange() and seen == []  # holds nest
    change = release()
    assert change == ToolChange(added=["next"], removed=["running"])
    assert seen == [change] and catalog.names() == ["next", "other"]
    assert release() == ToolChange() and len(seen) == 1  # a second release does nothing


def test_the_same_tools_again_are_not_merged_again(monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = Catalog()
    tools = [tool("a", MAIN), tool("b", MAIN)]
    catalog.replace_frame(MAIN, tools)
    merges: list[int] = []
    recompute = catalog._recompute

    def counting() -> ToolChange:
        merges.append(1)
        return recompute()

    monkeypatch.setattr(catalog, "_recompute", counting)
    assert not catalog.replace_frame(MAIN, list(tools))
    assert merges == []
    # Equal but new objects, or new warnings, are merged (and announce nothing new).
    assert not catalog.replace_frame(MAIN, [tool("a", MAIN), tool("b", MAIN)])
    assert len(merges) == 1
    catalog.replace_frame(MAIN, [tool("a", MAIN)])
    assert catalog.names() == ["a"]
    assert len(merges) == 2
