"""``harness.errors``: the one way input files are read (and refused)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.errors import (
    MAX_INPUT_FILE_BYTES,
    ConfigError,
    PolicyError,
    parse_problem,
    read_input_file,
)


def test_a_readable_file_is_its_text(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("task: é\n", encoding="utf-8")
    assert read_input_file(tmp_path / "a.yaml", "plan") == "task: é\n"


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda p: None, "No such file"),
        (lambda p: p.mkdir(), "it is a directory"),
        (lambda p: p.write_bytes(b"ok\xff\xfe"), "not UTF-8 text (byte 2 is 0xff)"),
        (lambda p: p.write_bytes(b"#" * (MAX_INPUT_FILE_BYTES + 1)), "over the 10,485,760"),
    ],
    ids=["missing", "directory", "binary", "huge"],
)
def test_an_unusable_file_is_one_line_naming_it(tmp_path: Path, make, why: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "plan.yaml"
    make(path)
    with pytest.raises(ConfigError) as raised:
        read_input_file(path, "plan")
    message = str(raised.value)
    assert message.startswith(f"Cannot read plan {path}") and why in message
    assert "\n" not in message


def test_the_error_class_is_the_callers(tmp_path: Path) -> None:
    with pytest.raises(PolicyError):
        read_input_file(tmp_path / "none.toml", "the policy file", PolicyError)


def test_a_yaml_error_is_one_line_with_its_place() -> None:
    with pytest.raises(yaml.YAMLError) as raised:
        yaml.safe_load("steps: [\n  - call: x\n")
    assert "\n" in str(raised.value)
    assert parse_problem(raised.value) == (
        "while parsing a flow node: expected the node content, but found '-' (line 2, column 3)"
    )
