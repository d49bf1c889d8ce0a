// Forms marked data-respond answer an agent with JSON instead of a new page: when the
// submission is agent-invoked (SubmitEvent.agentInvoked), the page fetches the same action
// with `Accept: application/json` and hands the JSON to the agent with respondWith().
// People (and agents where the browser has no declarative WebMCP) get the normal submission.
"use strict";

function jsonSubmission(form, submitter) {
  const data = new FormData(form, submitter);
  const method = (form.getAttribute("method") || "get").toUpperCase();
  const headers = { Accept: "application/json" };
  if (method === "GET") {
    const url = new URL(form.action);
    url.search = new URLSearchParams(data).toString();
    return fetch(url, { headers });
  }
  return fetch(form.action, { method, body: new URLSearchParams(data), headers });
}

document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-respond") || !event.agentInvoked) {
    return;
  }
  event.preventDefault();
  event.respondWith(
    // The server's JSON as is, errors included ({"error": "…"}): the agent reads why.
    jsonSubmission(form, event.submitter).then((response) => response.json()),
  );
});
