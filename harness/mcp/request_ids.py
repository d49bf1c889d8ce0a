"""The HTTP transport's answer to a request whose id MCP does not take.

MCP's request ids are strings and integers (never null). The SDK's streamable HTTP transport
reads ``{"id": null, "method": "tools/list"}`` — or an id of 1.5, true, a list — as a
notification: it answers 202 Accepted with no body and hands the message to the server as
one, so the client gets no answer for its request. :class:`RequestIds` answers such a POST
itself, before the SDK reads it, as the stdio transport does (:mod:`harness.mcp.stdio`):
HTTP 400 with the JSON-RPC error -32600, id null.
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types
import pydantic_core

from harness.mcp.stdio import BAD_ID, is_request_id

Scope = dict[str, Any]
Message = dict[str, Any]


class RequestIds:
    """ASGI middleware: POST bodies read once and handed on whole, after the id check."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left: nothing to answer
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        chunks.clear()
        if _bad_request_id(body):
            await _answer_invalid_request(send)
            return
        given = False

        async def replay() -> Message:
            nonlocal given
            if given:  # after the body: what the client does next (a disconnect)
                return dict(await receive())
            given = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def _bad_request_id(body: bytes) -> bool:
    """Whether ``body`` is one request (it names a method and has an id) whose id is not a
    string or an integer. Anything else — not JSON, a batch, a notification — is the SDK's
    to answer."""
    try:
        message = pydantic_core.from_json(body)
    except ValueError:
        return False
    return (
        isinstance(message, dict)
        and "method" in message
        and "id" in message
        and not is_request_id(message["id"])
    )


async def _answer_invalid_request(send: Any) -> None:
    error = types.JSONRPCError(
        jsonrpc="2.0", id=None, error=types.ErrorData(code=types.INVALID_REQUEST, message=BAD_ID)
    )
    body = json.dumps(error.model_dump(mode="json", by_alias=True, exclude_unset=True)).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 400,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
