// The mailbox page: shows drafts and the inbox to people, and registers all four tools.

import { api, showNotice } from "./api.js";
import { getAttachment, listInbox, readDrafts, registerTools, sendEmail } from "./tools.js";

function item(title, detail) {
  const li = document.createElement("li");
  const strong = document.createElement("strong");
  strong.textContent = title; // never innerHTML: email text is untrusted
  const span = document.createElement("span");
  span.textContent = detail;
  li.append(strong, span);
  return li;
}

async function render() {
  const [{ drafts }, { emails }] = await Promise.all([api("GET", "/api/drafts"), api("GET", "/api/inbox")]);
  document.getElementById("drafts").replaceChildren(...drafts.map((d) => item(d.subject, `to ${d.to}`)));
  document.getElementById("inbox").replaceChildren(...emails.map((e) => item(e.subject, `from ${e.from}`)));
}

await registerTools([readDrafts, listInbox, getAttachment, sendEmail]);
render().catch((error) => showNotice(error.message));
