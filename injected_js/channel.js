// The private channel to the harness (CHANNEL.md is the contract), and start-up.
//
// Page → harness: Playwright's binding, exposed to the session's page only (a popup or any other
// page of the browser context runs this script too, but has no way to the harness). The named wrapper Playwright puts on `window` is
// removed so page script cannot call it, and is not used either: it serializes with the
// page's JSON.stringify and spreads with the page's array iterator. Messages go to the raw
// CDP binding (`__playwright__binding__`) instead, in the envelope Playwright's
// PageBinding.dispatch expects, built by string concatenation from text that was serialized
// with the captured JSON.stringify.
//
// Harness → page: a frozen entry function on `window` that refuses any caller without the
// secret, reads commands through own data properties only, and answers with SafePromises of
// null-prototype objects (so neither `await` nor `.then` on the way out consults anything the
// page may have patched).

const SECRET_JSON = JSONStringify(HARNESS.secret);

function sendToHarness(messageText) {
  if (documentRetired) return; // a newer document of this window speaks for it now
  try {
    if (rawBinding !== null) {
      ReflectApply(rawBinding, ownWindow, [
        '{"name":' +
          JSONStringify(HARNESS.binding) +
          ',"seq":0,"serializedArgs":[' +
          JSONStringify(messageText) +
          "]}",
      ]);
    } else if (typeof bindingWrapper === "function") {
      ReflectApply(bindingWrapper, ownWindow, [messageText]);
    }
  } catch {
    // The harness went away (context closing); the page must not notice.
  }
}

// -------------------------------------------------------------------------------------------
// Tool snapshots
// -------------------------------------------------------------------------------------------

const snapshotTexts = new SafeWeakMap(); // tool definition → its ToolSnapshot as JSON text
const registrations = new SafeWeakMap(); // script tool definition → its registration number

// Registrations are numbered from a random base per document (48 bits, from a UUID's first
// twelve hex digits), so no other document's registration has this one's number: a call the
// harness checked against a tool of one document never runs the next document's tool of the
// same name, should the page commit a new document between the checks and the call.
function randomRegistrationBase() {
  const text = newUUID();
  let base = 0;
  for (let i = 0; i < 13; i++) {
    const code = StringPrototypeCharCodeAt(text, i);
    if (code === 45) continue; // "-"
    base = base * 16 + (code <= 57 ? code - 48 : code - 87); // 0-9, a-f
  }
  return base;
}
let lastRegistration = randomRegistrationBase();

// Which registration of a script tool a definition is (null for declarative tools, whose
// definitions are rebuilt from the DOM). The harness runs a call only on the registration
// it checked the call against (`invoke` here, `prepare` in native mode).
function registrationOf(definition) {
  if (definition.source !== "script") return null;
  let number = registrations.get(definition);
  if (number === undefined) {
    lastRegistration += 1;
    number = lastRegistration;
    registrations.set(definition, number);
  }
  return number;
}

function toolSnapshotText(definition) {
  let text = snapshotTexts.get(definition);
  if (text !== undefined) return text;
  text =
    '{"name":' +
    JSONStringify(definition.name) +
    ',"title":' +
    (definition.title === null ? "null" : JSONStringify(definition.title)) +
    ',"description":' +
    JSONStringify(definition.description) +
    ',"inputSchema":' +
    (definition.inputSchema === "" ? "null" : definition.inputSchema) +
    ',"outputSchema":' +
    definition.outputSchemaJSON +
    ',"annotations":' +
    definition.annotationsJSON +
    ',"hasResolve":' +
    (definition.resolve !== null ? "true" : "false") +
    ',"source":' +
    JSONStringify(definition.source) +
    ',"origin":' +
    JSONStringify(definition.origin) +
    ',"exposedTo":' +
    (definition.exposedTo === null ? "null" : JSONStringify(definition.exposedTo)) +
    ',"surface":' +
    JSONStringify(definition.surface) +
    ',"registration":' +
    JSONStringify(registrationOf(definition)) +
    "}";
  snapshotTexts.set(definition, text);
  return text;
}

// The registration number of the script tool registered under `toolName` now (null: none).
function currentRegistration(toolName) {
  const definition = backend !== null ? backend.scriptTool(toolName) : null;
  return definition === null ? null : registrationOf(definition);
}

// This frame's whole registry, sorted by name, as a JSON array of strings: each tool's
// snapshot as its own JSON text. The harness keeps the Tool it built from a text for as long
// as the text comes back unchanged, so an unchanged tool is never parsed or built again.
function toolSnapshotsText() {
  const definitions = safeList();
  if (backend !== null) backend.forEachTool((definition) => ArrayPrototypePush(definitions, definition));
  ArrayPrototypeSort(definitions, (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const texts = safeList();
  for (let i = 0; i < definitions.length; i++) {
    ArrayPrototypePush(texts, JSONStringify(toolSnapshotText(definitions[i])));
  }
  return "[" + ArrayPrototypeJoin(texts, ",") + "]";
}

// -------------------------------------------------------------------------------------------
// The state version: what the harness last heard of this document
// -------------------------------------------------------------------------------------------

// Bumped at every change of what a listing would say (the registry, the forms, refusals).
// `tools` messages and `list` answers carry the version they show, and every `invoke` answer
// the version now: when the harness already holds that version, the call changed nothing and
// the frame need not be re-read (CHANNEL.md "State versions").
let stateCounter = 0;

function noteStateChanged() {
  stateCounter += 1;
}

// This document's token first, so that no other document's version can equal it.
function stateVersion() {
  return documentToken + ":" + stateCounter;
}

// What an `invoke` answer says of the document as the call ends. Changes not scanned yet
// (DOM mutations the observers have not run for) are applied first, so they count.
function currentState() {
  flushDeclarativeScan();
  return {
    __proto__: null,
    version: stateVersion(),
    seedVersion: seedVersion(),
    pending: seedPending(),
  };
}

let toolSnapshotQueued = false;

// One `tools` message per microtask checkpoint, however many changes it saw.
function scheduleToolSnapshot() {
  noteStateChanged();
  if (toolSnapshotQueued) return;
  toolSnapshotQueued = true;
  queueMicrotaskFn(() => {
    toolSnapshotQueued = false;
    sendToHarness(
      '{"secret":' +
        SECRET_JSON +
        ',"type":"tools","version":' +
        JSONStringify(stateVersion()) +
        ',"tools":' +
        toolSnapshotsText() +
        ',"refused":' +
        declarativeRefusedText() +
        "}",
    );
  });
}

function sendToolEvent(type, toolName, callId) {
  sendToHarness(
    '{"secret":' +
      SECRET_JSON +
      ',"type":"event","event":' +
      JSONStringify(type) +
      ',"name":' +
      JSONStringify(toolName) +
      ',"callId":' +
      (callId === null ? "null" : JSONStringify(callId)) +
      "}",
  );
}

// -------------------------------------------------------------------------------------------
// The entry point
// -------------------------------------------------------------------------------------------

function answer(value) {
  return new SafePromise((resolve) => resolve(value));
}

function commandError(message) {
  return answer(harnessError("TypeError", message));
}

// The result cap: a result (or error message) over `limit` bytes of UTF-8 never crosses
// the channel; the harness is told its size instead, and refuses it with isError.
function capResult(result, limit) {
  if (result === null || typeof result !== "object") return result;
  const error = result.error;
  const text = result.status === "ok" ? result.json : error != null ? error.message : undefined;
  if (typeof text !== "string" || text.length * 3 <= limit) return result; // ≤ 3 bytes a unit
  const size = utf8Length(text);
  if (size <= limit) return result;
  return { __proto__: null, status: "too_large", size };
}

function utf8Length(text) {
  let size = 0;
  for (let i = 0; i < text.length; i += 1) {
    const unit = StringPrototypeCharCodeAt(text, i);
    if (unit < 0x80) size += 1;
    else if (unit < 0x800) size += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff) {
      size += 4; // a surrogate pair: one 4-byte character
      i += 1;
    } else size += 3;
  }
  return size;
}

// A callId as the harness sent it (string or number), or null.
function readCallId(command) {
  const callId = ownData(command, "callId");
  return typeof callId === "string" || typeof callId === "number" ? callId : null;
}

// Plain data from the harness, re-created from its JSON text in this realm.
function readPlainObject(command, key) {
  const value = ownData(command, key);
  return isObject(value) ? JSONParse(plainJSONText(value)) : null;
}

// An `invoke` answer with the document's state as the call ended (see currentState).
// Without it (an answer that could not take it), the harness re-reads the frame: the safe side.
function withState(result) {
  if (result === null || typeof result !== "object") return result;
  try {
    result.state = currentState();
  } catch {
    // A frozen answer, or a scan that failed: no state.
  }
  return result;
}

function runCommand(command) {
  const op = ownData(command, "op");
  if (op === "whoami") return answer({ __proto__: null, token: documentToken });
  if (op === "state") return answer(currentState());
  if (op === "quiet") {
    const within = ownData(command, "within");
    flushDeclarativeScan();
    return answer({
      __proto__: null,
      timers: timersDueWithin(typeof within === "number" ? within : 0),
      reads: pageReads,
      // Also while the document waits to hear whether it may use the feature: its tools
      // (and seed declarations) come once it does.
      pending: seedPending() || (backend !== null && backend.toolsPolicyPending()),
    });
  }
  if (op === "list") {
    // One JSON text, not an object: CDP (and Playwright after it) carries one string far
    // faster than hundreds of nested objects, and the harness parses it once.
    flushDeclarativeScan();
    // The caller already holds this version (CHANNEL.md "State versions"): nothing to send.
    const known = ownData(command, "known");
    if (
      isObject(known) &&
      ownData(known, "version") === stateVersion() &&
      ownData(known, "seedVersion") === seedVersion() &&
      !seedPending()
    ) {
      return answer('{"unchanged":true}');
    }
    const declarations = seedListedText(); // first: it may count as a new seedVersion
    // The caller holds the tools of this version already: they are not sent again.
    const toolsKnown = ownData(command, "knownTools") === stateVersion();
    const listed =
      '{"version":' +
      JSONStringify(stateVersion()) +
      ',"seedVersion":' +
      JSONStringify(seedVersion()) +
      ',"tools":' +
      (toolsKnown ? "null" : toolSnapshotsText()) +
      ',"native":' +
      (backend !== null && backend.native ? "true" : "false") +
      ',"origin":' +
      JSONStringify(ownOrigin) +
      ',"url":' +
      JSONStringify(ownLocation.href) +
      ',"refused":' +
      declarativeRefusedText() +
      ',"declarations":' +
      declarations;
    if (ownData(command, "registry") !== true) return answer(listed + "}");
    // Native mode: Chromium's own registry of this document too, read now (after the rest),
    // in the same answer.
    if (backend === null || !backend.native) return answer(listed + ',"registry":null}');
    return new SafePromise((resolve) =>
      safeThen(backend.registry(), (registry) => resolve(listed + ',"registry":' + registry + "}")),
    );
  }
  if (op === "elicit-answer") {
    // The user's answer to a tool's question (user_input.js).
    return answer(answerToolQuestion(command));
  }
  if (op === "declarations") {
    // Seed 002's tool-name elements, read now, with their controls' current values.
    return answer({ __proto__: null, declarations: JSONParse(seedDeclarationsText(true)) });
  }
  const name = ownData(command, "name");
  if (op === "cancel") {
    const callId = readCallId(command);
    const reason = ownData(command, "reason");
    const cancelled =
      callId !== null && backend !== null && backend.cancel(callId, typeof reason === "string" ? reason : "cancelled");
    return answer({ __proto__: null, cancelled });
  }
  if (op === "review") {
    // A person reviewed a filled <form toolname> (no toolautosubmit) and submits it.
    if (typeof name !== "string") return commandError('review: "name" must be a string');
    if (backend === null) return answer(harnessError("NotFoundError", "This document has no WebMCP."));
    return answer(reviewDeclarativeTool(name, readCallId(command), readPlainObject(command, "values")));
  }
  if (op === "check") {
    // Native mode, before CDP runs a form: would the form change a value as it is set? (After
    // a form's error: did Chromium's fill refuse a value?)
    if (typeof name !== "string") return commandError('check: "name" must be a string');
    return answer(exactFillCheck(name, readPlainObject(command, "input") ?? {}));
  }
  if (op === "invoke" || op === "resolve" || op === "prepare") {
    if (typeof name !== "string") return commandError(`${op}: "name" must be a string`);
    if (backend === null) {
      return answer(harnessError("NotFoundError", "This document has no WebMCP (not a secure context)."));
    }
  }
  if (op === "invoke") {
    const callId = readCallId(command);
    if (callId === null) return commandError('invoke: "callId" must be a string or a number');
    const registration = ownData(command, "registration");
    if (typeof registration === "number" && currentRegistration(name) !== registration) {
      // Registered again (or gone) since the harness checked the call: run nothing.
      return answer({ __proto__: null, status: "changed" });
    }
    const input = plainJSONText(ownData(command, "input") ?? {});
    const limit = ownData(command, "maxResultBytes");
    const running = backend.invoke(callId, name, input, readPlainObject(command, "meta"));
    const capped = (result) => (typeof limit === "number" ? capResult(result, limit) : result);
    return new SafePromise((resolve, reject) =>
      safeThen(running, (result) => resolve(withState(capped(result))), reject),
    );
  }
  if (op === "resolve") {
    return backend.resolve(name, plainJSONText(ownData(command, "input") ?? {}));
  }
  if (op === "prepare") {
    const registration = ownData(command, "registration");
    const expected = typeof registration === "number" ? registration : null;
    return answer({ __proto__: null, prepared: backend.prepare(name, readPlainObject(command, "meta"), expected) });
  }
  return commandError(`unknown op ${JSONStringify(typeof op === "string" ? op : null)}`);
}

// -------------------------------------------------------------------------------------------
// Start-up: layer on the native object when Chromium has one, else install the polyfill
// (secure contexts only, like the native [SecureContext] API).
// -------------------------------------------------------------------------------------------

function startModelContext() {
  if (nativeModelContextDescriptor !== undefined && NativeModelContextPrototype !== null) {
    return installNativeLayer();
  }
  if (!isSecureContextAtStart) return null;
  return installModelContextPolyfill();
}

harnessHooks.toolsChanged = scheduleToolSnapshot;
harnessHooks.stateChanged = noteStateChanged;
if (HARNESS.events) harnessHooks.toolEvent = sendToolEvent; // only when asked (CHANNEL.md)
declarativeHooks.send = (fieldsText) => sendToHarness('{"secret":' + SECRET_JSON + "," + fieldsText + "}");
const backend = startModelContext();
if (backend !== null) installLegacySurfaces(backend);
if (backend !== null) installDeclarativeTools(backend);
// An insecure document has no WebMCP, but Chromium's SubmitEvent keeps its members there.
if (backend === null && NativeSubmitEventPrototypeGetAgentInvoked === null) installSubmitEventMembers();

// This document's token. The harness learns it twice: from this message (Playwright names
// the frame that sent it) and from `whoami` run in a CDP execution context. That pairs each
// frame with the context the harness calls it in, without running anything through the
// page's own built-ins (Playwright's `evaluate` would: its argument and result handling
// uses the page's Array.prototype.push and Object.keys). The message also says the
// document's origin as it is ("null" for a sandboxed document), which its URL need not tell.
const documentToken = newUUID();
sendToHarness(
  '{"secret":' +
    SECRET_JSON +
    ',"type":"hello","token":' +
    JSONStringify(documentToken) +
    ',"origin":' +
    JSONStringify(ownOrigin) +
    "}",
);

// What realm.js knows of this document: its commands, how its window listeners hand over an
// event to it, and how it steps aside for a newer document of the same window.
const thisDocument = ObjectFreeze({
  __proto__: null,
  document: ownDocument,
  get modelContext() {
    return backend !== null ? backend.modelContext : null;
  },
  runCommand,
  forward: forwardWindowEvent,
  retire: retireDocument,
});
