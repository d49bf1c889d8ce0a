"""The LLM providers: ``openai`` and ``anthropic``, each imported only when it is asked for."""

from __future__ import annotations

from typing import Any

from harness.agents.llm import LLM_OPTIONS, LLMAgent
from harness.errors import ConfigError


def llm_agent(provider: str, model: str, **options: Any) -> LLMAgent:
    """The ``openai`` or ``anthropic`` agent for ``model`` (empty: from the environment).

    Options the LLM agents do not take, and options set to ``None``, are left out.
    A missing client library is a :class:`~harness.errors.ConfigError` that says
    which extra to install.
    """
    chosen = {k: v for k, v in options.items() if k in LLM_OPTIONS and v is not None}
    try:
        if provider == "openai":
            from harness.agents.openai import OpenAIAgent

            return OpenAIAgent(model or None, **chosen)
        if provider == "anthropic":
            from harness.agents.anthropic import AnthropicAgent

            return AnthropicAgent(model or None, **chosen)
    except ModuleNotFoundError as err:
        if err.name not in ("openai", "anthropic"):
            raise
        raise ConfigError(
            f"The {provider} agent needs the {err.name} client library: "
            f"pip install 'webmcp-harness[{err.name}]'."
        ) from None
    raise ConfigError(f"No LLM agent for provider {provider!r}; there are openai and anthropic.")
