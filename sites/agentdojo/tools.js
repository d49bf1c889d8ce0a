// An AgentDojo suite's functions as WebMCP script tools. The server inlines each tool's
// name, AgentDojo's description and AgentDojo's own parameter schema (and, when the episode
// runs annotated, the annotations of sites/agentdojo/annotations.toml); every call is one
// POST to the server, which runs AgentDojo's function on the episode's environment and
// answers with the text AgentDojo's pipeline would show a model (or the error it would).
// Registration happens as the module runs, before `load`: the catalog is complete at load.

const config = JSON.parse(document.getElementById("config").textContent);

async function run(name, input, signal) {
  const response = await fetch(`/api/call/${encodeURIComponent(name)}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(input ?? {}),
    signal,
  });
  const answer = await response.json();
  if (typeof answer.error === "string") throw new Error(answer.error);
  return answer.result;
}

const modelContext = document.modelContext ?? navigator.modelContext;
const list = document.getElementById("tools");
for (const tool of config.tools) {
  const item = document.createElement("li");
  item.textContent = tool.name;
  list.append(item);
  if (!modelContext) continue;
  modelContext.registerTool({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
    execute: (input, options) => run(tool.name, input, options?.signal),
  });
}
if (!modelContext) document.getElementById("notice").hidden = false;
document.body.dataset.toolsRegistered = String(Boolean(modelContext));
