"""A ``<form toolname>`` without ``toolautosubmit`` waits for the user's review; over MCP
that question goes to the client whose call filled the form (``elicitation/create``), as
every other question of a call does — not to the bridge's local ``--elicit`` handler."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import mcp.types as types
import pytest
from mcp.client.session import ClientRequestContext

from tests.mcp.test_mcp_server import connect, text_of

PAGE = """<!doctype html><meta charset="utf-8"><title>order</title>
<form id="order" toolname="order" tooldescription="Place an order.">
  <input name="item" required><input name="qty" type="number" min="1" max="5">
  <button>Order</button>
</form>
<script>
document.getElementById("order").addEventListener("submit", (event) => {
  event.preventDefault();
  const data = new FormData(event.target);
  event.respondWith(Promise.resolve("ordered " + data.get("qty") + " " + data.get("item")));
});
</script>
"""

pytestmark = pytest.mark.timeout(180)


class Reviewer:
    """The client's elicitation callback: ``action``, accepting the values as filled."""

    def __init__(self, action: Literal["accept", "decline"]) -> None:
        self.action = action
        self.asked: list[types.ElicitRequestParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.asked.append(params)
        if self.action == "decline":
            return types.ElicitResult(action="decline")
        assert isinstance(params, types.ElicitRequestFormParams)
        filled = params.requested_schema["properties"]
        return types.ElicitResult(
            action="accept", content={k: v["default"] for k, v in filled.items() if "default" in v}
        )


@pytest.mark.parametrize("era", ["legacy", "auto"])
@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_the_calling_client_reviews_the_form(
    tmp_path: Path, era: str, action: Literal["accept", "decline"]
) -> None:
    page = tmp_path / "order.html"
    page.write_text(PAGE, encoding="utf-8")
    answers = Reviewer(action)
    async with connect(page.as_uri(), era, answers=answers) as connection:
        result = await connection.call("order", {"item": "tea", "qty": 2})
    assert len(answers.asked) == 1, "the client was not asked to review the form"
    assert "waits to be submitted" in answers.asked[0].message
    if action == "accept":
        assert result.is_error is False and "ordered 2 tea" in text_of(result)
    else:
        assert result.is_error is True and "declined to submit the form" in text_of(result)
