"""Documents without a browsing context — a ``<template>``'s content document, one from
``createHTMLDocument()`` (what DOMPurify and lit make), ``new Document()``, ``DOMParser`` —
have ``modelContext`` too. Chromium gives each a ModelContext whose methods convert their
arguments and reject with InvalidStateError "The document is not active." (measured without
the harness); the polyfill gives ``undefined`` (README's differences table). (Found from
outside: on the native backend such a read crashed the renderer. Chromium binds the frame's
WebMCP host at a document's first read, and a second bind for one frame kills it; the layer
had read the page's own document already.)"""

from __future__ import annotations

from typing import Any

import pytest

from harness import Harness
from tests.conftest import answers, serve_pages

PAGE = """<!doctype html><meta charset="utf-8"><title>editor</title><body><script>
document.modelContext.registerTool({name: "echo", description: "Says it back.",
  inputSchema: {type: "object", properties: {}}, execute: () => "echoed"});
</script></body>"""

# Each kind of document, read the way a page would meet it, and what its ModelContext does.
READS = """async () => {
  const fmt = (e) => e.name + ": " + e.message;
  const documents = {
    template: document.createElement("template").content.ownerDocument,
    html: document.implementation.createHTMLDocument("x"),
    constructed: new Document(),
    parsed: new DOMParser().parseFromString("<p>x</p>", "text/html"),
  };
  const seen = {};
  for (const [kind, d] of Object.entries(documents)) {
    const m = d.modelContext;
    seen[kind] = m === undefined ? "undefined" : {
      same: m === d.modelContext,
      isModelContext: m instanceof ModelContext,
      tag: Object.prototype.toString.call(m),
      ownKeys: Object.getOwnPropertyNames(m).length,
    };
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  const m = documents.html.modelContext;
  if (m === undefined) return {seen};
  const tool = {name: "a", description: "d", origin: location.origin, window};
  const calls = {
    register: await m.registerTool({name: "a", description: "d", execute() {}}).catch(fmt),
    registerNoName: await m.registerTool({description: "d", execute() {}}).catch(fmt),
    getTools: await m.getTools().catch(fmt),
    getToolsBadOrigins: await m.getTools({fromOrigins: 5}).catch(fmt),
    execute: await m.executeTool(tool, {}).catch(fmt),
    executeNoArguments: await m.executeTool().catch(fmt),
  };
  let handled = 0;
  const handler = () => handled++;
  m.ontoolactivated = handler;
  m.dispatchEvent(new Event("toolactivated"));
  calls.handlers = [m.ontoolactivated === handler, m.ontoolchange, handled];
  return {seen, calls};
}"""

NOT_ACTIVE = "InvalidStateError: The document is not active."
CHROMIUM = {
    "register": NOT_ACTIVE,
    "registerNoName": (
        "TypeError: Failed to execute 'registerTool' on 'ModelContext': Failed to read the "
        "'name' property from 'ModelContextTool': Required member is undefined."
    ),
    "getTools": NOT_ACTIVE,
    "getToolsBadOrigins": (
        "TypeError: Failed to execute 'getTools' on 'ModelContext': Failed to read the "
        "'fromOrigins' property from 'ModelContextGetToolOptions': The provided value cannot "
        "be converted to a sequence."
    ),
    "execute": NOT_ACTIVE,
    "executeNoArguments": (
        "TypeError: Failed to execute 'executeTool' on 'ModelContext': 1 argument required, "
        "but only 0 present."
    ),
    "handlers": [True, None, 1],
}


@pytest.mark.timeout(60)
async def test_a_document_without_a_browsing_context_has_chromiums_model_context(
    backend_harness: Harness,
) -> None:
    async with serve_pages({"": PAGE}) as origin:
        session = await backend_harness.open(origin + "/")
        try:
            got: dict[str, Any] = await session.page.evaluate(READS)
            assert await answers(session.page)  # the renderer lives
            if backend_harness.backend == "polyfill":
                assert got == {"seen": dict.fromkeys(got["seen"], "undefined")}
            else:
                shape = {"same": True, "isModelContext": True, "tag": "[object ModelContext]"}
                assert got["seen"] == dict.fromkeys(got["seen"], shape | {"ownKeys": 0})
                assert got["calls"] == CHROMIUM
            # The page's own tools are untouched.
            outcome = await session.call("echo", {})
            assert not outcome.is_error
        finally:
            await session.close()
