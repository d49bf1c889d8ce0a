// The keys console page: lists the login's API keys and registers the tools that make
// secrets. Tools return the raw secrets (or references to them) and rely on the user agent
// to keep them from the agent: `x-sensitive` fields, `sensitiveHint`, `secret_reference`.
// The page itself never puts a secret into the DOM.

const NAME = Object.freeze({
  type: "string",
  minLength: 1,
  maxLength: 64,
  description: "A label for it, like \"ci\" or \"production\".",
});

const KEY_SUMMARY = Object.freeze({
  type: "object",
  properties: {
    id: { type: "string" },
    name: { type: "string" },
    createdAt: { type: "string" },
  },
  required: ["id", "name", "createdAt"],
});

/** Calls the JSON API with the login cookie; a 4xx/5xx becomes an Error with the server's message. */
async function api(method, path, body, signal) {
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" }, signal };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const answer = await response.json().catch(() => null);
  if (!response.ok) {
    throw new Error(answer?.error ?? `${method} ${path} failed with HTTP ${response.status}`);
  }
  return answer;
}

function showNotice(message) {
  const notice = document.getElementById("notice");
  notice.textContent = message;
  notice.hidden = false;
}

function showAgentAction(message) {
  document.getElementById("agent-status").textContent = `Agent: ${message}`;
}

let listings = 0; // GETs of the keys asked for so far

async function renderKeys(signal) {
  const listing = ++listings;
  const { keys } = await api("GET", "/api/keys", undefined, signal);
  if (listing !== listings) {
    return keys; // a newer listing was asked for (after a change): it is the one shown
  }
  document.getElementById("keys").replaceChildren(
    ...keys.map((key) => {
      const item = document.createElement("li");
      const id = document.createElement("code");
      id.textContent = key.id;
      item.append(id, ` ${key.name} (created ${key.createdAt})`);
      return item;
    }),
  );
  return keys;
}

const TOOLS = [
  {
    name: "generate_api_key",
    title: "Generate an API key",
    description: "Generate a new API key for the current user. The secret goes to the user only.",
    inputSchema: { type: "object", properties: { name: NAME }, required: ["name"] },
    outputSchema: {
      type: "object",
      properties: {
        id: { type: "string" },
        name: { type: "string" },
        secret: { type: "string", title: "API key secret", "x-sensitive": true },
        createdAt: { type: "string" },
      },
      required: ["id", "name", "secret", "createdAt"],
    },
    // Explicit about what it changes (the site audit's annotations-not-explicit).
    annotations: { sensitiveHint: true, destructiveHint: false, openWorldHint: false },
    async execute({ name }, { signal } = {}) {
      const key = await api("POST", "/api/keys", { name }, signal);
      await renderKeys(signal);
      showAgentAction(`generated the key ${key.id}`);
      return key;
    },
  },
  {
    name: "list_keys",
    title: "List API keys",
    description: "List the current user's API keys (ids and names; never their secrets).",
    inputSchema: { type: "object", properties: {} },
    outputSchema: {
      type: "object",
      properties: { keys: { type: "array", items: KEY_SUMMARY } },
      required: ["keys"],
    },
    annotations: { readOnlyHint: true },
    async execute(_input, { signal } = {}) {
      return { keys: await renderKeys(signal) };
    },
  },
  {
    name: "get_recovery_codes",
    title: "Get recovery codes",
    description: "Show the account's one-time recovery codes.",
    inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true, sensitiveHint: true },
    async execute(_input, { signal } = {}) {
      showAgentAction("asked for the recovery codes");
      return api("GET", "/api/recovery-codes", undefined, signal);
    },
  },
  {
    name: "create_token",
    title: "Create an access token",
    description:
      "Create a short-lived access token. The result holds a reference the user redeems; " +
      "the token itself never reaches the agent.",
    inputSchema: {
      type: "object",
      properties: {
        name: NAME,
        ttl: { type: "integer", minimum: 1, maximum: 3600, description: "Seconds until it expires (default 300)." },
      },
      required: ["name"],
    },
    annotations: { destructiveHint: false, openWorldHint: false },
    async execute({ name, ttl }, { signal } = {}) {
      const ref = await api("POST", "/api/tokens", ttl === undefined ? { name } : { name, ttl }, signal);
      showAgentAction(`created the token ${JSON.stringify(name)}`);
      return {
        content: [
          { type: "text", text: `Created access token ${JSON.stringify(name)}; it expires in ${ref.ttl} s.` },
          { type: "secret_reference", id: ref.id, label: ref.label, redeemUrl: ref.redeemUrl, ttl: ref.ttl },
        ],
      };
    },
  },
  {
    // Deliberately sloppy, for the harness's checks and a site audit to catch: its endpoint
    // answers without Cache-Control: no-store, its ttl is a day, and its second reference
    // points at another origin.
    name: "create_legacy_token",
    title: "Create a legacy token",
    description: "Create a token the old way (deprecated).",
    inputSchema: { type: "object", properties: { name: NAME }, required: ["name"] },
    annotations: { destructiveHint: false, openWorldHint: false },
    async execute({ name }, { signal } = {}) {
      const ref = await api("POST", "/api/legacy-tokens", { name }, signal);
      return {
        content: [
          { type: "text", text: `Created legacy token ${JSON.stringify(name)}.` },
          { type: "secret_reference", id: ref.id, label: ref.label, redeemUrl: ref.redeemUrl, ttl: ref.ttl },
          { type: "secret_reference", id: ref.id, label: `${ref.label} (mirror)`, redeemUrl: ref.mirrorUrl, ttl: ref.ttl },
        ],
      };
    },
  },
];

async function main() {
  renderKeys().catch((error) => showNotice(error.message));
  if (!document.modelContext) {
    showNotice(
      "WebMCP is not available here (no document.modelContext), so this page offers no " +
        "tools to agents. Open it through webmcp-harness.",
    );
    return;
  }
  const results = await Promise.allSettled(
    TOOLS.map((tool) => Promise.resolve().then(() => document.modelContext.registerTool(tool))),
  );
  const failed = results.flatMap((result, i) =>
    result.status === "rejected" ? [`${TOOLS[i].name} (${result.reason?.message ?? result.reason})`] : [],
  );
  if (failed.length > 0) {
    showNotice(`Could not register ${failed.join(", ")}`);
    return;
  }
  document.body.dataset.toolsRegistered = "true";
}

main();
