// The archive page: the server renders the done todos; this registers `list_archived`,
// which reads them fresh from the API and refreshes the visible list.

import { TODO_LIST_SCHEMA, api } from "./api.js";
import { registerTools, showAgentAction } from "./webmcp.js";

const list = document.getElementById("archived");

function render(todos) {
  if (todos.length === 0) {
    const empty = document.createElement("li");
    empty.className = "empty";
    empty.textContent = "Nothing done yet.";
    list.replaceChildren(empty);
    return;
  }
  list.replaceChildren(
    ...todos.map((todo) => {
      const item = document.createElement("li");
      item.dataset.id = String(todo.id);
      item.textContent = todo.text;
      return item;
    }),
  );
}

await registerTools([
  {
    name: "list_archived",
    title: "List archived todos",
    description: "List the todos that are done, oldest first.",
    inputSchema: { type: "object", properties: {}, additionalProperties: false },
    outputSchema: TODO_LIST_SCHEMA,
    annotations: { readOnlyHint: true },
    async execute(_input, client) {
      const { todos } = await api("GET", "/api/todos?status=done", { signal: client?.signal });
      render(todos);
      showAgentAction(`listed ${todos.length} archived todos`);
      return { todos };
    },
  },
]);
