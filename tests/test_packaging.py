"""pyproject's package list covers every folder that ships: a folder left out makes
setuptools warn ("Package would be ignored", hundreds of lines on every `make setup`) and
its files would be left out of a wheel."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_shipped_folder_is_a_listed_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = config["tool"]["setuptools"]
    roots: dict[str, str] = setuptools["package-dir"]
    listed = set(setuptools["packages"])
    found = set()
    for package, folder in roots.items():
        base = ROOT / folder
        for path in [base, *base.rglob("*")]:
            if not path.is_dir() or "__pycache__" in path.parts:
                continue
            if not any(f.is_file() for f in path.iterdir()):
                continue
            found.add(".".join((package, *path.relative_to(base).parts)))
    assert sorted(found - listed) == []
    assert sorted(listed - found) == []
