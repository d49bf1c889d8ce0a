// The todo list page: renders the list, lets a person add, complete and delete todos, and
// registers the same actions as WebMCP tools. Every tool calls the JSON API, updates the
// visible list, and returns a plain JSON object; a failure throws, so the harness reports
// the result with isError.

import { MAX_TEXT_LENGTH, TODO_LIST_SCHEMA, TODO_SCHEMA, api, checkTodoId } from "./api.js";
import { registerTools, showAgentAction, showNotice } from "./webmcp.js";

/** The todos on screen, by id, in the order the server lists them. */
const shown = new Map();

const list = document.getElementById("todos");
const counter = document.getElementById("counter");

function render() {
  list.replaceChildren(
    ...[...shown.values()].map((todo) => {
      const item = document.createElement("li");
      item.dataset.id = String(todo.id);
      item.classList.toggle("done", todo.done);

      const box = document.createElement("input");
      box.type = "checkbox";
      box.checked = todo.done;
      // There is no "reopen" in the API, so a done todo's box stays checked.
      box.disabled = todo.done;
      box.setAttribute("aria-label", `Complete: ${todo.text}`);
      box.addEventListener("change", () => completeTodo(todo.id).catch(reportError));

      const text = document.createElement("span");
      text.className = "text";
      text.textContent = todo.text; // never innerHTML: todo text is user (or agent) input

      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "delete";
      remove.textContent = "Delete";
      remove.setAttribute("aria-label", `Delete: ${todo.text}`);
      remove.addEventListener("click", () => deleteTodo(todo.id).catch(reportError));

      item.append(box, text, remove);
      return item;
    }),
  );
  const open = [...shown.values()].filter((todo) => !todo.done).length;
  counter.textContent = `${open} open, ${shown.size - open} done`;
}

function reportError(error) {
  showNotice(error.message);
}

// -- the actions, shared by the page's controls and the tools --------------------------

// The actions run one after another, in the order they were asked for: a listing asked for
// before a change (the page's first one, while an agent already adds a todo) must not come
// back after the change and wipe it from the screen.
let lastAction = Promise.resolve();

function inTurn(action) {
  const run = lastAction.then(action);
  lastAction = run.catch(() => {});
  return run;
}

function loadTodos(status = "all", signal) {
  return inTurn(async () => {
    const query = `/api/todos?status=${encodeURIComponent(status)}`;
    const { todos } = await api("GET", query, { signal });
    if (status === "all") {
      shown.clear();
    }
    for (const todo of todos) {
      shown.set(todo.id, todo);
    }
    render();
    return todos;
  });
}

function addTodo(text, signal) {
  return inTurn(async () => {
    const { todo } = await api("POST", "/api/todos", { body: { text }, signal });
    shown.set(todo.id, todo);
    render();
    return todo;
  });
}

function completeTodo(id, signal) {
  return inTurn(async () => {
    const { todo } = await api("POST", `/api/todos/${checkTodoId(id)}/complete`, { signal });
    shown.set(todo.id, todo);
    render();
    return todo;
  });
}

function deleteTodo(id, signal) {
  return inTurn(async () => {
    const { todo } = await api("DELETE", `/api/todos/${checkTodoId(id)}`, { signal });
    shown.delete(todo.id);
    render();
    return todo;
  });
}

document.getElementById("add-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = event.target.elements.text;
  addTodo(input.value)
    .then(() => {
      input.value = "";
    })
    .catch(reportError);
});

// -- the tools ----------------------------------------------------------------------------

const TODO_RESULT_SCHEMA = {
  type: "object",
  properties: { todo: TODO_SCHEMA },
  required: ["todo"],
  additionalProperties: false,
};

const ID_INPUT_SCHEMA = {
  type: "object",
  properties: {
    id: { type: "integer", minimum: 1, description: "The id of the todo, as list_todos shows it." },
  },
  required: ["id"],
  additionalProperties: false,
};

const tools = [
  {
    name: "list_todos",
    title: "List todos",
    description: "List the todos on this list, oldest first. Each has an id, its text and whether it is done.",
    inputSchema: {
      type: "object",
      properties: {
        status: {
          type: "string",
          enum: ["all", "open", "done"],
          default: "all",
          description: "Which todos to list: all (the default), only open ones, or only done ones.",
        },
      },
      additionalProperties: false,
    },
    outputSchema: TODO_LIST_SCHEMA,
    annotations: { readOnlyHint: true },
    async execute(input, client) {
      const status = input?.status ?? "all";
      const todos = await loadTodos(status, client?.signal);
      showAgentAction(`listed ${todos.length} ${status === "all" ? "" : `${status} `}todos`);
      return { todos };
    },
  },
  {
    name: "add_todo",
    title: "Add a todo",
    description: "Add a new open todo to the list and return it with its id.",
    inputSchema: {
      type: "object",
      properties: {
        text: {
          type: "string",
          minLength: 1,
          maxLength: MAX_TEXT_LENGTH,
          description: "What is to be done, in a short sentence.",
        },
      },
      required: ["text"],
      additionalProperties: false,
    },
    outputSchema: TODO_RESULT_SCHEMA,
    // Explicit about what it changes and where its input goes (the site audit's
    // annotations-not-explicit): a new todo, kept on this site only.
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    async execute(input, client) {
      const todo = await addTodo(input?.text, client?.signal);
      showAgentAction(`added todo ${todo.id}`);
      return { todo };
    },
  },
  {
    name: "complete_todo",
    title: "Complete a todo",
    description: "Mark a todo as done. Completing a todo that is already done changes nothing.",
    inputSchema: ID_INPUT_SCHEMA,
    outputSchema: TODO_RESULT_SCHEMA,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    async execute(input, client) {
      const todo = await completeTodo(input?.id, client?.signal);
      showAgentAction(`completed todo ${todo.id}`);
      return { todo };
    },
  },
  {
    name: "delete_todo",
    title: "Delete a todo",
    description: "Delete a todo for good. This cannot be undone.",
    inputSchema: ID_INPUT_SCHEMA,
    outputSchema: {
      type: "object",
      properties: { todo: TODO_SCHEMA, deleted: { const: true } },
      required: ["todo", "deleted"],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, consequentialHint: true, openWorldHint: false },
    async execute(input, client) {
      const todo = await deleteTodo(input?.id, client?.signal);
      showAgentAction(`deleted todo ${todo.id}`);
      return { todo, deleted: true };
    },
  },
];

// The first listing is asked for first, so it is first in turn; the tools are registered at
// the same time, since an agent may look for them as soon as the page has loaded. An agent
// can see them before registerTools returns, and its first change then comes after the list
// the page shows (and after the listing in the site's request log).
const firstListing = loadTodos().catch(reportError);
await registerTools(tools);
await firstListing;
