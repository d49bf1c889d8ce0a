// `document.modelContext`: the current WebMCP spec (webmachinelearning/webmcp, index.bs),
// written to match Chromium's native implementation, which is the reference. Names follow
// the spec's algorithms ("notify documents of a tool change", "tool execute steps", …).
//
// What Chromium 156 does natively (--enable-experimental-web-platform-features), probed:
// - registerTool() never throws; every failure is a rejection. Order: Web IDL conversion of
//   the tool (members read in lexicographic order: annotations, description, execute,
//   inputSchema, name, title → TypeError), then of the options (exposedTo, signal); then
//   "Duplicate tool name", "Invalid tool name", "Description is required" (InvalidStateError),
//   inputSchema serialization (TypeError; cycles, BigInt, toJSON → undefined), an aborted
//   signal (its reason), then exposedTo origins (SecurityError). Resolves to undefined after
//   `toolchange` has fired. Aborting the signal later unregisters and fires `toolchange`.
// - getTools() resolves to plain objects sorted by name (code units): annotations (only when
//   the tool gave some; the four spec hints, defaulted to false), description, inputSchema
//   (a fresh parse; absent without one), name, origin, title ("" by default), window. It
//   includes same-origin frames' tools, and cross-origin frames' tools when they are in
//   `fromOrigins` and the tool was registered with that origin in `exposedTo`.
// - executeTool(registeredTool, input, {signal}) accepts any dictionary with description,
//   name, origin and window; runs `execute` in a later task, fires `toolactivated` after
//   `execute` was called, and resolves to a string: a string result as is ("" becomes
//   "Operation succeeded"), objects as JSON ("undefined" when JSON has no text for them),
//   other primitives as String(value) (NaN → "NaN"). A thrown or rejected execute, an
//   unserializable result, a missing tool or a wrong origin reject with UnknownError.
//   Aborting the signal rejects at once with its reason; the execution's own signal then
//   aborts (reason: AbortError) and `toolcancel` fires — even if execute had not started yet.
//   Unregistering a tool does not cancel a running execution.
// - toolchange/toolactivated/toolcancel are trusted, non-bubbling events; the latter two are
//   ToolActivatedEvent/ToolCancelEvent with `toolName`. Frames: every document of the tab
//   gets `toolchange` for tools of its own origin or exposed to it. A cross-origin iframe
//   without allow="tools" gets NotAllowedError from all three methods.
// - No navigator.modelContext, unregisterTool, provideContext, clearContext (legacy.js).
//
// Where the polyfill cannot do the same (see the README's differences table): its events are
// untrusted (isTrusted false); other frames are reached with postMessage, so their tools and
// `toolchange` arrive a task or two later; permission policy is approximated from the
// container's `allow` and `sandbox` attributes (the parent frame answers for its child, from
// its own answer: the policy is inherited through the ancestors). That one answer is what
// registerTool(), getTools(), executeTool(), the forms (declarative.js) and the seed
// dialect's report (declarative_seed.js) follow.

// -------------------------------------------------------------------------------------------
// The webmcp task source: one private MessageChannel, so tasks queue like native ones do
// (after the current task and its microtasks) without the clamping of setTimeout.
// -------------------------------------------------------------------------------------------

const webmcpTasks = new SafeMap();
let webmcpTasksQueued = 0;
let webmcpTasksRun = 0;
const webmcpTaskChannel = new MessageChannelCtor();
const webmcpTaskPort = webmcpTaskChannel.port2;
MessagePortPrototypeSetOnmessage(webmcpTaskChannel.port1, () => {
  const steps = webmcpTasks.get(webmcpTasksRun);
  webmcpTasks.delete(webmcpTasksRun++);
  steps();
});

function queueGlobalTask(steps) {
  webmcpTasks.set(webmcpTasksQueued++, steps);
  MessagePortPrototypePostMessage(webmcpTaskPort, null);
}

// -------------------------------------------------------------------------------------------
// The model context (spec §Supporting concepts), and what the user agent side listens to.
// -------------------------------------------------------------------------------------------

const modelContextToolMap = new SafeMap(); // tool name → tool definition
const localPendingToolExecutions = new SafeMap(); // uuid → {controller, toolName, callId}
// This document's share of the traversable's "pending tool executions map": executions it
// started with executeTool(), keyed by uuid.
const pendingToolExecutions = new SafeMap();

// channel.js fills these in; model_context.js only reports, it never talks to the harness.
const harnessHooks = {
  __proto__: null,
  toolsChanged() {},
  // Something a listing would say may have changed, without a `tools` message of its own
  // (native mode: Chromium registers forms itself; the harness re-reads after a call).
  stateChanged() {},
  toolEvent(type, toolName, callId) {},
};

// Which page-visible object the current call came through (legacy.js records the alias).
let modelContextAccessedThrough = "document.modelContext";

const MESSAGES = ObjectFreeze({
  __proto__: null,
  duplicate: "Duplicate tool name",
  invalidName: "Invalid tool name",
  noDescription: "Description is required",
  exposedTo: "Only secure origins are allowed in the exposedTo list.",
  fromOrigins: "Only secure origins are allowed in the fromOrigins list.",
  notAllowed: 'Access to the feature "tools" is disallowed by permissions policy.',
  notFullyActive: "The document is not active.", // Chromium's words for a detached document
  notActive: "The document is not active.", // and for one without a browsing context
  unknown: "The operation failed for an unknown transient reason (e.g. out of memory).",
  toolFailed:
    "Tool was executed but the invocation failed. For example, the script function threw an error",
  badInput: "Failed to parse input arguments",
  badOrigin: "The provided origin is invalid.",
  opaqueOrigin: "Cannot execute tools that live in a document with an opaque origin.",
  documentDomain: "document.modelContext cannot be used when document.domain is enabled.",
  emptyResult: "Operation succeeded",
});

function failedToExecute(operation, detail) {
  return new TypeErrorCtor(`Failed to execute '${operation}' on 'ModelContext': ${detail}`);
}

function domException(message, name) {
  return new DOMExceptionCtor(message, name);
}

function errorMessageOf(error) {
  const message = ownData(error, "message");
  if (typeof message === "string") return message;
  try {
    return `${error}`;
  } catch {
    return "";
  }
}

function isFullyActive() {
  return DocumentPrototypeGetDefaultView(ownDocument) !== null;
}

// Chromium's first check of all three methods, once their arguments are converted: a document
// whose document.domain is enabled gets no WebMCP (nor do its forms become tools).
function refuseWhereDocumentDomainIsEnabled() {
  if (documentDomainEnabled) throw domException(MESSAGES.documentDomain, "SecurityError");
}

// -------------------------------------------------------------------------------------------
// Web IDL conversions, in the order Chromium's bindings read the members.
// -------------------------------------------------------------------------------------------

function idlDOMString(value) {
  return `${value}`; // ToString; throws a TypeError for Symbols, as Web IDL does
}

function idlUSVString(value) {
  return StringPrototypeToWellFormed(`${value}`);
}

// A dictionary's string member: a Symbol is refused in Blink's words for the member; an
// exception the page's own toString() throws is the page's, rethrown as it is.
function stringMember(value, operation, member, dictionary, convert = idlDOMString) {
  if (typeof value === "symbol") {
    throw readFailure(operation, member, dictionary, "Cannot convert a Symbol value to a string");
  }
  return convert(value);
}

function readFailure(operation, member, dictionary, detail) {
  return failedToExecute(
    operation,
    `Failed to read the '${member}' property from '${dictionary}': ${detail}`,
  );
}

function requiredMember(operation, member, dictionary) {
  return readFailure(operation, member, dictionary, "Required member is undefined.");
}

// ToolAnnotations' members, in the order Web IDL reads them: each once, as a boolean.
const TOOL_ANNOTATIONS_MEMBERS = ObjectFreeze([
  "consequentialHint",
  "debugging",
  "readOnlyHint",
  "untrustedContentHint",
]);
// The members the seeds add to ToolAnnotations, for the harness only (MCP's hints, seed 004's
// spellings, seed 000's sensitiveHint, seed 001's trust fields): each read once, after every
// member Chromium reads, and passed on as JSON. Chromium reads none of them.
const SEED_ANNOTATIONS_MEMBERS = ObjectFreeze([
  "attribution",
  "destructive",
  "destructiveHint",
  "idempotent",
  "idempotentHint",
  "inputMetadata",
  "maliciousActivityHint",
  "openWorld",
  "openWorldHint",
  "readOnly",
  "returnMetadata",
  "sensitiveHint",
  "title",
]);

// ToolAnnotations, converted once. `said` (null, or a null-prototype object) gets what the
// page gave for each member it gave: the very value Chromium registers (a string as written,
// which the catalog reads as Web IDL does and warns about), so the browser's registry, the
// page's getTools() and the harness's catalog hold one set of annotations.
function convertToolAnnotations(value, operation, dictionary, said = null) {
  if (value !== null && !isObject(value)) {
    throw readFailure(
      operation,
      "annotations",
      dictionary,
      "The provided value is not of type 'ToolAnnotations'.",
    );
  }
  const converted = { __proto__: null };
  for (let i = 0; i < TOOL_ANNOTATIONS_MEMBERS.length; i++) {
    const member = TOOL_ANNOTATIONS_MEMBERS[i];
    const given = value === null ? undefined : value[member];
    converted[member] = !!given;
    if (said !== null && given !== undefined) {
      said[member] = typeof given === "string" ? given : !!given;
    }
  }
  return converted;
}

// The seeds' members of a tool's annotations, into `said` as JSON texts. A member whose value
// JSON cannot hold, or whose getter throws, is left out: Chromium never reads it, so it must
// not fail the registration.
function readSeedAnnotations(value, said) {
  for (let i = 0; i < SEED_ANNOTATIONS_MEMBERS.length; i++) {
    const member = SEED_ANNOTATIONS_MEMBERS[i];
    try {
      const given = value[member];
      const text = given === undefined ? undefined : JSONStringify(given);
      if (typeof text === "string") said[member] = text;
    } catch {
      // The page's own getter or toJSON threw: the member is not there.
    }
  }
}

// What `said` holds as one JSON object text (the spec's members as values, the seeds' as the
// JSON texts readSeedAnnotations made).
function annotationsText(said) {
  const parts = safeList();
  for (let i = 0; i < TOOL_ANNOTATIONS_MEMBERS.length; i++) {
    const member = TOOL_ANNOTATIONS_MEMBERS[i];
    if (said[member] !== undefined) {
      ArrayPrototypePush(parts, JSONStringify(member) + ":" + JSONStringify(said[member]));
    }
  }
  for (let i = 0; i < SEED_ANNOTATIONS_MEMBERS.length; i++) {
    const member = SEED_ANNOTATIONS_MEMBERS[i];
    if (said[member] !== undefined) ArrayPrototypePush(parts, JSONStringify(member) + ":" + said[member]);
  }
  return "{" + ArrayPrototypeJoin(parts, ",") + "}";
}

// ModelContextTool, plus what the seeds add (title is the spec's; outputSchema, resolve and
// the seeds' annotation members are read after the spec's members, for the harness only).
// `annotationsJSON` is the harness's view of the annotations, from this one conversion.
function convertModelContextTool(value, operation) {
  if (!isObject(value)) {
    throw failedToExecute(operation, "The provided value is not of type 'ModelContextTool'.");
  }
  const D = "ModelContextTool";
  const tool = { __proto__: null, annotations: null, annotationsJSON: "{}" };
  const annotations = value.annotations;
  const said = { __proto__: null };
  if (annotations !== undefined) tool.annotations = convertToolAnnotations(annotations, operation, D, said);
  const description = value.description;
  if (description === undefined) throw requiredMember(operation, "description", D);
  tool.description = stringMember(description, operation, "description", D);
  const execute = value.execute;
  if (execute === undefined) throw requiredMember(operation, "execute", D);
  if (typeof execute !== "function") {
    throw readFailure(operation, "execute", D, "The given value is not a function.");
  }
  tool.execute = execute;
  const inputSchema = value.inputSchema;
  if (inputSchema !== undefined && !isObject(inputSchema)) {
    throw readFailure(operation, "inputSchema", D, "Failed to convert value to 'object'.");
  }
  tool.inputSchema = inputSchema;
  const name = value.name;
  if (name === undefined) throw requiredMember(operation, "name", D);
  tool.name = stringMember(name, operation, "name", D);
  const title = value.title;
  tool.title = title === undefined ? null : stringMember(title, operation, "title", D, idlUSVString);
  const outputSchema = value.outputSchema;
  tool.outputSchema = isObject(outputSchema) ? outputSchema : undefined;
  const resolve = value.resolve;
  tool.resolve = typeof resolve === "function" ? resolve : null;
  if (isObject(annotations)) readSeedAnnotations(annotations, said);
  tool.annotationsJSON = annotationsText(said);
  return tool;
}

function toSequence(value, convertItem, failure) {
  if (!isObject(value)) throw failure();
  const method = value[SymbolIterator];
  if (typeof method !== "function") throw failure();
  const iterator = ReflectApply(method, value, []);
  if (!isObject(iterator)) throw failure();
  const next = iterator.next;
  const items = safeList();
  for (;;) {
    const step = ReflectApply(next, iterator, []);
    if (!isObject(step)) throw failure();
    if (step.done) return items;
    ArrayPrototypePush(items, convertItem(step.value));
  }
}

function isAbortSignal(value) {
  try {
    AbortSignalPrototypeGetAborted(value);
    return true;
  } catch {
    return false;
  }
}

function convertSignal(value, operation, dictionary) {
  if (value === undefined) return undefined;
  if (!isAbortSignal(value)) {
    throw readFailure(operation, "signal", dictionary, "Failed to convert value to 'AbortSignal'.");
  }
  return value;
}

function optionsObject(value, operation, dictionary) {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) {
    throw failedToExecute(operation, `The provided value is not of type '${dictionary}'.`);
  }
  return value;
}

function convertRegisterToolOptions(value, operation) {
  const D = "ModelContextRegisterToolOptions";
  const source = optionsObject(value, operation, D);
  const options = { __proto__: null, exposedTo: undefined, signal: undefined };
  const exposedTo = source.exposedTo;
  if (exposedTo !== undefined) {
    options.exposedTo = toSequence(exposedTo, idlUSVString, () =>
      readFailure(operation, "exposedTo", D, "The provided value cannot be converted to a sequence."),
    );
  }
  options.signal = convertSignal(source.signal, operation, D);
  return options;
}

function convertGetToolsOptions(value) {
  const D = "ModelContextGetToolOptions";
  const source = optionsObject(value, "getTools", D);
  const fromOrigins = source.fromOrigins;
  if (fromOrigins === undefined) return safeList();
  return toSequence(fromOrigins, idlUSVString, () =>
    readFailure("getTools", "fromOrigins", D, "The provided value cannot be converted to a sequence."),
  );
}

function convertExecuteToolOptions(value) {
  const source = optionsObject(value, "executeTool", "ExecuteToolOptions");
  return convertSignal(source.signal, "executeTool", "ExecuteToolOptions");
}

function isWindowProxy(value) {
  try {
    return isObject(value) && WindowGetTop(value) !== undefined;
  } catch {
    return false;
  }
}

function convertRegisteredTool(value) {
  const op = "executeTool";
  const D = "RegisteredTool";
  if (!isObject(value)) throw failedToExecute(op, "The provided value is not of type 'RegisteredTool'.");
  const annotations = value.annotations;
  if (annotations !== undefined) convertToolAnnotations(annotations, op, D);
  const description = value.description;
  if (description === undefined) throw requiredMember(op, "description", D);
  stringMember(description, op, "description", D);
  const inputSchema = value.inputSchema;
  if (inputSchema !== undefined && !isObject(inputSchema)) {
    throw readFailure(op, "inputSchema", D, "Failed to convert value to 'object'.");
  }
  const name = value.name;
  if (name === undefined) throw requiredMember(op, "name", D);
  const origin = value.origin;
  if (origin === undefined) throw requiredMember(op, "origin", D);
  const title = value.title;
  if (title !== undefined) stringMember(title, op, "title", D);
  const window = value.window;
  if (window === undefined) throw requiredMember(op, "window", D);
  if (!isWindowProxy(window)) throw readFailure(op, "window", D, "Failed to convert value to 'Window'.");
  return {
    __proto__: null,
    name: stringMember(name, op, "name", D),
    origin: stringMember(origin, op, "origin", D, idlUSVString),
    window,
  };
}

// -------------------------------------------------------------------------------------------
// Names and origins
// -------------------------------------------------------------------------------------------

// ^[A-Za-z0-9_.-]{1,128}$, checked by code unit (a RegExp would consult page-patchable
// RegExp.prototype methods).
function isValidToolName(name) {
  if (name.length < 1 || name.length > 128) return false;
  for (let i = 0; i < name.length; i++) {
    const c = StringPrototypeCharCodeAt(name, i);
    const ok =
      (c >= 0x30 && c <= 0x39) ||
      (c >= 0x41 && c <= 0x5a) ||
      (c >= 0x61 && c <= 0x7a) ||
      c === 0x5f ||
      c === 0x2d ||
      c === 0x2e;
    if (!ok) return false;
  }
  return true;
}

function isLoopbackIPv4(host) {
  if (!StringPrototypeStartsWith(host, "127.")) return false;
  for (let i = 0; i < host.length; i++) {
    const c = StringPrototypeCharCodeAt(host, i);
    if (!((c >= 0x30 && c <= 0x39) || c === 0x2e)) return false;
  }
  return true;
}

function parseURL(string) {
  try {
    return new URLCtor(string);
  } catch {
    return null;
  }
}

function parseOrigin(string) {
  const url = parseURL(string);
  return url === null ? null : URLPrototypeGetOrigin(url);
}

// The serialized origin of `string` when it is "potentially trustworthy" (Secure Contexts
// §3.1), or null.
function parseTrustworthyOrigin(string) {
  const url = parseURL(string);
  if (url === null) return null;
  const origin = URLPrototypeGetOrigin(url);
  if (origin === "null") return null;
  const scheme = URLPrototypeGetProtocol(url);
  if (scheme === "https:" || scheme === "wss:") return origin;
  const host = StringPrototypeToLowerCase(URLPrototypeGetHostname(url));
  if (host === "[::1]" || isLoopbackIPv4(host)) return origin;
  if (host === "localhost" || StringPrototypeEndsWith(host, ".localhost")) return origin;
  return null;
}

function parseOriginList(strings, message) {
  const origins = safeList();
  for (let i = 0; i < strings.length; i++) {
    const origin = parseTrustworthyOrigin(strings[i]);
    if (origin === null) throw domException(message, "SecurityError");
    ArrayPrototypePush(origins, origin);
  }
  return origins;
}

function listIncludes(list, value) {
  for (let i = 0; i < list.length; i++) if (list[i] === value) return true;
  return false;
}

// "tool is exposed to an origin"
function toolIsExposedToOrigin(toolOwnerOrigin, exposedOrigins, accessingOrigin) {
  return toolOwnerOrigin === accessingOrigin || listIncludes(exposedOrigins, accessingOrigin);
}

// -------------------------------------------------------------------------------------------
// Permissions policy: is this document "allowed to use" the "tools" feature? The top-level
// document is; a frame asks its parent, which answers from its own answer and the frame's
// container's `allow` attribute (default allowlist 'self'). One decision per document: every
// kind of tool it could offer waits for it (afterToolsPolicy, whenToolsAllowed).
// -------------------------------------------------------------------------------------------

let toolsPolicy = WindowGetTop(ownWindow) === ownWindow ? "allowed" : "pending";
const toolsPolicyWaiters = safeList();
const POLICY_DEADLINE_MS = 3000;

function settleToolsPolicy(allowed) {
  if (toolsPolicy !== "pending") return;
  toolsPolicy = allowed ? "allowed" : "disallowed";
  for (let i = 0; i < toolsPolicyWaiters.length; i++) toolsPolicyWaiters[i]();
  toolsPolicyWaiters.length = 0;
}

function whenToolsPolicyKnown(steps) {
  if (toolsPolicy === "pending") ArrayPrototypePush(toolsPolicyWaiters, steps);
  else steps();
}

// Run `steps` once this document may use the feature (synchronously when it already may);
// never in a document the policy refuses it. For what has no caller to reject: forms.
function whenToolsAllowed(steps) {
  whenToolsPolicyKnown(() => {
    if (toolsPolicy === "allowed") steps();
  });
}

// Whether the parent has not answered yet: what the document offers may still change.
function toolsPolicyPending() {
  return toolsPolicy === "pending";
}

// Run `steps` (which may throw) once the policy is known; synchronously when it already is.
function afterToolsPolicy(steps) {
  if (toolsPolicy === "allowed") return steps();
  if (toolsPolicy === "disallowed") throw domException(MESSAGES.notAllowed, "NotAllowedError");
  return new PromiseCtor((resolve, reject) => {
    whenToolsPolicyKnown(() => {
      try {
        resolve(afterToolsPolicy(steps));
      } catch (error) {
        reject(error);
      }
    });
  });
}

// The allowlist of the `tools` directive in an iframe's `allow` attribute, or null.
function toolsAllowlist(allow) {
  if (allow === null) return null;
  let rest = allow;
  while (rest.length > 0) {
    const end = StringPrototypeIndexOf(rest, ";");
    const directive = StringPrototypeTrim(end < 0 ? rest : StringPrototypeSlice(rest, 0, end));
    rest = end < 0 ? "" : StringPrototypeSlice(rest, end + 1);
    const tokens = splitOnWhitespace(directive);
    if (tokens.length > 0 && StringPrototypeToLowerCase(tokens[0]) === "tools") {
      const allowlist = safeList();
      for (let i = 1; i < tokens.length; i++) ArrayPrototypePush(allowlist, tokens[i]);
      return allowlist;
    }
  }
  return null;
}

function splitOnWhitespace(text) {
  const tokens = safeList();
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? StringPrototypeCharCodeAt(text, i) : 0x20;
    const space = c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d;
    if (space && start >= 0) {
      ArrayPrototypePush(tokens, StringPrototypeSlice(text, start, i));
      start = -1;
    } else if (!space && start < 0) {
      start = i;
    }
  }
  return tokens;
}

// Two origins are the same when they are equal and not opaque: an opaque origin is the same
// only as itself, and two documents' "null" need not be one origin.
function isSameOrigin(a, b) {
  return a !== "null" && a === b;
}

// Whether the iframe's `sandbox` attribute gives its documents an opaque origin (it lacks
// `allow-same-origin`).
function sandboxesOrigin(container) {
  const sandbox = ElementPrototypeGetAttribute(container, "sandbox");
  if (sandbox === null) return false;
  const tokens = splitOnWhitespace(sandbox);
  for (let i = 0; i < tokens.length; i++) {
    if (StringPrototypeToLowerCase(tokens[i]) === "allow-same-origin") return false;
  }
  return true;
}

// The iframe's declared origin (Permissions Policy): what `'src'` in its `allow` names — an
// opaque origin for a sandboxed iframe, else its `src` URL's origin, or this document's for a
// srcdoc or a missing src (Chromium's "origin for permissions policy"). A frame that later
// navigates itself to another origin does not take the delegation along (Chromium neither).
function declaredOrigin(container) {
  if (sandboxesOrigin(container)) return "null";
  if (ElementPrototypeGetAttribute(container, "srcdoc") !== null) return ownOrigin;
  const src = ElementPrototypeGetAttribute(container, "src");
  if (src === null || src === "") return ownOrigin;
  try {
    return URLPrototypeGetOrigin(new URLCtor(src, NodePrototypeGetBaseURI(container)));
  } catch {
    return "null";
  }
}

// Whether the container's policy allows the feature to its document of `childOrigin` ("null":
// an opaque origin, a sandboxed document's). As in Chromium, `*` and the `'src'` of a
// sandboxed iframe match opaque origins; `'self'` (the default) and named origins do not.
function containerAllowsTools(container, childOrigin) {
  const allowlist = toolsAllowlist(ElementPrototypeGetAttribute(container, "allow"));
  if (allowlist === null) return isSameOrigin(childOrigin, ownOrigin);
  const fromSrc = childOrigin === declaredOrigin(container);
  if (allowlist.length === 0) return fromSrc; // 'src'
  for (let i = 0; i < allowlist.length; i++) {
    const token = StringPrototypeToLowerCase(allowlist[i]);
    if (token === "*") return true;
    if (token === "'src'" && fromSrc) return true;
    if (token === "'self'" && isSameOrigin(childOrigin, ownOrigin)) return true;
    if (childOrigin !== "null" && parseOrigin(allowlist[i]) === childOrigin) return true;
  }
  return false;
}

function containerOf(childWindow) {
  const frames = DocumentPrototypeQuerySelectorAll(ownDocument, "iframe");
  const count = NodeListPrototypeGetLength(frames);
  for (let i = 0; i < count; i++) {
    if (HTMLIFrameElementPrototypeGetContentWindow(frames[i]) === childWindow) return frames[i];
  }
  return null;
}

// -------------------------------------------------------------------------------------------
// Other frames of the tab. Documents are reached with postMessage, whose `origin` and `source`
// the browser vouches for; our listener runs first and hides the traffic from the page.
// -------------------------------------------------------------------------------------------

const FRAME_PROTOCOL = "webmcp-harness/1";
const GET_TOOLS_DEADLINE_MS = 500;
const HANDSHAKE_DEADLINE_MS = 1000;
const frameRequests = new SafeMap(); // request id → handler(kind, data, source, origin)
const executionsForOtherFrames = new SafeMap(); // caller's id → {source, origin, uuid}
// Calls cancelled before they started here (they wait for the permissions policy).
const cancelledBeforeStart = new SafeSet();
const MAX_EARLY_CANCELS = 64;
// While a caller waits for another frame's tool, it checks this often that the frame is
// still there: a removed frame sends nothing (Chromium rejects such a call at once).
const FRAME_WATCH_MS = 50;

function postToFrame(target, message, targetOrigin) {
  if (targetOrigin === "null") return;
  try {
    WindowPostMessage(target, message, targetOrigin);
  } catch {
    // The frame went away, or the origin cannot be named.
  }
}

function frameMessage(kind, fields) {
  const message = { __proto__: null, protocol: FRAME_PROTOCOL, kind };
  if (fields !== undefined) {
    const keys = ObjectKeys(fields);
    for (let i = 0; i < keys.length; i++) createDataProperty(message, keys[i], fields[keys[i]]);
  }
  return message;
}

function isInThisTab(candidate) {
  try {
    return candidate !== null && WindowGetTop(candidate) === WindowGetTop(ownWindow);
  } catch {
    return false;
  }
}

// The active documents' windows of the top-level traversable's inclusive descendant
// navigables, in tree order.
function inclusiveDescendantNavigables() {
  const windows = safeList();
  const visit = (w) => {
    ArrayPrototypePush(windows, w);
    let count = 0;
    try {
      count = WindowGetLength(w);
    } catch {
      return;
    }
    for (let i = 0; i < count; i++) {
      let child;
      try {
        child = w[i];
      } catch {
        continue;
      }
      if (child !== undefined && child !== null) visit(child);
    }
  };
  visit(WindowGetTop(ownWindow));
  return windows;
}

// Registers a handler for the answers to one request; `onDeadline` runs if none finished it.
function startFrameRequest(id, handler, deadlineMs, onDeadline) {
  const request = { __proto__: null, handler, timer: null, onGone: null };
  if (deadlineMs > 0) {
    request.timer = setTimeoutFn(() => finishFrameRequest(id) && onDeadline(), deadlineMs);
  }
  frameRequests.set(id, request);
}

function clearFrameRequestDeadline(id) {
  const request = frameRequests.get(id);
  if (request !== undefined && request.timer !== null) {
    clearTimeoutFn(request.timer);
    request.timer = null;
  }
}

function finishFrameRequest(id) {
  const request = frameRequests.get(id);
  if (request === undefined) return false;
  if (request.timer !== null) clearTimeoutFn(request.timer);
  frameRequests.delete(id);
  return true;
}

function onFrameMessage(event) {
  const data = MessageEventPrototypeGetData(event);
  if (ownData(data, "protocol") !== FRAME_PROTOCOL) return;
  EventPrototypeStopImmediatePropagation(event);
  if (event.isTrusted !== true) return; // a synthetic MessageEvent could claim any origin
  const source = MessageEventPrototypeGetSource(event);
  const origin = MessageEventPrototypeGetOrigin(event);
  const kind = ownData(data, "kind");
  const id = ownData(data, "id");
  if (!isInThisTab(source) && origin !== "null" && typeof id === "string") {
    // A document that went away (pagehide) fails the calls it was running and cancels those
    // it made; by the time its message arrives, its window is no longer in the tab.
    if (kind === "result") {
      const request = frameRequests.get(id);
      if (request !== undefined && request.onGone !== null) request.onGone(origin);
    } else if (kind === "cancel") {
      // From the caller's old document: another WindowProxy than the call came from, so the
      // call's id (a secret of the two documents) and origin are what say it is the caller.
      cancelExecutionForOtherFrame(id, null, origin);
    }
    return;
  }
  if (!isInThisTab(source)) return;
  if (origin === "null") {
    // With a document of an opaque origin (a sandboxed frame) only the policy is spoken — its
    // question, or its answer as a parent: no other traffic can be addressed to it or
    // trusted from it.
    if (kind !== "policy") return;
    if (typeof id === "string" && frameRequests.has(id)) frameRequests.get(id).handler(kind, data, source, origin);
    else answerPolicy(id, source, origin);
    return;
  }
  if (typeof id === "string" && frameRequests.has(id)) {
    frameRequests.get(id).handler(kind, data, source, origin);
    return;
  }
  if (kind === "toolchange") queueGlobalTask(fireToolChange);
  else if (kind === "getTools") answerGetTools(id, source, origin);
  else if (kind === "hello") postToFrame(source, frameMessage("hello", { id }), origin);
  else if (kind === "execute") runExecutionForOtherFrame(data, id, source, origin);
  else if (kind === "cancel") cancelExecutionForOtherFrame(id, source, origin);
  else if (kind === "policy") answerPolicy(id, source, origin);
}

function answerPolicy(id, source, origin) {
  if (typeof id !== "string" || WindowGetParent(source) !== ownWindow) return;
  whenToolsPolicyKnown(() => {
    const container = containerOf(source);
    const allowed =
      toolsPolicy === "allowed" && container !== null && containerAllowsTools(container, origin);
    const message = frameMessage("policy", { id, allowed });
    if (origin !== "null") {
      postToFrame(source, message, origin);
      return;
    }
    // An opaque origin cannot be named as the target: the answer goes to that window
    // whatever its document is by then (another document ignores an id it did not ask with).
    try {
      WindowPostMessage(source, message, "*");
    } catch {
      // The frame went away.
    }
  });
}

function askParentForToolsPolicy() {
  const parent = WindowGetParent(ownWindow);
  const id = newUUID();
  startFrameRequest(
    id,
    (kind, data, source) => {
      if (kind !== "policy" || source !== parent) return;
      finishFrameRequest(id);
      settleToolsPolicy(ownData(data, "allowed") === true);
    },
    POLICY_DEADLINE_MS,
    () => settleToolsPolicy(false),
  );
  postToFrame(parent, frameMessage("policy", { id }), "*");
}

function toolDescription(definition) {
  return {
    __proto__: null,
    name: definition.name,
    title: definition.title,
    description: definition.description,
    inputSchema: definition.inputSchema,
    annotations: definition.annotations,
  };
}

function answerGetTools(id, source, origin) {
  if (typeof id !== "string") return;
  whenToolsPolicyKnown(() => {
    const tools = safeList();
    if (toolsPolicy === "allowed") {
      modelContextToolMap.forEach((definition) => {
        if (toolIsExposedToOrigin(ownOrigin, definition.exposedOrigins, origin)) {
          ArrayPrototypePush(tools, toolDescription(definition));
        }
      });
    }
    postToFrame(source, frameMessage("tools", { id, tools }), origin);
  });
}

// A tool description that came from another frame, checked field by field.
function readToolDescription(value) {
  const name = ownData(value, "name");
  const title = ownData(value, "title");
  const description = ownData(value, "description");
  const inputSchema = ownData(value, "inputSchema");
  const annotations = ownData(value, "annotations");
  if (typeof name !== "string" || typeof description !== "string") return null;
  if (typeof inputSchema !== "string") return null;
  return {
    __proto__: null,
    name,
    title: typeof title === "string" ? title : null,
    description,
    inputSchema,
    annotations: isObject(annotations)
      ? {
          __proto__: null,
          consequentialHint: ownData(annotations, "consequentialHint") === true,
          debugging: ownData(annotations, "debugging") === true,
          readOnlyHint: ownData(annotations, "readOnlyHint") === true,
          untrustedContentHint: ownData(annotations, "untrustedContentHint") === true,
        }
      : null,
  };
}

// Asks every other frame of the tab for the tools it exposes to this origin; calls `done`
// with [{description, window, origin}] once all answered or the deadline passed.
function gatherToolsFromOtherFrames(done) {
  const found = safeList();
  const waiting = new SafeSet();
  const windows = inclusiveDescendantNavigables();
  for (let i = 0; i < windows.length; i++) if (windows[i] !== ownWindow) waiting.add(windows[i]);
  if (waiting.size === 0) {
    done(found);
    return;
  }
  const id = newUUID();
  startFrameRequest(
    id,
    (kind, data, source, origin) => {
      if (kind !== "tools" || !waiting.has(source)) return;
      waiting.delete(source);
      const tools = ownData(data, "tools");
      const count = ArrayIsArray(tools) ? ownData(tools, "length") : 0;
      for (let i = 0; i < count; i++) {
        const description = readToolDescription(ownData(tools, `${i}`));
        if (description !== null) {
          ArrayPrototypePush(found, { __proto__: null, description, window: source, origin });
        }
      }
      if (waiting.size === 0 && finishFrameRequest(id)) done(found);
    },
    GET_TOOLS_DEADLINE_MS,
    () => done(found),
  );
  waiting.forEach((w) => postToFrame(w, frameMessage("getTools", { id }), "*"));
}

// Caller side of executing a tool that lives in another frame: a handshake learns the
// frame's real origin before the input is sent there.
function requestExecutionInOtherFrame(execution, toolName, inputArguments) {
  const target = execution.target;
  const id = execution.uuid;
  const fail = (message) => execution.completionSteps(null, false, message, undefined);
  const handler = (kind, data, source, origin) => {
    if (source !== target) return;
    if (origin !== execution.expectedOrigin) {
      // The frame navigated to another origin since getTools(): nothing is sent to it.
      if (finishFrameRequest(id)) fail(MESSAGES.unknown);
      return;
    }
    if (kind === "hello") {
      clearFrameRequestDeadline(id); // the tool itself may take as long as it needs
      const request = frameMessage("execute", { id, name: toolName, input: inputArguments });
      postToFrame(target, request, origin);
      execution.sentTo = origin;
      if (execution.cancelRequested) cancelExecutionInOtherFrame(execution);
    } else if (kind === "result") {
      finishFrameRequest(id);
      const result = ownData(data, "result");
      const message = ownData(data, "message");
      if (ownData(data, "success") === true && (typeof result === "string" || result === null)) {
        execution.completionSteps(result, true, null, undefined);
      } else if (ownData(data, "errorName") === "DataError" && typeof message === "string") {
        execution.settle(null, false, message, "DataError");
      } else {
        fail(typeof message === "string" ? message : MESSAGES.unknown);
      }
    }
  };
  startFrameRequest(id, handler, HANDSHAKE_DEADLINE_MS, () => fail(MESSAGES.unknown));
  frameRequests.get(id).onGone = (origin) => {
    if (origin === execution.expectedOrigin && finishFrameRequest(id)) fail(MESSAGES.unknown);
  };
  postToFrame(target, frameMessage("hello", { id }), "*");
  // The frame may go away with the call in flight (removed: it says nothing; navigated: its
  // document answers from `pagehide`, see answerPendingExecutionsOnPageHide).
  const watch = () => {
    if (!frameRequests.has(id)) return;
    if (!isInThisTab(target)) {
      if (finishFrameRequest(id)) fail(MESSAGES.unknown);
      return;
    }
    setTimeoutFn(watch, FRAME_WATCH_MS);
  };
  setTimeoutFn(watch, FRAME_WATCH_MS);
}

// Caller side of cancelling a call to another frame's tool. The tool runs all the same, as
// in Chromium: a call the frame has not been sent yet is sent first, then cancelled there.
function cancelExecutionInOtherFrame(execution) {
  if (execution.sentTo === null) {
    execution.cancelRequested = true; // the handshake sends it, then this again
    return;
  }
  finishFrameRequest(execution.uuid);
  postToFrame(execution.target, frameMessage("cancel", { id: execution.uuid }), execution.sentTo);
}

// This document is going away.
// - The frames waiting for its tools get their failure now, as Chromium rejects their
//   executeTool() when the tool's document is gone.
// - The calls it made to other frames' tools are cancelled there (§1.5: a caller that goes
//   away cancels its pending executions: the tool's signal aborts, toolcancel fires).
// - When its window closes, the calls it runs reject with UnknownError, as Chromium's do: a
//   caller in another tree (this window's opener) would otherwise wait for ever.
function answerPendingExecutionsOnPageHide() {
  executionsForOtherFrames.forEach((execution, id) => {
    const reply = frameMessage("result", { id, result: null, success: false, message: MESSAGES.unknown });
    postToFrame(execution.source, reply, execution.origin);
  });
  executionsForOtherFrames.clear();
  const closing = WindowGetClosed(ownWindow);
  pendingToolExecutions.forEach((execution) => {
    if (execution.target !== ownWindow && execution.sentTo !== null) cancelExecutionInOtherFrame(execution);
    if (closing) execution.rejectNow(domException(MESSAGES.unknown, "UnknownError"));
  });
  if (closing) pendingToolExecutions.clear();
}

// Target side: another frame asks this document to run one of its tools.
function runExecutionForOtherFrame(data, id, source, origin) {
  if (typeof id !== "string") return;
  const toolName = ownData(data, "name");
  const inputArguments = ownData(data, "input");
  const reply = (result, success, message) =>
    postToFrame(source, frameMessage("result", { id, result, success, message }), origin);
  whenToolsPolicyKnown(() => {
    const definition =
      typeof toolName === "string" ? modelContextToolMap.get(toolName) : undefined;
    if (
      toolsPolicy !== "allowed" ||
      typeof inputArguments !== "string" ||
      definition === undefined ||
      !toolIsExposedToOrigin(ownOrigin, definition.exposedOrigins, origin)
    ) {
      reply(null, false, MESSAGES.unknown);
      return;
    }
    const violation = inputViolation(definition, inputArguments);
    if (violation !== null) {
      postToFrame(
        source,
        frameMessage("result", { id, result: null, success: false, message: violation, errorName: "DataError" }),
        origin,
      );
      return;
    }
    const uuid = newUUID();
    executionsForOtherFrames.set(id, { __proto__: null, source, origin, uuid });
    if (cancelledBeforeStart.delete(id)) cancelExecutionForOtherFrame(id, source, origin);
    queueGlobalTask(() =>
      toolExecuteSteps(toolName, inputArguments, uuid, null, null, (result, success, message) => {
        executionsForOtherFrames.delete(id);
        reply(result, success, message);
      }),
    );
  });
}

// Target side: the caller cancels (`source`: its window, or null when its document is gone).
function cancelExecutionForOtherFrame(id, source, origin) {
  if (typeof id !== "string") return;
  const execution = executionsForOtherFrames.get(id);
  if (execution === undefined) {
    // The call may wait for this document's permissions policy (else it is over, or was
    // refused): cancel it once it starts.
    const waiting = toolsPolicy === "pending" && source !== null;
    if (waiting && cancelledBeforeStart.size < MAX_EARLY_CANCELS) cancelledBeforeStart.add(id);
    return;
  }
  if (execution.origin !== origin || (source !== null && execution.source !== source)) return;
  executionsForOtherFrames.delete(id);
  // Two hops, as for a local cancellation: the execute steps' toolactivated fires first.
  queueGlobalTask(() => queueGlobalTask(() => cancelLocalToolExecution(execution.uuid)));
}

// -------------------------------------------------------------------------------------------
// The spec's algorithms
// -------------------------------------------------------------------------------------------

let modelContextObject = null; // this document's ModelContext, once installed

function fireToolChange() {
  whenToolsPolicyKnown(() => {
    if (toolsPolicy === "allowed" && modelContextObject !== null) {
      fireEvent(modelContextObject, new EventCtor("toolchange"));
    }
  });
}

// "notify documents of a tool change": every document of the tab whose origin is the tool
// owner's or one of `exposedOrigins` gets a `toolchange` task. postMessage's targetOrigin
// makes the browser drop the message for every other origin.
function notifyDocumentsOfAToolChange(exposedOrigins) {
  const windows = inclusiveDescendantNavigables();
  for (let i = 0; i < windows.length; i++) {
    const target = windows[i];
    if (target === ownWindow) {
      queueGlobalTask(fireToolChange);
      continue;
    }
    postToFrame(target, frameMessage("toolchange"), ownOrigin);
    for (let j = 0; j < exposedOrigins.length; j++) {
      if (exposedOrigins[j] !== ownOrigin) {
        postToFrame(target, frameMessage("toolchange"), exposedOrigins[j]);
      }
    }
  }
}

// registerTool() method steps, from "Let tool map be …", for a converted tool. Throws what
// the spec rejects with; returns the promise otherwise.
function registerToolSteps(tool, options, surface) {
  const toolName = tool.name;
  if (modelContextToolMap.has(toolName)) {
    noteScriptToolRefused(toolName);
    throw domException(MESSAGES.duplicate, "InvalidStateError");
  }
  if (!isValidToolName(toolName)) throw domException(MESSAGES.invalidName, "InvalidStateError");
  if (tool.description === "") throw domException(MESSAGES.noDescription, "InvalidStateError");
  const stringifiedInputSchema = stringifyInputSchema(tool.inputSchema, "registerTool");
  checkSchemaSubset(stringifiedInputSchema, "registerTool");
  const signal = options.signal;
  if (signal !== undefined && AbortSignalPrototypeGetAborted(signal)) {
    throw AbortSignalPrototypeGetReason(signal);
  }
  const exposedOrigins =
    options.exposedTo === undefined ? safeList() : parseOriginList(options.exposedTo, MESSAGES.exposedTo);

  let resolvePromise;
  let rejectPromise;
  const promise = new PromiseCtor((resolve, reject) => {
    resolvePromise = resolve;
    rejectPromise = reject;
  });
  const definition = createToolDefinition(tool, stringifiedInputSchema, options, exposedOrigins, surface);
  if (signal !== undefined) {
    EventTargetPrototypeAddEventListener(
      signal,
      "abort",
      () => {
        unregisterATool(toolName, definition);
        rejectPromise(AbortSignalPrototypeGetReason(signal));
      },
      { __proto__: null, once: true },
    );
  }
  modelContextToolMap.set(toolName, definition);
  notifyDocumentsOfAToolChange(exposedOrigins);
  queueGlobalTask(() => resolvePromise(undefined));
  harnessHooks.toolsChanged();
  return promise;
}

function stringifyInputSchema(inputSchema, operation) {
  if (inputSchema === undefined) return "";
  return serializeToJSON(inputSchema, operation, "invalid input schema: toJSON() returns undefined");
}

// "Serialize a JavaScript value to a JSON string" as Chromium does it: what JSON.stringify
// itself refuses (a cycle, a BigInt, a revoked proxy, a stack overflow) becomes the
// operation's TypeError (RangeError) with Blink's prefix; an exception the page's own code
// threw inside it (a toJSON, a getter, a proxy trap) is rethrown, the very object.
function serializeToJSON(value, operation, undefinedMessage) {
  let text;
  try {
    text = JSONStringify(value);
  } catch (error) {
    const refusal = jsonStringifyRefusal(error);
    if (refusal === null) throw error;
    throw refusal === "RangeError"
      ? new RangeErrorCtor(`Failed to execute '${operation}' on 'ModelContext': ${errorMessageOf(error)}`)
      : failedToExecute(operation, errorMessageOf(error));
  }
  if (text === undefined) throw failedToExecute(operation, undefinedMessage);
  return text;
}

// Which of JSON.stringify's own errors `error` is ("TypeError", "RangeError"), or null: one
// the page threw. Told apart by V8's messages, since both are this realm's errors. (Chromium
// tells them apart by where they were thrown; a page that throws an error of its own with
// one of these very messages gets it back prefixed here, and unchanged from Chromium.)
function jsonStringifyRefusal(error) {
  try {
    const proto = ObjectGetPrototypeOf(error);
    const message = ownData(error, "message");
    if (typeof message !== "string") return null;
    if (proto === RangeErrorCtor.prototype) {
      return message === "Maximum call stack size exceeded" ? "RangeError" : null;
    }
    if (proto !== TypeErrorCtor.prototype) return null;
    const own =
      StringPrototypeStartsWith(message, "Converting circular structure to JSON") ||
      message === "Do not know how to serialize a BigInt" ||
      (StringPrototypeStartsWith(message, "Cannot perform '") &&
        StringPrototypeEndsWith(message, "' on a proxy that has been revoked"));
    return own ? "TypeError" : null;
  } catch {
    return null; // a thrown proxy whose traps throw: the page's
  }
}

// JSON text of a page object the harness passes on untouched, or `fallback`.
function passThroughJSON(value, fallback) {
  if (value === undefined) return fallback;
  try {
    const text = JSONStringify(value);
    return typeof text === "string" ? text : fallback;
  } catch {
    return fallback;
  }
}

// A tool definition (spec) plus the fields the harness passes through.
function createToolDefinition(tool, stringifiedInputSchema, options, exposedOrigins, surface) {
  const annotations = tool.annotations;
  return ObjectFreeze({
    __proto__: null,
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: stringifiedInputSchema,
    execute: tool.execute,
    annotations,
    exposedOrigins,
    exposedTo: options.exposedTo === undefined ? null : exposedOrigins,
    annotationsJSON: tool.annotationsJSON,
    outputSchemaJSON: passThroughJSON(tool.outputSchema, "null"),
    resolve: tool.resolve,
    origin: ownOrigin,
    surface,
    source: "script",
    signal: options.signal, // kept for legacy.js's setToolState(), which re-registers the tool
  });
}

// "unregister a tool". With `expected`, only that very registration is removed, so an old
// signal cannot take down a newer tool of the same name.
function unregisterATool(toolName, expected) {
  const definition = modelContextToolMap.get(toolName);
  if (definition === undefined || (expected !== undefined && definition !== expected)) return false;
  modelContextToolMap.delete(toolName);
  notifyDocumentsOfAToolChange(definition.exposedOrigins);
  harnessHooks.toolsChanged();
  return true;
}

function createRegisteredTool(description, window, origin) {
  const tool = {};
  const annotations = description.annotations;
  if (annotations !== null) {
    createDataProperty(tool, "annotations", {
      consequentialHint: annotations.consequentialHint,
      debugging: annotations.debugging,
      readOnlyHint: annotations.readOnlyHint,
      untrustedContentHint: annotations.untrustedContentHint,
    });
  }
  createDataProperty(tool, "description", description.description);
  if (description.inputSchema !== "") {
    createDataProperty(tool, "inputSchema", JSONParse(description.inputSchema));
  }
  createDataProperty(tool, "name", description.name);
  createDataProperty(tool, "origin", origin);
  createDataProperty(tool, "title", description.title === null ? "" : description.title);
  createDataProperty(tool, "window", window);
  return tool;
}

function getToolsSteps(fromOriginStrings) {
  const fromOrigins = parseOriginList(fromOriginStrings, MESSAGES.fromOrigins);
  return new PromiseCtor((resolve) => {
    queueGlobalTask(() => {
      flushDeclarativeScan();
      const found = safeList();
      modelContextToolMap.forEach((definition) => {
        ArrayPrototypePush(found, {
          __proto__: null,
          description: toolDescription(definition),
          window: ownWindow,
          origin: ownOrigin,
        });
      });
      gatherToolsFromOtherFrames((remote) => {
        for (let i = 0; i < remote.length; i++) {
          const origin = remote[i].origin;
          if (origin === ownOrigin || listIncludes(fromOrigins, origin)) {
            ArrayPrototypePush(found, remote[i]);
          }
        }
        ArrayPrototypeSort(found, (a, b) =>
          a.description.name < b.description.name ? -1 : a.description.name > b.description.name ? 1 : 0,
        );
        const tools = [];
        for (let i = 0; i < found.length; i++) {
          createDataProperty(tools, i, createRegisteredTool(found[i].description, found[i].window, found[i].origin));
        }
        queueGlobalTask(() => resolve(tools));
      });
    });
  });
}

function executeToolSteps(tool, inputObject, signal) {
  let expectedTargetOriginURL;
  try {
    expectedTargetOriginURL = new URLCtor(tool.origin);
  } catch {
    throw domException(MESSAGES.badOrigin, "NotSupportedError");
  }
  const expectedOrigin = URLPrototypeGetOrigin(expectedTargetOriginURL);
  if (expectedOrigin === "null") throw domException(MESSAGES.opaqueOrigin, "NotSupportedError");
  const input = inputObject === undefined ? {} : inputObject;
  if (!isObject(input)) throw failedToExecute("executeTool", "invalid input object: value is not an object");
  const inputArguments = serializeToJSON(
    input,
    "executeTool",
    "invalid input object: toJSON() returns undefined",
  );
  if (signal !== undefined && AbortSignalPrototypeGetAborted(signal)) {
    throw AbortSignalPrototypeGetReason(signal);
  }
  let resolvePromise;
  let rejectPromise;
  const promise = new PromiseCtor((resolve, reject) => {
    resolvePromise = resolve;
    rejectPromise = reject;
  });
  const targetWindow = tool.window;
  const toolName = tool.name;
  const uuid = newUUID();
  const execution = {
    __proto__: null,
    uuid,
    target: targetWindow,
    expectedOrigin,
    sentTo: null, // another frame's origin, once the call was sent there
    cancelRequested: false,
    // The completion steps run once: whichever of settlement and cancellation comes first.
    completionSteps(result, success, message) {
      execution.settle(result, success, message, "UnknownError");
    },
    settle(result, success, message, errorName) {
      if (!pendingToolExecutions.has(uuid)) return;
      pendingToolExecutions.delete(uuid);
      queueGlobalTask(() => {
        if (success) resolvePromise(result);
        else rejectPromise(domException(message ?? MESSAGES.unknown, errorName));
      });
    },
    rejectNow(error) {
      rejectPromise(error); // this document's tasks will not run again
    },
  };
  if (signal !== undefined) {
    EventTargetPrototypeAddEventListener(
      signal,
      "abort",
      () => {
        rejectPromise(AbortSignalPrototypeGetReason(signal));
        queueGlobalTask(() => cancelAPendingToolExecution(uuid));
      },
      { __proto__: null, once: true },
    );
  }
  queueGlobalTask(() => {
    pendingToolExecutions.set(uuid, execution);
    if (!isInThisTab(targetWindow)) {
      execution.completionSteps(null, false, MESSAGES.unknown);
      return;
    }
    if (targetWindow !== ownWindow) {
      requestExecutionInOtherFrame(execution, toolName, inputArguments);
      return;
    }
    flushDeclarativeScan();
    const definition = modelContextToolMap.get(toolName);
    if (ownOrigin !== expectedOrigin || definition === undefined) {
      execution.completionSteps(null, false, MESSAGES.unknown);
      return;
    }
    const violation = inputViolation(definition, inputArguments);
    if (violation !== null) {
      execution.settle(null, false, violation, "DataError");
      return;
    }
    queueGlobalTask(() =>
      toolExecuteSteps(toolName, inputArguments, uuid, null, null, execution.completionSteps),
    );
  });
  return promise;
}

// "cancel a pending tool execution"
function cancelAPendingToolExecution(uuid) {
  const execution = pendingToolExecutions.get(uuid);
  if (execution === undefined) return;
  pendingToolExecutions.delete(uuid);
  if (execution.target === ownWindow) {
    // Crossing to the target's event loop takes a hop, as it does for the execute steps; so
    // tasks already queued there (toolactivated) run first, as in Chromium.
    queueGlobalTask(() => queueGlobalTask(() => cancelLocalToolExecution(uuid)));
  } else {
    cancelExecutionInOtherFrame(execution);
  }
}

// The target document's half of cancellation: abort the execution's signal, then toolcancel.
function cancelLocalToolExecution(uuid) {
  const local = localPendingToolExecutions.get(uuid);
  if (local === undefined) return;
  localPendingToolExecutions.delete(uuid);
  AbortControllerPrototypeAbort(local.controller);
  if (modelContextObject !== null) {
    fireEvent(modelContextObject, createToolEvent(ToolCancelEvent, "toolcancel", local.toolName));
  }
  harnessHooks.toolEvent("toolcancel", local.toolName, local.callId);
}

// "tool execute steps" + "imperative execute steps". `completionSteps(result, success,
// message, reason)`; `callId` and `extraOptions` come from the harness (null for the page).
function toolExecuteSteps(toolName, inputArguments, uuid, callId, extraOptions, completionSteps) {
  const definition = modelContextToolMap.get(toolName);
  if (definition === undefined) {
    completionSteps(null, false, MESSAGES.unknown, undefined);
    return;
  }
  let inputObject;
  try {
    inputObject = JSONParse(inputArguments);
  } catch {
    completionSteps(null, false, MESSAGES.badInput, undefined);
    return;
  }
  if (!isObject(inputObject)) {
    completionSteps(null, false, MESSAGES.badInput, undefined);
    return;
  }
  const controller = new AbortControllerCtor();
  localPendingToolExecutions.set(uuid, { __proto__: null, controller, toolName, callId });
  if (definition.source === "declarative") {
    // A <form toolname>: declarative.js fills it and submits it (or waits for the user).
    const signal = AbortControllerPrototypeGetSignal(controller);
    runDeclarativeTool(definition, inputObject, uuid, callId, signal, completionSteps);
    return;
  }
  const options = {};
  createDataProperty(options, "signal", AbortControllerPrototypeGetSignal(controller));
  // Questions for the user (user_input.js): options.client, options.requestUserInteraction.
  addUserInputMembers(options, toolName, callId, AbortControllerPrototypeGetSignal(controller));
  if (extraOptions !== null) {
    const keys = ObjectKeys(extraOptions);
    for (let i = 0; i < keys.length; i++) {
      if (keys[i] !== "signal") createDataProperty(options, keys[i], extraOptions[keys[i]]);
    }
  }
  let toolPromise;
  try {
    const value = ReflectApply(definition.execute, undefined, [inputObject, options]);
    toolPromise = new SafePromise((resolve) => resolve(value));
  } catch (error) {
    toolPromise = new SafePromise((resolve, reject) => reject(error));
  }
  // Chromium fires toolactivated once execute has been called and its microtasks have run.
  queueGlobalTask(() => {
    if (modelContextObject !== null) {
      fireEvent(modelContextObject, createToolEvent(ToolActivatedEvent, "toolactivated", toolName));
    }
    harnessHooks.toolEvent("toolactivated", toolName, callId);
  });
  safeThen(
    toolPromise,
    (value) => {
      if (!localPendingToolExecutions.has(uuid)) return;
      localPendingToolExecutions.delete(uuid);
      let serialized;
      try {
        serialized = serializeToolResult(value);
      } catch (error) {
        completionSteps(null, false, MESSAGES.toolFailed, error);
        return;
      }
      completionSteps(serialized, true, null, undefined);
    },
    (reason) => {
      ConsoleWarn(`WebMCP tool execution failed: Uncaught ${describeForConsole(reason)}`);
      if (!localPendingToolExecutions.has(uuid)) return;
      localPendingToolExecutions.delete(uuid);
      completionSteps(null, false, MESSAGES.toolFailed, reason);
    },
  );
}

// The DataError message for page input that breaks a script tool's inputSchema (schema.js),
// or null. Forms check their input themselves (Chromium's own messages).
function inputViolation(definition, inputArguments) {
  if (definition.source !== "script") return null;
  try {
    return inputSchemaViolation(definition.inputSchema, inputArguments);
  } catch {
    return null; // a schema the checker cannot read: execute decides
  }
}

// What executeTool() resolves to, the way Chromium serializes an execute result.
function serializeToolResult(value) {
  if (typeof value === "string") return value === "" ? MESSAGES.emptyResult : value;
  if (typeof value === "symbol") throw new TypeErrorCtor("Cannot convert a Symbol value to a string");
  if (isObject(value)) {
    const text = JSONStringify(value);
    return text === undefined ? "undefined" : text;
  }
  return `${value}`;
}

function describeForConsole(value) {
  try {
    return isObject(value) ? ErrorPrototypeToString(value) : `${value}`;
  } catch {
    return "exception";
  }
}

// -------------------------------------------------------------------------------------------
// The user agent's own calls (the harness): run a tool of this document the way
// executeTool() does, with the same events and signal, looked up in the private tool map.
// -------------------------------------------------------------------------------------------

const harnessCalls = new SafeMap(); // callId → {uuid, settle}

function invokeToolForHarness(callId, toolName, inputArguments, extraOptions) {
  return new SafePromise((settle) => {
    if (!modelContextToolMap.has(toolName)) {
      settle(harnessError("NotFoundError", `No tool named "${toolName}" is registered in this document.`));
      return;
    }
    const uuid = newUUID();
    harnessCalls.set(callId, { __proto__: null, uuid, settle });
    // `outcome` (declarative tools): "cancelled", or where a submission went; `refusal`
    // (declarative tools): how the form refused the input (declarative.js, formRefusal).
    toolExecuteSteps(toolName, inputArguments, uuid, callId, extraOptions, (result, success, message, reason, outcome, refusal) => {
      const call = harnessCalls.get(callId);
      if (call === undefined || call.uuid !== uuid) return;
      harnessCalls.delete(callId);
      let answer;
      if (outcome === "cancelled") answer = { __proto__: null, status: "cancelled", reason: message };
      else if (!success) answer = harnessFailure(reason, message);
      else if (outcome !== undefined) answer = { __proto__: null, status: "ok", json: result, submitted: outcome };
      else answer = { __proto__: null, status: "ok", json: result };
      if (!success && refusal !== undefined) {
        answer.refusal = { __proto__: null, kind: refusal.kind, parameter: refusal.parameter };
      }
      // A task later, like executeTool(): toolactivated is reported first.
      queueGlobalTask(() => settle(answer));
    });
  });
}

function cancelToolForHarness(callId, reason) {
  const call = harnessCalls.get(callId);
  if (call === undefined) return false;
  harnessCalls.delete(callId);
  call.settle({ __proto__: null, status: "cancelled", reason });
  queueGlobalTask(() => cancelLocalToolExecution(call.uuid));
  return true;
}

function harnessError(name, message) {
  return { __proto__: null, status: "error", error: { __proto__: null, name, message } };
}

// {name, message} of what execute threw (page data: read defensively, as strings).
function harnessFailure(reason, fallbackMessage) {
  if (reason === undefined) return harnessError("UnknownError", fallbackMessage);
  if (!isObject(reason)) return harnessError("Error", safeToString(reason) ?? fallbackMessage);
  let name;
  let message;
  try {
    name = reason.name;
    message = reason.message;
  } catch {
    // A throwing getter: fall back to the generic description.
  }
  return harnessError(
    typeof name === "string" ? name : "Error",
    typeof message === "string" ? message : (safeToString(reason) ?? fallbackMessage),
  );
}

function safeToString(value) {
  try {
    return `${value}`;
  } catch {
    return null;
  }
}

function resolveToolForHarness(toolName, inputArguments) {
  return new SafePromise((settle) => {
    const definition = modelContextToolMap.get(toolName);
    if (definition === undefined || definition.resolve === null) {
      settle(harnessError("NotFoundError", `No tool named "${toolName}" with a resolve function.`));
      return;
    }
    runResolve(definition.resolve, inputArguments, settle);
  });
}

// Calls a tool's `resolve(input)` (seed 001's tools/resolve) and settles with plain JSON.
function runResolve(resolveFunction, inputArguments, settle) {
  let pending;
  try {
    const value = ReflectApply(resolveFunction, undefined, [JSONParse(inputArguments)]);
    pending = new SafePromise((resolve) => resolve(value));
  } catch (error) {
    pending = new SafePromise((resolve, reject) => reject(error));
  }
  safeThen(
    pending,
    (value) => {
      let text;
      try {
        text = JSONStringify(value);
      } catch (error) {
        settle(harnessFailure(error, "resolve() returned a value that is not JSON"));
        return;
      }
      settle({ __proto__: null, status: "ok", value: text === undefined ? null : JSONParse(text) });
    },
    (reason) => settle(harnessFailure(reason, "resolve() failed")),
  );
}

// -------------------------------------------------------------------------------------------
// The page-visible interface
// -------------------------------------------------------------------------------------------

const INTERNAL = Symbol("internal");

function brandCheck(value, operation = null) {
  if (value !== modelContextObject || modelContextObject === null) {
    throw operation === null
      ? new TypeErrorCtor("Illegal invocation")
      : failedToExecute(operation, "Illegal invocation");
  }
}

class ModelContext extends EventTargetCtor {
  constructor(token = undefined) {
    if (token !== INTERNAL) throw new TypeErrorCtor("Failed to construct 'ModelContext': Illegal constructor");
    super();
  }

  registerTool(tool, options = undefined) {
    const surface = modelContextAccessedThrough;
    try {
      brandCheck(this, "registerTool");
      if (arguments.length < 1) {
        throw failedToExecute("registerTool", "1 argument required, but only 0 present.");
      }
      const converted = convertModelContextTool(tool, "registerTool");
      const convertedOptions = convertRegisterToolOptions(options, "registerTool");
      return registerATool(converted, convertedOptions, surface);
    } catch (error) {
      return PromiseReject(error);
    }
  }

  getTools(options = undefined) {
    try {
      brandCheck(this, "getTools");
      const fromOrigins = convertGetToolsOptions(options);
      refuseWhereDocumentDomainIsEnabled();
      if (!isFullyActive()) throw domException(MESSAGES.notFullyActive, "InvalidStateError");
      return afterToolsPolicy(() => getToolsSteps(fromOrigins));
    } catch (error) {
      return PromiseReject(error);
    }
  }

  executeTool(tool, inputObject = undefined, options = undefined) {
    try {
      brandCheck(this, "executeTool");
      if (arguments.length < 1) {
        throw failedToExecute("executeTool", "1 argument required, but only 0 present.");
      }
      const registeredTool = convertRegisteredTool(tool);
      const signal = convertExecuteToolOptions(options);
      refuseWhereDocumentDomainIsEnabled();
      if (!isFullyActive()) throw domException(MESSAGES.notFullyActive, "InvalidStateError");
      return afterToolsPolicy(() => executeToolSteps(registeredTool, inputObject, signal));
    } catch (error) {
      return PromiseReject(error);
    }
  }
}

// Shared by registerTool() and the legacy surfaces: the checks before the spec's steps.
function registerATool(converted, options, surface) {
  refuseWhereDocumentDomainIsEnabled();
  if (!isFullyActive()) throw domException(MESSAGES.notFullyActive, "InvalidStateError");
  return afterToolsPolicy(() => registerToolSteps(converted, options, surface));
}

// The same checks registerToolSteps() makes, without registering: for surfaces that must
// fail synchronously (provideContext, createAutomationDelegate). `replacing` names tools the
// call is about to remove. Returns the input schema serialized ("" for none).
function validateToolRegistration(tool, options, isRegistered, replacing, checkSubset = true) {
  if (isRegistered(tool.name) && !(replacing !== null && replacing.has(tool.name))) {
    throw domException(MESSAGES.duplicate, "InvalidStateError");
  }
  if (!isValidToolName(tool.name)) throw domException(MESSAGES.invalidName, "InvalidStateError");
  if (tool.description === "") throw domException(MESSAGES.noDescription, "InvalidStateError");
  const stringified = stringifyInputSchema(tool.inputSchema, "registerTool");
  if (checkSubset) checkSchemaSubset(stringified, "registerTool");
  if (options.signal !== undefined && AbortSignalPrototypeGetAborted(options.signal)) {
    throw AbortSignalPrototypeGetReason(options.signal);
  }
  if (options.exposedTo !== undefined) parseOriginList(options.exposedTo, MESSAGES.exposedTo);
  return stringified;
}

shapeLikeWebIDL(ModelContext, "ModelContext");
defineEventHandlerAttribute(ModelContext.prototype, "toolchange", brandCheck);
defineEventHandlerAttribute(ModelContext.prototype, "toolactivated", brandCheck);
defineEventHandlerAttribute(ModelContext.prototype, "toolcancel", brandCheck);

function exposeInterface(name, value) {
  ObjectDefineProperty(ownWindow, name, {
    __proto__: null,
    value,
    writable: true,
    enumerable: false,
    configurable: true,
  });
}

// Installs `document.modelContext` (a getter on Document.prototype, like the native one) and
// returns the backend the legacy surfaces and the channel work through.
function installModelContextPolyfill() {
  modelContextObject = new ModelContext(INTERNAL);
  const theModelContext = modelContextObject;
  ObjectDefineProperty(Document.prototype, "modelContext", {
    __proto__: null,
    enumerable: true,
    configurable: true,
    get: {
      modelContext() {
        if (this === ownDocument) {
          modelContextAccessedThrough = "document.modelContext";
          return theModelContext;
        }
        NodePrototypeGetNodeType(this); // throws "Illegal invocation" for non-nodes
        // The window's newer document, in a reused realm (realm.js): its own state answers.
        if (this === WindowGetDocument(ownWindow)) return currentDocumentRun().modelContext ?? undefined;
        return undefined; // documents without a browsing context have no tools
      },
    }.modelContext,
  });
  readAccessorsAsNative(Document.prototype, "modelContext");
  exposeInterface("ModelContext", ModelContext);
  exposeInterface("ToolActivatedEvent", ToolActivatedEvent);
  exposeInterface("ToolCancelEvent", ToolCancelEvent);

  listenOnWindow("message", onFrameMessage, true);
  listenOnWindow("pagehide", answerPendingExecutionsOnPageHide, true);
  if (toolsPolicy === "pending") askParentForToolsPolicy();

  return ObjectFreeze({
    __proto__: null,
    native: false,
    modelContext: theModelContext,
    whenModelContext(callback) {
      callback(theModelContext);
    },
    prototype: ModelContext.prototype,
    register(tool, options, surface) {
      return registerATool(tool, options, surface);
    },
    whenToolsAllowed,
    toolsPolicyPending,
    validate(tool, options, replacing) {
      refuseWhereDocumentDomainIsEnabled();
      validateToolRegistration(tool, options, (name) => modelContextToolMap.has(name), replacing);
    },
    unregister(toolName) {
      const definition = modelContextToolMap.get(toolName);
      return definition !== undefined && definition.source === "script" && unregisterATool(toolName, definition);
    },
    forEachTool(callback) {
      modelContextToolMap.forEach(callback);
    },
    scriptTool(toolName) {
      const definition = modelContextToolMap.get(toolName);
      return definition !== undefined && definition.source === "script" ? definition : null;
    },
    invoke: invokeToolForHarness,
    cancel: cancelToolForHarness,
    resolve: resolveToolForHarness,
    prepare() {
      return false; // the polyfill passes meta straight to invoke
    },
  });
}
