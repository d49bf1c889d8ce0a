// The todo site's JSON API, seen from the page: one fetch per call, errors as Error objects.
// Tools and the page's own buttons both go through here, so the server's request log shows
// exactly one request per action.

export const MAX_TEXT_LENGTH = 200;

/** JSON Schema of one todo, as the API returns it. */
export const TODO_SCHEMA = Object.freeze({
  type: "object",
  properties: {
    id: { type: "integer", description: "The todo's id." },
    text: { type: "string", description: "What is to be done." },
    done: { type: "boolean", description: "Whether it has been completed." },
  },
  required: ["id", "text", "done"],
  additionalProperties: false,
});

/** JSON Schema of a `{todos: [...]}` result. */
export const TODO_LIST_SCHEMA = Object.freeze({
  type: "object",
  properties: { todos: { type: "array", items: TODO_SCHEMA } },
  required: ["todos"],
  additionalProperties: false,
});

/**
 * Calls the API and returns the parsed JSON answer.
 * A 4xx/5xx answer becomes an Error carrying the server's own message ("No todo with id 7"),
 * which is what a tool should report to the agent.
 */
export async function api(method, path, { body, signal } = {}) {
  const init = { method, headers: { Accept: "application/json" }, signal };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  let answer = null;
  try {
    answer = await response.json();
  } catch {
    // Not JSON: fall through to the status check with no message of the server's own.
  }
  if (!response.ok) {
    throw new Error(answer?.error ?? `${method} ${path} failed with HTTP ${response.status}`);
  }
  return answer;
}

/**
 * Checks a todo id before it goes into a URL. Implementations need not validate arguments
 * against inputSchema (native Chromium does not), and a string id like "1/complete" would
 * otherwise reach a different endpoint.
 */
export function checkTodoId(id) {
  if (!Number.isInteger(id) || id < 1) {
    throw new Error(`id must be a positive integer, got ${JSON.stringify(id)}`);
  }
  return id;
}
