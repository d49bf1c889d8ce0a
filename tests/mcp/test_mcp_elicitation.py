"""The ``mcp`` elicitation handler: ``harness/mcp/elicitation.py``.

The round trips through real MCP clients (handshake and 2026-07-28, stdio and
HTTP) are in ``tests/test_mcp_server.py``.
"""

from __future__ import annotations

import mcp.types as types

from harness.elicitation.base import AutoHandler, ElicitationRequest, ElicitationResult, ask
from harness.mcp.elicitation import McpElicitationHandler, client_channel, elicit_params


class _Channel:
    """A stand-in for a client's channel that can answer forms only."""

    def __init__(self) -> None:
        self.asked: list[ElicitationRequest] = []

    def can_answer(self, request: ElicitationRequest) -> bool:
        return request.mode == "form"

    async def ask(self, request: ElicitationRequest) -> ElicitationResult:
        self.asked.append(request)
        return ElicitationResult(action="accept", content={"n": 2})


async def test_the_client_answers_what_it_can_and_the_local_handler_the_rest() -> None:
    handler = McpElicitationHandler(AutoHandler("decline"))
    form = ElicitationRequest(source="policy", message="Allow?")
    interactive = ElicitationRequest(source="tool-question", message="Talk?", mode="interactive")
    assert (await ask(handler, form)).action == "decline"  # no client call running
    channel = _Channel()
    token = client_channel.set(channel)
    try:
        assert (await ask(handler, form)).content == {"n": 2}
        assert (await ask(handler, interactive)).action == "decline"
    finally:
        client_channel.reset(token)
    assert channel.asked == [form]


def test_questions_become_mcp_forms_with_the_agents_values_as_defaults() -> None:
    request = ElicitationRequest(
        source="tool-elicit",
        message="Check the amount",
        origin="http://127.0.0.1:9",
        tool="pay",
        requested_schema={
            "type": "object",
            "properties": {"amount": {"type": "number", "default": 1}, "memo": {"type": "string"}},
            "required": ["amount"],
        },
        prefilled={"amount": 5},
    )
    params = elicit_params(request)
    assert isinstance(params, types.ElicitRequestFormParams)
    assert params.message.splitlines() == [
        "Check the amount",
        "asked by: http://127.0.0.1:9",
        'tool: "pay" (the page\'s words)',
    ]
    assert params.requested_schema["properties"]["amount"]["default"] == 5
    assert params.requested_schema["required"] == ["amount"]
    opened = elicit_params(
        ElicitationRequest(
            source="tool-question", message="Log in", mode="url", url="https://x.test/"
        )
    )
    assert isinstance(opened, types.ElicitRequestURLParams) and opened.url == "https://x.test/"
