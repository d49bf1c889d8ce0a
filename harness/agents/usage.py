"""Token use and cost of the LLM agents.

Providers report tokens per response; each response becomes a
:class:`~harness.agents.base.TokenUsage` priced with a :class:`Price` (US
dollars per million tokens), which the loop records as a ``token-use`` event.
There is no built-in price table: prices change, and a stale default would
report a wrong cost as if it were right. Without a price for the model,
``cost_usd`` stays ``None``.

Prices come from the agent's options or from a JSON/YAML file (path in
``$WEBMCP_HARNESS_PRICES``) that maps model names to prices::

    gpt-4o: {input: 2.5, output: 10, cache_read: 1.25}
    claude-sonnet-4-5: {input: 3, output: 15, cache_read: 0.3, cache_write: 3.75}
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.agents.base import TokenUsage
from harness.errors import ConfigError
from harness.inputs import load_input

PRICES_ENV = "WEBMCP_HARNESS_PRICES"
# A snapshot suffix on a model name: -2024-08-06, -20250929, -latest.
DATED = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$")


class Price(BaseModel):
    """What one model costs, in US dollars per million tokens."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    # Cached input is billed differently by both providers; unset means "as input".
    cache_read: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)

    @classmethod
    def parse(cls, text: str) -> Price:
        """A price from ``"INPUT,OUTPUT"`` (dollars per million tokens), as a CLI option gives it."""
        parts = [p.strip() for p in text.split(",")]
        try:
            if len(parts) != 2:
                raise ValueError
            return cls(input=float(parts[0]), output=float(parts[1]))
        except (ValueError, ValidationError):
            raise ConfigError(
                f"Bad price {text!r}: write INPUT,OUTPUT in US dollars per million tokens, e.g. 2.5,10."
            ) from None


def request_usage(
    model: str,
    price: Price | None,
    *,
    input_tokens: int,
    output_tokens: int,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
) -> TokenUsage:
    """One request's usage, priced.

    ``input_tokens`` is uncached input; cached input is passed apart because it is
    billed at its own rate, and the result's ``input_tokens`` counts all of it.
    """
    cost: float | None = None
    if price is not None:
        cache_read = price.input if price.cache_read is None else price.cache_read
        cache_write = price.input if price.cache_write is None else price.cache_write
        dollars = (
            input_tokens * price.input
            + output_tokens * price.output
            + cache_read_tokens * cache_read
            + cache_write_tokens * cache_write
        ) / 1_000_000
        cost = round(dollars, 10)
    return TokenUsage(
        model=model,
        input_tokens=input_tokens + cache_read_tokens + cache_write_tokens,
        output_tokens=output_tokens,
        cost_usd=cost,
    )


def total_usage(model: str, usages: list[TokenUsage]) -> TokenUsage:
    """The sum of ``usages``; its cost is ``None`` only when no request was priced."""
    costs = [u.cost_usd for u in usages if u.cost_usd is not None]
    return TokenUsage(
        model=model,
        input_tokens=sum(u.input_tokens for u in usages),
        output_tokens=sum(u.output_tokens for u in usages),
        cost_usd=round(sum(costs), 10) if costs else None,
    )


class PriceTable:
    """Prices by model name; a lookup also tries the name without a snapshot suffix."""

    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self._prices = dict(prices or {})

    def __contains__(self, model: str) -> bool:
        return self.lookup(model) is not None

    def lookup(self, *models: str | None) -> Price | None:
        """The first price found for any of ``models`` (e.g. the requested and the answering model)."""
        for model in models:
            if not model:
                continue
            # "gpt-4o-2024-08-06" and "claude-sonnet-4-5-20250929" are priced as their family.
            for name in (model, DATED.sub("", model)):
                if name in self._prices:
                    return self._prices[name]
        return None

    @classmethod
    def load(cls, path: str | Path) -> PriceTable:
        """Read a JSON or YAML file mapping model names to ``{input, output, …}``."""
        file = Path(path)
        # Within the limits of every input file (size, YAML aliases, nesting).
        data: Any = load_input(file, "the price file", default="yaml")
        if not isinstance(data, dict):
            raise ConfigError(
                f"The price file {file} must map model names to {{input: …, output: …}}."
            )
        try:
            return cls({str(model): Price.model_validate(p) for model, p in data.items()})
        except ValidationError as err:
            raise ConfigError(f"Bad price in {file}: {err}") from None

    @classmethod
    def from_environment(cls) -> PriceTable:
        """The table named by ``$WEBMCP_HARNESS_PRICES``, or an empty one."""
        path = os.environ.get(PRICES_ENV)
        return cls.load(path) if path else cls()
