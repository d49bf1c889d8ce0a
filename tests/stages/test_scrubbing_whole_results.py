"""A whole withheld result (``sensitiveHint``) makes the session search for its values —
not for its field names, nor for its short words — and no withheld text can break the
structure the harness writes (its content blocks, its record of what it withheld), on
both backends. Found from outside: a result ``{"text": …, "type": "bearer"}`` made
``call`` die with a validation error (the keys ``text`` and ``type`` of the harness's own
blocks were rewritten), and ``{"token": …, "scope": "read"}`` took "read", "token" and
"scope" out of every later result ("Please wmh-result-… the thwmh-result-…")."""

from __future__ import annotations

import json

from harness import Harness
from harness.stages.redaction import REDACTED_META_KEY
from tests.conftest import serve_pages

SECRET = "HXSCRUB-tok-9f8e7d6c5b4a"
TEXT = "Please read the thread about the text, its type, scope and token budget"
PAGE = """<!doctype html><script>
const mc = document.modelContext;
mc.registerTool({name: "token_issue", description: "Issues an API token.",
  annotations: {readOnlyHint: true, sensitiveHint: true},
  inputSchema: {type: "object", properties: {scope: {type: "string"}}},
  execute: async ({scope}) => ({token: "SECRET", scope, text: "SECRET", type: "bearer",
                                label: "work", path: "/keys/1"})});
mc.registerTool({name: "pin", description: "A PIN.", annotations: {readOnlyHint: true},
  inputSchema: {type: "object", properties: {}},
  outputSchema: {type: "object", properties: {label: {type: "string", "x-sensitive": true}}},
  execute: async () => ({label: "text"})});
mc.registerTool({name: "echo", description: "Echoes text back.", annotations: {readOnlyHint: true},
  inputSchema: {type: "object", properties: {text: {type: "string"}}},
  execute: async ({text}) => ({text, repeated: "SECRET"})});
</script>""".replace("SECRET", SECRET)


async def test_a_whole_withheld_result_withholds_its_values_not_its_words(
    backend_harness: Harness,
) -> None:
    async with serve_pages({"": PAGE}) as origin, await backend_harness.open(origin) as session:
        first = await session.call("token_issue", {"scope": "read"})
        shown = json.dumps(first.agent_json())
        assert SECRET not in shown and "'token_issue'" in shown, shown
        [record] = first.result.meta[REDACTED_META_KEY]
        assert set(record) == {"path", "label", "handle", "kind"}
        assert record["label"] == "result of token_issue"
        later = await session.call("echo", {"text": TEXT})
        assert later.result.structured_content is not None
        assert later.result.structured_content["text"] == TEXT
        assert SECRET not in json.dumps(later.agent_json())  # the secret itself still is


async def test_a_withheld_value_that_is_a_word_of_the_harness_s_shape_breaks_nothing(
    backend_harness: Harness,
) -> None:
    async with serve_pages({"": PAGE}) as origin, await backend_harness.open(origin) as session:
        marked = await session.call("pin")  # withholds the text "text"
        assert marked.result.is_error is False
        [record] = marked.result.meta[REDACTED_META_KEY]
        assert set(record) == {"path", "label", "handle", "kind"}
        later = await session.call("echo", {"text": "plain text"})
        view = later.agent_json()
        assert all(set(block) >= {"type", "text"} for block in view["content"]), view
        assert "plain wmh-" in json.dumps(view)  # the word itself is withheld, as marked
