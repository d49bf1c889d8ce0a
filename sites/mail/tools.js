// The mail site's WebMCP tools, labelled with the Trust and Sensitivity Annotations SEP's
// metadata (seed 001): where input goes, where output comes from, how sensitive both are.
// Results carry `_meta.annotations` the server computed; `get_attachment` has a
// `resolve(input)` (the SEP's tools/resolve) that asks the server to classify the path first.

import { api, showAgentAction, showNotice } from "./api.js";

// A tool that only reads: its input is used for the lookup and kept nowhere.
const LOOKUP_INPUT = Object.freeze({ destination: "ephemeral", sensitivity: "none", outcomes: "benign" });

/** An MCP result: the data as text and as structuredContent, with the server's annotations. */
function annotated(data, annotations, text = JSON.stringify(data)) {
  return { content: [{ type: "text", text }], structuredContent: data, _meta: { annotations } };
}

export const readDrafts = {
  name: "read_drafts",
  title: "Read drafts",
  description: "Read the user's email drafts.",
  inputSchema: { type: "object", additionalProperties: false },
  annotations: {
    readOnlyHint: true,
    inputMetadata: LOOKUP_INPUT,
    returnMetadata: { source: "user", sensitivity: "pii" },
  },
  async execute(input, options) {
    const { drafts } = await api("GET", "/api/drafts", { signal: options?.signal });
    showAgentAction(`read ${drafts.length} drafts`);
    const attribution = drafts.map((draft) => `${location.origin}/drafts/${draft.id}`);
    return annotated({ drafts }, { attribution, returnMetadata: { source: "user", sensitivity: "pii" } });
  },
};

export const listInbox = {
  name: "list_inbox",
  title: "List inbox",
  description: "List recent emails in the user's inbox (or its junk folder).",
  inputSchema: {
    type: "object",
    properties: {
      limit: { type: "integer", minimum: 1, description: "At most this many emails." },
      folder: { type: "string", enum: ["inbox", "junk"], default: "inbox" },
    },
    required: [],
    additionalProperties: false,
  },
  annotations: {
    readOnlyHint: true,
    inputMetadata: LOOKUP_INPUT,
    returnMetadata: { source: "untrustedPublic", sensitivity: ["pii", "user"] },
  },
  async execute({ limit = 50, folder = "inbox" } = {}, options) {
    const query = `folder=${encodeURIComponent(folder)}&limit=${encodeURIComponent(limit)}`;
    const { emails, annotations } = await api("GET", `/api/inbox?${query}`, { signal: options?.signal });
    showAgentAction(`listed ${emails.length} emails in ${folder}`);
    return annotated({ emails }, annotations);
  },
};

export const getAttachment = {
  name: "get_attachment",
  title: "Get attachment",
  description: "Read a file from the user's attachment store, such as hr/salaries.xlsx.",
  inputSchema: {
    type: "object",
    properties: { path: { type: "string", minLength: 1, description: "The file's path." } },
    required: ["path"],
    additionalProperties: false,
  },
  annotations: {
    readOnlyHint: true,
    inputMetadata: LOOKUP_INPUT,
    returnMetadata: { source: "internal", sensitivity: ["none", "pii", "financial"] },
  },
  // The SEP's tools/resolve: the annotations for this very path, before the call runs.
  async resolve({ path }) {
    const { annotations } = await api("GET", `/api/attachments/classify?path=${encodeURIComponent(path)}`);
    return annotations;
  },
  async execute({ path }, options) {
    const query = `path=${encodeURIComponent(path)}`;
    const { attachment, annotations } = await api("GET", `/api/attachments?${query}`, { signal: options?.signal });
    showAgentAction(`opened ${attachment.path}`);
    return annotated({ attachment }, annotations, attachment.content);
  },
};

export const sendEmail = {
  name: "send_email",
  title: "Send email",
  description: "Send an email on behalf of the user.",
  inputSchema: {
    type: "object",
    properties: {
      // The SEP's example says format: "email"; format is outside the WebMCP subset that
      // registerTool accepts (the site audit's input-schema-outside-subset), so a pattern.
      to: { type: "string", pattern: "^[^@\\s]+@[^@\\s]+$", description: "The recipient's address." },
      subject: { type: "string" },
      body: { type: "string" },
      attachments: { type: "array", items: { type: "string" }, description: "Attachment paths." },
    },
    required: ["to", "subject", "body"],
    additionalProperties: false,
  },
  annotations: {
    inputMetadata: { destination: "public", sensitivity: ["pii", "user"], outcomes: "irreversible" },
    returnMetadata: { source: "system", sensitivity: "none" },
  },
  async execute({ to, subject, body, attachments = [] }, options) {
    // The request annotations the user agent handed over (seed 001: servers MUST respect
    // them); the server records them with the email.
    const requestAnnotations = options?._meta?.annotations ?? null;
    const { sent } = await api("POST", "/api/send", {
      body: { to, subject, body, attachments, requestAnnotations },
      signal: options?.signal,
    });
    showAgentAction(`sent "${subject}" to ${to}`);
    return { sent: { id: sent.id, to: sent.to, subject: sent.subject } };
  },
};

/** Registers the tools; without WebMCP the page still works for people and says so. */
export async function registerTools(tools) {
  if (!document.modelContext) {
    showNotice("WebMCP is not available here (no document.modelContext); this page offers no tools.");
    return;
  }
  const results = await Promise.allSettled(tools.map((tool) => document.modelContext.registerTool(tool)));
  const failed = results.filter((result) => result.status === "rejected");
  if (failed.length > 0) {
    showNotice(`Could not register ${failed.length} tool(s): ${failed[0].reason?.message ?? failed[0].reason}`);
    return;
  }
  document.body.dataset.toolsRegistered = "true";
}
