// The pantry's tools. Release 2 (`/next`) widens find_items' limit and adds clear_pantry.
const mc = document.modelContext;
const release = document.body.dataset.release;
const itemsOf = async () => (await (await fetch("/api/items")).json()).items;

async function render() {
  const list = document.getElementById("items");
  list.replaceChildren(...(await itemsOf()).map((item) => {
    const li = document.createElement("li");
    li.textContent = `${item.name}: ${item.count}`;
    return li;
  }));
}

mc.registerTool({
  name: "list_items",
  description: "Lists every item in the pantry with its count.",
  annotations: {readOnlyHint: true},
  inputSchema: {type: "object", properties: {}},
  outputSchema: {
    type: "object",
    properties: {items: {type: "array", items: {
      type: "object",
      properties: {name: {type: "string"}, count: {type: "integer", minimum: 0}},
      required: ["name", "count"],
    }}},
    required: ["items"],
  },
  execute: async () => ({items: await itemsOf()}),
});

mc.registerTool({
  name: "find_items",
  description: "Finds the items whose name starts with the query (any case).",
  annotations: {readOnlyHint: true},
  inputSchema: {
    type: "object",
    properties: {
      query: {type: "string", maxLength: 40, description: "The start of the item's name."},
      limit: {type: "integer", minimum: 1, maximum: release === "2" ? 500 : 20},
    },
    required: ["query"],
  },
  execute: async ({query, limit = 20}) => {
    // The planted bug: an empty query has no first letter.
    const initial = query[0].toLowerCase();
    const rest = query.slice(1).toLowerCase();
    const found = (await itemsOf()).filter((item) =>
      item.name[0] === initial && item.name.slice(1).startsWith(rest));
    return {items: found.slice(0, limit)};
  },
});

mc.registerTool({
  name: "set_stock",
  description: "Sets how many of an item there are.",
  annotations: {idempotentHint: true},
  inputSchema: {
    type: "object",
    properties: {
      item: {type: "string", enum: ["apples", "beans", "coffee", "dates"]},
      count: {type: "integer", minimum: 0, maximum: 99},
    },
    required: ["item", "count"],
  },
  execute: async ({item, count}) => {
    const answer = await fetch(`/api/items/${item}`, {
      method: "PUT", headers: {"Content-Type": "application/json"}, body: JSON.stringify({count}),
    });
    if (!answer.ok) throw new Error("the pantry refused that count");
    await render();
    return {item, count};
  },
});

if (release === "2") {
  mc.registerTool({
    name: "clear_pantry",
    description: "Sets every item's count to zero.",
    annotations: {destructiveHint: true},
    inputSchema: {type: "object", properties: {}},
    execute: async () => {
      for (const item of await itemsOf()) {
        await fetch(`/api/items/${item.name}`, {
          method: "PUT", headers: {"Content-Type": "application/json"}, body: '{"count": 0}',
        });
      }
      await render();
      return {cleared: true};
    },
  });
}

render();
