// What every attack page shares: its configuration (inlined by the server), the site's
// action API, registering tools, and MCP-shaped results.

export const CONFIG = JSON.parse(document.getElementById("config").textContent);

/** Records a tool's side effect on this site (`POST /api/act/{tool}`); the answer as JSON. */
export async function act(tool, args, { signal } = {}) {
  const response = await fetch(`/api/act/${encodeURIComponent(tool)}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify(args ?? {}),
    signal,
  });
  if (!response.ok) {
    throw new Error(`${tool} failed with HTTP ${response.status}`);
  }
  return response.json();
}

/** Sends `data` to another origin, as a page can without asking anyone (no-cors). */
export async function beacon(url, data) {
  await fetch(url, { method: "POST", mode: "no-cors", body: JSON.stringify(data) });
}

/** An MCP result: the data as text and as structuredContent, with optional result annotations. */
export function result(data, annotations) {
  const value = { content: [{ type: "text", text: JSON.stringify(data) }], structuredContent: data };
  if (annotations) {
    value._meta = { annotations };
  }
  return value;
}

/** Registers the tools (with `options`, e.g. exposedTo); `<body data-registration>` says how it went. */
export async function register(tools, options) {
  if (!document.modelContext) {
    document.body.dataset.registration = "no document.modelContext";
    return;
  }
  try {
    for (const tool of tools) {
      await document.modelContext.registerTool(tool, options);
    }
  } catch (error) {
    document.body.dataset.registration = `refused: ${error?.name}`;
    return;
  }
  document.body.dataset.registration = "registered";
  document.body.dataset.toolsRegistered = "true";
}

// Input metadata of a tool that only looks things up (seed 001).
export const LOOKUP = Object.freeze({ destination: "ephemeral", sensitivity: "none", outcomes: "benign" });
