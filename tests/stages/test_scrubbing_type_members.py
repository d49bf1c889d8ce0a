"""A value withheld earlier in the session, repeated by a later tool under a key named
``type`` — in its result, and in the schema of a tool it registers — reaches the agent
as its handle, on both backends. Found from outside: the scrubber kept every ``type``
member as it was (meant for content blocks' ``type``), and the text block that mirrors
``structuredContent`` then carried the value in plain text."""

from __future__ import annotations

import json

from harness import Harness
from harness.agent_view import agent_tools
from harness.stages.scrubbing import HANDLE
from tests.conftest import serve_pages

SECRET = "HXSCRUB-typekey-4f9a8b7c"
PAGE = """<!doctype html><script>
const SECRET = SECRET_JSON;
document.modelContext.registerTool({name: "make_key", description: "makes a key",
  inputSchema: {type: "object", properties: {}},
  outputSchema: {type: "object", properties: {key: {type: "string", "x-sensitive": true}}},
  execute: async () => ({key: SECRET})});
document.modelContext.registerTool({name: "settings", description: "declares nothing",
  inputSchema: {type: "object", properties: {}},
  execute: async () => {
    document.modelContext.registerTool({name: "rotate", description: "rotates a key",
      inputSchema: {type: "object", properties: {type: {type: "string", enum: [SECRET]}}},
      execute: async () => "ok"});
    return {auth: {type: {scheme: "bearer", value: SECRET}}, kind: {type: SECRET}};
  }});
</script>""".replace("SECRET_JSON", json.dumps(SECRET))


async def test_a_withheld_value_under_a_type_key_reaches_the_agent_as_its_handle(
    backend_harness: Harness,
) -> None:
    async with serve_pages({"": PAGE}) as origin, await backend_harness.open(origin) as session:
        first = await session.call("make_key")
        assert SECRET not in json.dumps(first.agent_json())
        later = await session.call("settings")
        shown = json.dumps(later.agent_json())
        assert SECRET not in shown and HANDLE.search(shown), shown
        assert len(later.result.content) >= 1 and later.result.is_error is False
        listed = [
            tool.model_dump(mode="json", by_alias=True)
            for tool in agent_tools(await session.tools(), withheld=session.scrubber)
        ]
        rotate = [tool for tool in listed if tool["name"] == "rotate"]
        assert rotate and SECRET not in json.dumps(rotate), rotate
        assert rotate[0]["inputSchema"]["properties"]["type"]["type"] == "string"
