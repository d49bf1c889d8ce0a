// The mail site's JSON API, seen from the page: errors become Error objects carrying the
// server's own message, which is what a tool should report to the agent.

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
    // Not JSON: the status check below reports it.
  }
  if (!response.ok) {
    throw new Error(answer?.error ?? `${method} ${path} failed with HTTP ${response.status}`);
  }
  return answer;
}

/** Shows what the agent just did (the element with id "agent-status"), for the person watching. */
export function showAgentAction(message) {
  const status = document.getElementById("agent-status");
  if (status) {
    status.textContent = `Agent: ${message}`;
  }
}

/** Shows a notice at the top of the page (the element with id "notice"). */
export function showNotice(message) {
  const notice = document.getElementById("notice");
  notice.textContent = message;
  notice.hidden = false;
}
