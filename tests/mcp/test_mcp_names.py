"""Page tool names as MCP tool names: the rules in ``harness/mcp/names.py``."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.mcp import names as mcp_names
from harness.mcp.names import NAVIGATE, RELOAD, NameMap, mcp_name

ISSUE_PATTERN = re.compile(r"^[A-Za-z0-9_./-]{1,64}$")  # what MCP allows here
SEP_986 = re.compile(r"^[A-Za-z0-9._-]{1,128}$")  # what the MCP spec says names SHOULD be


def test_valid_names_are_kept() -> None:
    assert mcp_name("add_todo") == "add_todo"
    assert mcp_name("a.b-c_D9") == "a.b-c_D9"
    assert mcp_name("x" * 64) == "x" * 64


def test_other_names_get_a_stem_and_a_hash() -> None:
    long = "a_tool_with_a_name_" + "x" * 80
    mapped = mcp_name(long)
    assert len(mapped) == 64 and mapped.startswith("a_tool_with_a_name_xxx")
    assert re.search(r"--[0-9a-f]{10}$", mapped)
    assert mcp_name("add todo!") == "add_todo_--" + mcp_name("add todo!")[-10:]
    assert mcp_name("").startswith("tool--")
    assert mcp_name("日本語").startswith("___--")


def test_reserved_names_are_hashed_so_nothing_shadows_the_harness_or_a_hash() -> None:
    assert mcp_name(NAVIGATE) not in (NAVIGATE, RELOAD)
    assert mcp_name("harness.anything").startswith("harness.anything--")
    looks_hashed = "todo--0123456789"
    assert mcp_name(looks_hashed) != looks_hashed
    assert mcp_name("todo--0123") == "todo--0123"  # too short to look hashed


def test_the_map_goes_both_ways() -> None:
    long = "y" * 100
    names = NameMap(["list_todos", long, NAVIGATE])
    assert names.to_mcp("list_todos") == "list_todos"
    assert names.to_page(names.to_mcp(long)) == long
    assert names.to_page(NAVIGATE) is None  # a page tool by that name has another MCP name
    assert names.to_page(names.to_mcp(NAVIGATE)) == NAVIGATE
    assert names.to_page("nothing") is None


def test_colliding_hashes_get_longer(monkeypatch: pytest.MonkeyPatch) -> None:
    # One hex digit and one shared stem: 20 names must collide, then get told apart.
    monkeypatch.setattr(mcp_names, "HASH_DIGITS", (1, 62))
    page_names = ["z" * 70 + str(i) for i in range(20)]
    names = NameMap(page_names)
    mapped = [names.to_mcp(n) for n in page_names]
    assert len(set(mapped)) == 20
    assert any(len(m.rsplit("--", 1)[1]) == 62 for m in mapped)
    assert all(len(m) <= 64 and SEP_986.match(m) for m in mapped)


@given(st.lists(st.text(max_size=140), max_size=12, unique=True))
def test_any_catalog_maps_to_distinct_valid_names(page_names: list[str]) -> None:
    names = NameMap(page_names)
    mapped = [names.to_mcp(n) for n in page_names]
    assert len(set(mapped)) == len(mapped)
    assert not set(mapped) & {NAVIGATE, RELOAD}
    for page, name in zip(page_names, mapped, strict=True):
        assert ISSUE_PATTERN.match(name) and SEP_986.match(name)
        assert names.to_page(name) == page
        assert name == mcp_name(page)  # no collisions here: each name maps on its own
