"""The ``anthropic`` agent: Claude through the Messages API with tool use.

It uses the official ``anthropic`` client library (``pip install
'webmcp-harness[anthropic]'``). Options, or else the environment: ``model``
(``$ANTHROPIC_MODEL``), ``base_url`` (``$ANTHROPIC_BASE_URL``, default
``https://api.anthropic.com``) and ``api_key`` (``$ANTHROPIC_API_KEY``, or a
bearer token in ``$ANTHROPIC_AUTH_TOKEN``).
"""

from __future__ import annotations

from typing import Any, Final

from anthropic import (
    APIConnectionError,
    APIError,
    APIStatusError,
    AsyncAnthropic,
    DefaultAsyncHttpxClient,
)
from anthropic.types import (
    ContentBlockParam,
    Message,
    MessageParam,
    TextBlockParam,
    ToolParam,
    ToolResultBlockParam,
)

from harness.agents.base import AgentContext
from harness.agents.cassette import CassetteTransport
from harness.agents.llm import Failure, LLMAgent, ModelCall, ModelReply, ProviderTool, ToolReply
from harness.agents.usage import request_usage

# Messages API requests must say how long an answer may be; this is the default.
DEFAULT_MAX_TOKENS: Final = 4096


class AnthropicAgent(LLMAgent):
    """An agent backed by the Anthropic Messages API."""

    provider = "anthropic"
    default_base_url = "https://api.anthropic.com"
    env_prefix = "ANTHROPIC"
    # This client library sends either one as a bearer token.
    key_variables = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")

    def _connect(self, api_key: str, transport: CassetteTransport | None, timeout: float) -> None:
        self.client = AsyncAnthropic(
            api_key=api_key,
            base_url=self.endpoint,
            max_retries=0,  # retried in LLMAgent, so a cassette holds every attempt
            timeout=timeout,
            http_client=DefaultAsyncHttpxClient(transport=transport) if transport else None,
        )
        self.messages: list[MessageParam] = []

    def _start(self, context: AgentContext) -> None:
        self.messages = [
            {"role": "user", "content": f"Task: {context.task}\nThe page is {context.url}."}
        ]

    def _add_tool_replies(self, replies: list[ToolReply], note: str | None) -> None:
        blocks: list[ContentBlockParam] = []
        for reply in replies:
            result: ToolResultBlockParam = {
                "type": "tool_result",
                "tool_use_id": reply.call_id,
                "content": reply.content,
            }
            if reply.is_error:
                result["is_error"] = True
            blocks.append(result)
        if note:
            text: TextBlockParam = {"type": "text", "text": note}
            blocks.append(text)
        if blocks:  # the API refuses an empty user turn
            self.messages.append({"role": "user", "content": blocks})

    async def _send(self, tools: list[ProviderTool]) -> ModelReply:
        wire_tools: list[ToolParam] = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in tools
        ]
        options: dict[str, Any] = {}
        if wire_tools:
            options["tools"] = wire_tools
        if self.system_prompt:
            options["system"] = self.system_prompt
        if self.temperature is not None:
            # Not a typed argument of this client version, but the API takes it.
            options["extra_body"] = {"temperature": self.temperature}
        message = await self.client.messages.create(
            model=self.model,
            max_tokens=self.max_tokens or DEFAULT_MAX_TOKENS,
            messages=self.messages,
            **options,
        )
        return self._reply(message)

    def _reply(self, message: Message) -> ModelReply:
        calls: list[ModelCall] = []
        texts: list[str] = []
        content: list[ContentBlockParam] = []
        for block in message.content:
            if block.type == "text":
                texts.append(block.text)
                content.append({"type": "text", "text": block.text})
            elif block.type == "tool_use":
                calls.append(ModelCall(block.id, block.name, dict(block.input)))
                content.append(
                    {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
                )
            elif block.type == "thinking":
                # Extended thinking must go back unchanged with the tool results.
                content.append(
                    {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
                )
            elif block.type == "redacted_thinking":
                content.append({"type": "redacted_thinking", "data": block.data})
        # The API refuses an empty assistant turn (e.g. a reply cut off at max_tokens).
        self.messages.append({"role": "assistant", "content": content or "(no answer)"})
        usage = message.usage
        return ModelReply(
            text="\n".join(texts),
            calls=calls,
            usage=request_usage(
                self.model,
                self.price,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_tokens=usage.cache_read_input_tokens or 0,
                cache_write_tokens=usage.cache_creation_input_tokens or 0,
            ),
            stop_reason=message.stop_reason or "",
        )

    def _failure(self, err: Exception) -> Failure:
        if isinstance(err, APIStatusError):
            kind = f"{err.type}: " if err.type else ""
            said = f"{kind}{err.api_message or err.message}"
            return Failure.of_status(err.status_code, said, err.response.headers)  # 529 too
        if isinstance(err, APIConnectionError):  # timeouts too
            return Failure.unreachable(f"{err.message} ({err.__cause__ or 'no detail'})")
        return Failure.unreadable(err.message if isinstance(err, APIError) else repr(err))

    async def _close(self) -> None:
        await self.client.close()
