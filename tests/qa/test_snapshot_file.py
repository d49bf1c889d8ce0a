"""A catalog file cut short or edited is refused, not read as a catalog with no tools (which
would report every tool removed and pass a gate that fails only on worse)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import ConfigError
from harness.qa.snapshot import CATALOG_FORMAT, CatalogSnapshot, read_snapshot


@pytest.mark.parametrize("tools", ["missing", None, {}, "[]"])
def test_a_catalog_file_without_its_tools_list_is_refused(tmp_path: Path, tools: object) -> None:
    data: dict[str, object] = {"format": CATALOG_FORMAT, "url": "http://a.test/"}
    if tools != "missing":
        data["tools"] = tools
    path = tmp_path / "catalog.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError, match=r'has no "tools" list.*webmcp-harness snapshot'):
        read_snapshot(path)


def test_a_catalog_of_no_tools_is_still_a_catalog(tmp_path: Path) -> None:
    path = tmp_path / "catalog.json"
    path.write_text(CatalogSnapshot(url="http://a.test/").to_json(), encoding="utf-8")
    assert read_snapshot(path).tools == []
