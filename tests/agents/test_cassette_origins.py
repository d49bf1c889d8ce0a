"""Cassettes replay against another run's sites: loopback origins match by order of appearance."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.agents.cassette import (
    Cassette,
    CassetteFile,
    Interaction,
    RecordedRequest,
    RecordedResponse,
)
from harness.errors import CassetteError


def body(first: str, second: str) -> dict[str, object]:
    return {
        "messages": [
            {"role": "user", "content": f"Task: read mail. The page is {first}/."},
            {
                "role": "tool",
                "content": f'<untrusted-data origin="{first}">see {second}/x</untrusted-data>',
            },
        ]
    }


def cassette(tmp_path: Path) -> Cassette:
    path = tmp_path / "c.json"
    recorded = RecordedRequest(
        method="POST",
        path="/v1/chat/completions",
        json_body=body("http://127.0.0.1:1111", "http://127.0.0.1:2222"),
    )
    answer = RecordedResponse(status=200, json_body={"ok": True})
    path.write_text(
        CassetteFile(interactions=[Interaction(request=recorded, response=answer)]).model_dump_json(
            by_alias=True
        ),
        encoding="utf-8",
    )
    return Cassette(path, "replay")


def test_the_same_conversation_on_other_ports_replays(tmp_path: Path) -> None:
    sent = RecordedRequest(
        method="POST",
        path="/v1/chat/completions",
        json_body=body("http://127.0.0.1:3333", "http://127.0.0.1:4444"),
    )
    assert cassette(tmp_path).replay(sent).json_body == {"ok": True}


def test_a_conversation_that_mixes_up_two_sites_does_not(tmp_path: Path) -> None:
    sent = RecordedRequest(
        method="POST",
        path="/v1/chat/completions",
        json_body=body("http://127.0.0.1:3333", "http://127.0.0.1:3333"),
    )
    with pytest.raises(CassetteError, match="does not match the recording"):
        cassette(tmp_path).replay(sent)
