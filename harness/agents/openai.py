"""The ``openai`` agent: any OpenAI-compatible chat-completions endpoint with tool calling.

OpenAI itself, vLLM, Ollama, the llama.cpp server, LiteLLM… anything that
answers ``POST {base_url}/chat/completions`` with ``tools`` and ``tool_calls``.
It uses the official ``openai`` client library (``pip install
'webmcp-harness[openai]'``).

Options, or else the environment: ``model`` (``$OPENAI_MODEL``), ``base_url``
(``$OPENAI_BASE_URL``, default ``https://api.openai.com/v1``) and ``api_key``
(``$OPENAI_API_KEY``; a local server without keys needs none).
"""

from __future__ import annotations

from typing import Any

from openai import (
    APIConnectionError,
    APIError,
    APIStatusError,
    AsyncOpenAI,
    DefaultAsyncHttpxClient,
)
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
)

from harness.agents.base import AgentContext
from harness.agents.cassette import CassetteTransport
from harness.agents.llm import (
    Failure,
    LLMAgent,
    ModelCall,
    ModelReply,
    ProviderTool,
    ToolReply,
    parse_arguments,
)
from harness.agents.usage import request_usage
from harness.errors import ProviderError


class OpenAIAgent(LLMAgent):
    """An agent backed by an OpenAI-compatible chat-completions endpoint."""

    provider = "openai"
    default_base_url = "https://api.openai.com/v1"
    env_prefix = "OPENAI"
    key_variables = ("OPENAI_API_KEY",)

    def _connect(self, api_key: str, transport: CassetteTransport | None, timeout: float) -> None:
        self.client = AsyncOpenAI(
            api_key=api_key,
            base_url=self.endpoint,
            max_retries=0,  # retried in LLMAgent, so a cassette holds every attempt
            timeout=timeout,
            http_client=DefaultAsyncHttpxClient(transport=transport) if transport else None,
        )
        self.messages: list[ChatCompletionMessageParam] = []

    def _start(self, context: AgentContext) -> None:
        self.messages = []
        if self.system_prompt:
            self.messages.append({"role": "system", "content": self.system_prompt})
        self.messages.append(
            {"role": "user", "content": f"Task: {context.task}\nThe page is {context.url}."}
        )

    def _add_tool_replies(self, replies: list[ToolReply], note: str | None) -> None:
        for reply in replies:
            self.messages.append(
                {"role": "tool", "tool_call_id": reply.call_id, "content": reply.content}
            )
        if note:
            self.messages.append({"role": "user", "content": note})

    async def _send(self, tools: list[ProviderTool]) -> ModelReply:
        wire_tools: list[ChatCompletionFunctionToolParam] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                },
            }
            for t in tools
        ]
        options: dict[str, Any] = {}
        if wire_tools:  # the API refuses an empty list
            options["tools"] = wire_tools
        if self.temperature is not None:
            options["temperature"] = self.temperature
        if self.seed is not None:
            options["seed"] = self.seed
        if self.max_tokens is not None:
            options["max_completion_tokens"] = self.max_tokens
        completion = await self.client.chat.completions.create(
            model=self.model, messages=self.messages, **options
        )
        return self._reply(completion)

    def _reply(self, completion: ChatCompletion) -> ModelReply:
        if not completion.choices:
            raise ProviderError(f"{self.name} at {self.endpoint} answered with no choices.")
        choice = completion.choices[0]
        message = choice.message
        calls: list[ModelCall] = []
        wire_calls: list[ChatCompletionMessageFunctionToolCallParam] = []
        for call in message.tool_calls or []:
            if call.type != "function":  # custom tools are never offered
                continue
            arguments, problem = parse_arguments(call.function.arguments)
            calls.append(ModelCall(call.id, call.function.name, arguments, problem))
            wire_calls.append(
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.function.name, "arguments": call.function.arguments},
                }
            )
        text = message.content or message.refusal or ""
        if wire_calls:
            self.messages.append(
                {"role": "assistant", "content": message.content, "tool_calls": wire_calls}
            )
        else:
            self.messages.append({"role": "assistant", "content": text})
        usage = completion.usage
        cached = 0
        if usage is not None and usage.prompt_tokens_details is not None:
            cached = usage.prompt_tokens_details.cached_tokens or 0
        prompt = usage.prompt_tokens if usage is not None else 0
        return ModelReply(
            text=text,
            calls=calls,
            usage=request_usage(
                self.model,
                self.price,
                input_tokens=prompt - cached,
                output_tokens=usage.completion_tokens if usage is not None else 0,
                cache_read_tokens=cached,
            ),
            stop_reason=choice.finish_reason,
        )

    def _failure(self, err: Exception) -> Failure:
        if isinstance(err, APIStatusError):
            body = err.body  # the client library hands over the inner `error` object
            said = body.get("message") if isinstance(body, dict) else None
            return Failure.of_status(
                err.status_code, str(said or err.message), err.response.headers
            )
        if isinstance(err, APIConnectionError):  # timeouts too
            return Failure.unreachable(f"{err.message} ({err.__cause__ or 'no detail'})")
        return Failure.unreadable(err.message if isinstance(err, APIError) else repr(err))

    async def _close(self) -> None:
        await self.client.close()
