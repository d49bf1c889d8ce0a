// Registering the page's tools with WebMCP, and saying so on the page when that cannot happen.

/** Shows a notice at the top of the page (the element with id "notice"). */
export function showNotice(message) {
  const notice = document.getElementById("notice");
  notice.textContent = message;
  notice.hidden = false;
}

/**
 * Registers each tool with `document.modelContext.registerTool` (the current API; it returns
 * a Promise). Without WebMCP the page still works for people, so this only shows a notice.
 * A failed registration (a bad name, a duplicate) is shown too, instead of failing silently.
 */
export async function registerTools(tools) {
  if (!document.modelContext) {
    showNotice(
      "WebMCP is not available here (no document.modelContext), so this page offers no " +
        "tools to agents. Open it through webmcp-harness, or in Chromium started with " +
        "--enable-experimental-web-platform-features.",
    );
    return false;
  }
  const results = await Promise.allSettled(
    tools.map((tool) => Promise.resolve().then(() => document.modelContext.registerTool(tool))),
  );
  const failed = results
    .map((result, i) => [tools[i].name, result])
    .filter(([, result]) => result.status === "rejected");
  for (const [name, result] of failed) {
    console.error(`registerTool(${name}) failed:`, result.reason);
  }
  if (failed.length > 0) {
    showNotice(
      "Could not register " +
        failed.map(([name, result]) => `${name} (${result.reason?.message ?? result.reason})`).join(", "),
    );
    return false;
  }
  document.body.dataset.toolsRegistered = "true";
  return true;
}

/** Tells the person watching what the agent just did (the element with id "agent-status"). */
export function showAgentAction(message) {
  const status = document.getElementById("agent-status");
  if (status) {
    status.textContent = `Agent: ${message}`;
  }
}
