"""Loopback stand-ins for the OpenAI and Anthropic APIs, for the LLM agent tests.

Each server speaks its provider's real wire format (paths, headers, request and
response JSON, error bodies) and follows a script: the n-th request gets the
n-th :class:`Reply`. Like the real APIs, it refuses requests that break the
format (a tool call left without its result, a tool name the API would refuse,
a missing key), with the provider's error body; ``problems`` lists every such
refusal, so a test can assert there were none.

Token counts are a pure function of the request and reply bytes, so a replayed
run must report exactly the usage of the recorded one.
"""

from __future__ import annotations

import json
import re
import socket
from dataclasses import dataclass, field
from typing import Any, Self

from aiohttp import web

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass(frozen=True)
class Reply:
    """One scripted answer: text, tool calls ``(name, arguments)``, or an HTTP error.

    For OpenAI, ``arguments`` may be a string: it is sent as the raw
    ``function.arguments`` text (to script a model that writes bad JSON).
    """

    text: str = ""
    calls: list[tuple[str, dict[str, Any] | str]] = field(default_factory=list)
    status: int = 200
    error: str = ""
    headers: dict[str, str] = field(default_factory=dict)


def _tokens(value: Any) -> int:
    return len(json.dumps(value, sort_keys=True, separators=(",", ":"))) // 4 + 1


class ScriptedLLMServer:
    """The common part: a port, the script, what was received."""

    path = "/"

    def __init__(self, script: list[Reply], *, api_key: str = "test-key") -> None:
        self.script = list(script)
        self.api_key = api_key
        self.requests: list[dict[str, Any]] = []
        self.answers: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.problems: list[str] = []
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        """What a client takes as ``base_url``."""
        raise NotImplementedError

    async def start(self) -> Self:
        app = web.Application()
        app.router.add_post(self.path, self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _handle(self, request: web.Request) -> web.Response:
        self.headers.append(dict(request.headers))
        try:
            body = await request.json()
        except ValueError:
            return self._refuse(400, "invalid_request_error", "The body is not JSON.")
        self.requests.append(body)
        auth = self._auth_problem(request)
        if auth:
            return self._refuse(401, "authentication_error", auth)
        problem = self.check(body)
        if problem:
            return self._refuse(400, "invalid_request_error", problem)
        if not self.script:
            return self._refuse(500, "api_error", "The test script has no reply left.")
        reply = self.script.pop(0)
        if reply.status != 200:
            return self.error_response(reply.status, "api_error", reply.error, reply.headers)
        answer = self.answer(body, reply, len(self.requests))
        self.answers.append(answer)
        return web.json_response(answer, headers=reply.headers)

    def _refuse(self, status: int, kind: str, message: str) -> web.Response:
        self.problems.append(message)
        return self.error_response(status, kind, message, {})

    def _auth_problem(self, request: web.Request) -> str | None:
        raise NotImplementedError

    def check(self, body: dict[str, Any]) -> str | None:
        """Why the real API would refuse ``body``, or ``None``."""
        raise NotImplementedError

    def answer(self, body: dict[str, Any], reply: Reply, number: int) -> dict[str, Any]:
        """The response body for ``reply``."""
        raise NotImplementedError

    def error_response(
        self, status: int, kind: str, message: str, headers: dict[str, str]
    ) -> web.Response:
        raise NotImplementedError


class OpenAIServer(ScriptedLLMServer):
    """``POST /v1/chat/completions`` with ``tools``, ``tool_calls`` and ``tool`` messages."""

    path = "/v1/chat/completions"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _auth_problem(self, request: web.Request) -> str | None:
        given = request.headers.get("Authorization", "")
        if given != f"Bearer {self.api_key}":
            # The real API quotes the key it got; the agent must not pass it on.
            return f"Incorrect API key provided: {given.removeprefix('Bearer ')}."
        return None

    def check(self, body: dict[str, Any]) -> str | None:
        if not isinstance(body.get("model"), str):
            return "you must provide a model parameter"
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "'messages' must be a non-empty array"
        tools = body.get("tools")
        if tools is not None:
            if not isinstance(tools, list) or not tools:
                return "[] is too short - 'tools'"
            names = []
            for tool in tools:
                function = tool.get("function", {})
                if tool.get("type") != "function" or not isinstance(function, dict):
                    return "tools[].type must be 'function'"
                if not TOOL_NAME.match(str(function.get("name"))):
                    return f"Invalid 'tools[].function.name': {function.get('name')!r}"
                if function.get("parameters", {}).get("type") != "object":
                    return "tools[].function.parameters must be an object schema"
                names.append(function["name"])
            if len(names) != len(set(names)):
                return "tool names must be unique"
        open_calls: list[str] = []
        for i, message in enumerate(messages):
            role = message.get("role")
            if role == "tool":
                if message.get("tool_call_id") not in open_calls:
                    return (
                        f"messages[{i}]: role 'tool' must be a response to a preceding message "
                        "with 'tool_calls'"
                    )
                open_calls.remove(message["tool_call_id"])
                if not isinstance(message.get("content"), str):
                    return f"messages[{i}].content must be a string"
                continue
            if open_calls:
                return (
                    "An assistant message with 'tool_calls' must be followed by tool messages "
                    f"responding to each 'tool_call_id'. Missing: {open_calls}"
                )
            if role == "assistant":
                for call in message.get("tool_calls") or []:
                    if not isinstance(call.get("function", {}).get("arguments"), str):
                        return f"messages[{i}].tool_calls[].function.arguments must be a string"
                    open_calls.append(call["id"])
            elif role not in ("system", "developer", "user"):
                return f"messages[{i}]: unknown role {role!r}"
        if open_calls:
            return f"tool calls without results: {open_calls}"
        return None

    def answer(self, body: dict[str, Any], reply: Reply, number: int) -> dict[str, Any]:
        calls = [
            {
                "id": f"call_{number}_{k}",
                "type": "function",
                "function": {
                    "name": name,
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
            for k, (name, args) in enumerate(reply.calls)
        ]
        message: dict[str, Any] = {
            "role": "assistant",
            "content": reply.text or None,
            "refusal": None,
        }
        if calls:
            message["tool_calls"] = calls
        prompt = _tokens([body["messages"], body.get("tools")])
        completion = _tokens(message)
        return {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion",
            "created": 1_700_000_000 + number,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if calls else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": 0},
            },
        }

    def error_response(
        self, status: int, kind: str, message: str, headers: dict[str, str]
    ) -> web.Response:
        error = {"message": message, "type": kind, "param": None, "code": None}
        return web.json_response({"error": error}, status=status, headers=headers)


class AnthropicServer(ScriptedLLMServer):
    """``POST /v1/messages`` with ``tools``, ``tool_use`` / ``tool_result`` blocks."""

    path = "/v1/messages"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _auth_problem(self, request: web.Request) -> str | None:
        if not request.headers.get("anthropic-version"):
            return "anthropic-version: header is required"
        # The API takes the key as `x-api-key` or (as this client library sends it) a bearer token.
        given = request.headers.get("x-api-key") or request.headers.get("Authorization", "")
        if given.removeprefix("Bearer ") != self.api_key:
            return f"invalid x-api-key: {given.removeprefix('Bearer ')}"
        return None

    def check(self, body: dict[str, Any]) -> str | None:
        if not isinstance(body.get("model"), str):
            return "model: Field required"
        if not isinstance(body.get("max_tokens"), int):
            return "max_tokens: Field required"
        system = body.get("system")
        if system is not None and not isinstance(system, str | list):
            return "system: must be a string or a list of text blocks"
        for i, tool in enumerate(body.get("tools") or []):
            if not TOOL_NAME.match(str(tool.get("name"))):
                return f"tools.{i}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            if tool.get("input_schema", {}).get("type") != "object":
                return f"tools.{i}.input_schema.type: Input should be 'object'"
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return "messages: at least one message is required"
        expected_role = "user"
        open_uses: list[str] = []
        for i, message in enumerate(messages):
            role = message.get("role")
            if role != expected_role:
                return f"messages.{i}.role: roles must alternate, starting with 'user'"
            expected_role = "assistant" if role == "user" else "user"
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            if not isinstance(blocks, list) or not blocks:
                return f"messages.{i}: content must be non-empty"
            if role == "user":
                results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
                leading = [b.get("type") for b in blocks[: len(results)]]
                if any(kind != "tool_result" for kind in leading):
                    return f"messages.{i}: tool_result blocks must come first"
                if sorted(results) != sorted(open_uses):
                    return (
                        f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                        f"immediately after: {sorted(set(open_uses) - set(results))}"
                    )
                for block in blocks:
                    if block.get("type") == "tool_result" and not isinstance(
                        block.get("content"), str | list
                    ):
                        return f"messages.{i}: tool_result content must be text or blocks"
                open_uses = []
            else:
                open_uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        if open_uses:
            return "the last message cannot hold unanswered tool_use blocks"
        return None

    def answer(self, body: dict[str, Any], reply: Reply, number: int) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        for k, (name, args) in enumerate(reply.calls):
            assert isinstance(args, dict), "Anthropic tool_use input is always an object"
            content.append(
                {"type": "tool_use", "id": f"toolu_{number}_{k}", "name": name, "input": args}
            )
        return {
            "id": f"msg_{number}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": "tool_use" if reply.calls else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": _tokens([body.get("system"), body["messages"], body.get("tools")]),
                "output_tokens": _tokens(content),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }

    def error_response(
        self, status: int, kind: str, message: str, headers: dict[str, str]
    ) -> web.Response:
        body = {"type": "error", "error": {"type": kind, "message": message}}
        return web.json_response(body, status=status, headers=headers)
