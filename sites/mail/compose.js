// The compose page: a form for people, and the send_email and read_drafts tools for agents.

import { api, showNotice } from "./api.js";
import { readDrafts, registerTools, sendEmail } from "./tools.js";

document.getElementById("compose-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.target.elements;
  const body = { to: form.to.value, subject: form.subject.value, body: form.body.value };
  api("POST", "/api/send", { body })
    .then(({ sent }) => showNotice(`Sent to ${sent.to}.`))
    .catch((error) => showNotice(error.message));
});

await registerTools([sendEmail, readDrafts]);
