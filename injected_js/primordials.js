// The built-ins the polyfill and the channel use, captured before any page script runs.
//
// Page script may later patch Array.prototype, JSON, Promise, Object.*, EventTarget… The
// polyfill never looks those up again: it calls the captured functions, keeps its state in
// "safe" collections whose methods are own properties, builds descriptors and option bags with
// a null prototype (so a getter on Object.prototype cannot inject `get`, `capture`, `then`…),
// and never iterates with for-of or spread (both consult the page-patchable iterator protocol).

const uncurryThis = Function.prototype.bind.bind(Function.prototype.call);

const ReflectApply = Reflect.apply;
const ReflectOwnKeys = Reflect.ownKeys;

const ObjectDefineProperty = Object.defineProperty;
const ObjectFreeze = Object.freeze;
const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
const ObjectKeys = Object.keys;
const ObjectSetPrototypeOf = Object.setPrototypeOf;
const ObjectGetPrototypeOf = Object.getPrototypeOf;
const OwnObjectPrototype = Object.prototype;
const OwnArrayPrototype = Array.prototype;
const ObjectPrototypeHasOwnProperty = uncurryThis(Object.prototype.hasOwnProperty);

const ArrayIsArray = Array.isArray;
const ArrayPrototypePush = uncurryThis(Array.prototype.push);
const ArrayPrototypeSort = uncurryThis(Array.prototype.sort);
const ArrayPrototypeJoin = uncurryThis(Array.prototype.join);

const StringPrototypeCharCodeAt = uncurryThis(String.prototype.charCodeAt);
const StringPrototypeIndexOf = uncurryThis(String.prototype.indexOf);
const StringPrototypeSlice = uncurryThis(String.prototype.slice);
const StringPrototypeToLowerCase = uncurryThis(String.prototype.toLowerCase);
const StringPrototypeTrim = uncurryThis(String.prototype.trim);
const StringPrototypeToWellFormed = uncurryThis(String.prototype.toWellFormed);
const StringPrototypeStartsWith = uncurryThis(String.prototype.startsWith);
const StringPrototypeEndsWith = uncurryThis(String.prototype.endsWith);

const JSONParse = JSON.parse;
const JSONStringify = JSON.stringify;
const SymbolIterator = Symbol.iterator;
const SymbolToStringTag = Symbol.toStringTag;

const PromiseCtor = Promise;
const PromisePrototypeThen = uncurryThis(Promise.prototype.then);
const PromiseReject = Promise.reject.bind(Promise);
const queueMicrotaskFn = globalThis.queueMicrotask.bind(globalThis);
const setTimeoutFn = globalThis.setTimeout.bind(globalThis);
const clearTimeoutFn = globalThis.clearTimeout.bind(globalThis);

const TypeErrorCtor = TypeError;
const RangeErrorCtor = RangeError;
const ErrorCtor = Error;
const DOMExceptionCtor = DOMException;
const ErrorPrototypeToString = uncurryThis(Error.prototype.toString);
const URLCtor = URL;

const EventCtor = Event;
const EventTargetCtor = EventTarget;
const EventPrototypePreventDefault = uncurryThis(Event.prototype.preventDefault);
const EventPrototypeStopImmediatePropagation = uncurryThis(
  Event.prototype.stopImmediatePropagation,
);
const EventTargetPrototypeAddEventListener = uncurryThis(
  EventTarget.prototype.addEventListener,
);
const EventTargetPrototypeRemoveEventListener = uncurryThis(
  EventTarget.prototype.removeEventListener,
);
const EventTargetPrototypeDispatchEvent = uncurryThis(EventTarget.prototype.dispatchEvent);

const AbortControllerCtor = AbortController;
const AbortControllerPrototypeAbort = uncurryThis(AbortController.prototype.abort);

const MessageChannelCtor = MessageChannel;
const MessagePortPrototypePostMessage = uncurryThis(MessagePort.prototype.postMessage);
const WindowPostMessage = uncurryThis(globalThis.postMessage);

// Not randomUUID(): it is [SecureContext], absent from a data: frame or an http:// page on a
// host that is not loopback, where the script must run to its end all the same.
const CryptoGetRandomValues = uncurryThis(Crypto.prototype.getRandomValues);
const Uint8ArrayCtor = Uint8Array;
const theCrypto = globalThis.crypto;
const ConsoleWarn = globalThis.console.warn.bind(globalThis.console);

const DocumentPrototypeQuerySelectorAll = uncurryThis(Document.prototype.querySelectorAll);
const ElementPrototypeGetAttribute = uncurryThis(Element.prototype.getAttribute);

// Getters, taken from the prototype (or the window) that declares them.
function uncurryGetter(object, name) {
  return uncurryThis(ObjectGetOwnPropertyDescriptor(object, name).get);
}
function uncurrySetter(object, name) {
  return uncurryThis(ObjectGetOwnPropertyDescriptor(object, name).set);
}
const AbortControllerPrototypeGetSignal = uncurryGetter(AbortController.prototype, "signal");
const AbortSignalPrototypeGetAborted = uncurryGetter(AbortSignal.prototype, "aborted");
const AbortSignalPrototypeGetReason = uncurryGetter(AbortSignal.prototype, "reason");
const MessageEventPrototypeGetData = uncurryGetter(MessageEvent.prototype, "data");
const MessageEventPrototypeGetOrigin = uncurryGetter(MessageEvent.prototype, "origin");
const MessageEventPrototypeGetSource = uncurryGetter(MessageEvent.prototype, "source");
const MessagePortPrototypeSetOnmessage = uncurrySetter(MessagePort.prototype, "onmessage");
const URLPrototypeGetOrigin = uncurryGetter(URL.prototype, "origin");
const URLPrototypeGetProtocol = uncurryGetter(URL.prototype, "protocol");
const URLPrototypeGetHostname = uncurryGetter(URL.prototype, "hostname");
const DocumentPrototypeGetDefaultView = uncurryGetter(Document.prototype, "defaultView");
const DocumentPrototypeGetURL = uncurryGetter(Document.prototype, "URL");
const HTMLIFrameElementPrototypeGetContentWindow = uncurryGetter(
  HTMLIFrameElement.prototype,
  "contentWindow",
);
const NodePrototypeGetNodeType = uncurryGetter(Node.prototype, "nodeType");
const NodeListPrototypeGetLength = uncurryGetter(NodeList.prototype, "length");

// For declarative_seed.js: reading `tool-name` elements, their controls and labels.
const ElementPrototypeHasAttribute = uncurryThis(Element.prototype.hasAttribute);
const ElementPrototypeMatches = uncurryThis(Element.prototype.matches);
const ElementPrototypeGetLocalName = uncurryGetter(Element.prototype, "localName");
const NodePrototypeGetParentNode = uncurryGetter(Node.prototype, "parentNode");
const NodePrototypeGetFirstChild = uncurryGetter(Node.prototype, "firstChild");
const NodePrototypeGetNextSibling = uncurryGetter(Node.prototype, "nextSibling");
const NodePrototypeGetNodeValue = uncurryGetter(Node.prototype, "nodeValue");
const NodePrototypeGetBaseURI = uncurryGetter(Node.prototype, "baseURI");
const NodeListPrototypeItem = uncurryThis(NodeList.prototype.item);
const HTMLCollectionPrototypeGetLength = uncurryGetter(HTMLCollection.prototype, "length");
const HTMLCollectionPrototypeItem = uncurryThis(HTMLCollection.prototype.item);
const HTMLFormElementPrototypeGetElements = uncurryGetter(HTMLFormElement.prototype, "elements");
const HTMLFieldSetElementPrototypeGetForm = uncurryGetter(HTMLFieldSetElement.prototype, "form");
const HTMLButtonElementPrototypeGetForm = uncurryGetter(HTMLButtonElement.prototype, "form");
const HTMLButtonElementPrototypeGetType = uncurryGetter(HTMLButtonElement.prototype, "type");
const HTMLInputElementPrototypeGetType = uncurryGetter(HTMLInputElement.prototype, "type");
const HTMLInputElementPrototypeGetValue = uncurryGetter(HTMLInputElement.prototype, "value");
const HTMLInputElementPrototypeGetChecked = uncurryGetter(HTMLInputElement.prototype, "checked");
const HTMLInputElementPrototypeGetLabels = uncurryGetter(HTMLInputElement.prototype, "labels");
const HTMLSelectElementPrototypeGetOptions = uncurryGetter(HTMLSelectElement.prototype, "options");
const HTMLSelectElementPrototypeGetLabels = uncurryGetter(HTMLSelectElement.prototype, "labels");
const HTMLTextAreaElementPrototypeGetValue = uncurryGetter(HTMLTextAreaElement.prototype, "value");
const HTMLTextAreaElementPrototypeGetLabels = uncurryGetter(HTMLTextAreaElement.prototype, "labels");
const HTMLOptionElementPrototypeGetValue = uncurryGetter(HTMLOptionElement.prototype, "value");
const HTMLOptionElementPrototypeGetLabel = uncurryGetter(HTMLOptionElement.prototype, "label");
const HTMLOptionElementPrototypeGetSelected = uncurryGetter(HTMLOptionElement.prototype, "selected");
const MutationObserverCtor = MutationObserver;
const MutationObserverPrototypeObserve = uncurryThis(MutationObserver.prototype.observe);
const URLPrototypeGetHref = uncurryGetter(URL.prototype, "href");

// For declarative.js: `<form toolname>` tools (their schema, filling, submission, review).
const ReflectConstruct = Reflect.construct;
const BigIntCtor = BigInt;
const RegExpCtor = RegExp;
const DateNow = Date.now;
const NumberPrototypeToPrecision = uncurryThis(Number.prototype.toPrecision);
const ElementPrototypeSetAttribute = uncurryThis(Element.prototype.setAttribute);
const ElementPrototypeRemoveAttribute = uncurryThis(Element.prototype.removeAttribute);
const NodePrototypeGetTextContent = uncurryGetter(Node.prototype, "textContent");
const NodePrototypeGetIsConnected = uncurryGetter(Node.prototype, "isConnected");
// Shadow trees (declarative.js: forms in them are tools too).
const ElementPrototypeAttachShadow = Element.prototype.attachShadow;
const ElementPrototypeGetShadowRoot = uncurryGetter(Element.prototype, "shadowRoot");
const ShadowRootPrototypeGetHost = uncurryGetter(ShadowRoot.prototype, "host");
const DocumentFragmentPrototypeQuerySelectorAll = uncurryThis(DocumentFragment.prototype.querySelectorAll);
const NodePrototypeGetRootNode = uncurryThis(Node.prototype.getRootNode);
const WeakRefCtor = WeakRef;
const WeakRefPrototypeDeref = uncurryThis(WeakRef.prototype.deref);
const DocumentPrototypeGetImplementation = uncurryGetter(Document.prototype, "implementation");
const DocumentPrototypeCreateElement = uncurryThis(Document.prototype.createElement);
const DOMImplementationPrototypeCreateHTMLDocument = uncurryThis(
  DOMImplementation.prototype.createHTMLDocument,
);
const HTMLElementPrototypeFocus = uncurryThis(HTMLElement.prototype.focus);
const HTMLFormElementPrototypeRequestSubmit = uncurryThis(HTMLFormElement.prototype.requestSubmit);
const HTMLFormElementPrototypeSubmitMethod = HTMLFormElement.prototype.submit;
const HTMLFormElementPrototypeGetAction = uncurryGetter(HTMLFormElement.prototype, "action");
const HTMLFormElementPrototypeGetMethod = uncurryGetter(HTMLFormElement.prototype, "method");
const HTMLInputElementPrototypeSetValue = uncurrySetter(HTMLInputElement.prototype, "value");
const HTMLInputElementPrototypeSetChecked = uncurrySetter(HTMLInputElement.prototype, "checked");
const HTMLInputElementPrototypeSetType = uncurrySetter(HTMLInputElement.prototype, "type");
const HTMLInputElementPrototypeStepUp = uncurryThis(HTMLInputElement.prototype.stepUp);
const HTMLInputElementPrototypeStepDown = uncurryThis(HTMLInputElement.prototype.stepDown);
const HTMLInputElementPrototypeGetForm = uncurryGetter(HTMLInputElement.prototype, "form");
const HTMLInputElementPrototypeGetFormAction = uncurryGetter(HTMLInputElement.prototype, "formAction");
const HTMLInputElementPrototypeGetFormMethod = uncurryGetter(HTMLInputElement.prototype, "formMethod");
const HTMLSelectElementPrototypeGetForm = uncurryGetter(HTMLSelectElement.prototype, "form");
const HTMLSelectElementPrototypeGetValue = uncurryGetter(HTMLSelectElement.prototype, "value");
const HTMLSelectElementPrototypeSetValue = uncurrySetter(HTMLSelectElement.prototype, "value");
const HTMLTextAreaElementPrototypeSetValue = uncurrySetter(HTMLTextAreaElement.prototype, "value");
const HTMLTextAreaElementPrototypeGetForm = uncurryGetter(HTMLTextAreaElement.prototype, "form");
const HTMLButtonElementPrototypeGetFormAction = uncurryGetter(
  HTMLButtonElement.prototype,
  "formAction",
);
const HTMLButtonElementPrototypeGetFormMethod = uncurryGetter(
  HTMLButtonElement.prototype,
  "formMethod",
);
// validity, willValidate and validationMessage of a form control class.
function uncurryValidation(proto) {
  return ObjectFreeze({
    __proto__: null,
    validity: uncurryGetter(proto, "validity"),
    willValidate: uncurryGetter(proto, "willValidate"),
    validationMessage: uncurryGetter(proto, "validationMessage"),
  });
}
const HTMLInputElementValidation = uncurryValidation(HTMLInputElement.prototype);
const HTMLSelectElementValidation = uncurryValidation(HTMLSelectElement.prototype);
const HTMLTextAreaElementValidation = uncurryValidation(HTMLTextAreaElement.prototype);
const HTMLButtonElementValidation = uncurryValidation(HTMLButtonElement.prototype);
const HTMLOutputElementPrototypeGetForm = uncurryGetter(HTMLOutputElement.prototype, "form");
const HTMLOptionElementPrototypeSetSelected = uncurrySetter(HTMLOptionElement.prototype, "selected");
const ValidityStatePrototypeGetValid = uncurryGetter(ValidityState.prototype, "valid");
const EventPrototypeGetDefaultPrevented = uncurryGetter(Event.prototype, "defaultPrevented");
const EventPrototypeGetEventPhase = uncurryGetter(Event.prototype, "eventPhase");
const EventPrototypeGetTarget = uncurryGetter(Event.prototype, "target");
const EventPrototypeGetType = uncurryGetter(Event.prototype, "type");
const EventPrototypeStopPropagationMethod = Event.prototype.stopPropagation;
const EventPrototypeStopImmediatePropagationMethod = Event.prototype.stopImmediatePropagation;
const EventPrototypeCancelBubbleDescriptor = ObjectGetOwnPropertyDescriptor(Event.prototype, "cancelBubble");
// `isTrusted` is [LegacyUnforgeable]: an own accessor of every event; its getter is shared.
const EventGetIsTrusted = uncurryThis(ObjectGetOwnPropertyDescriptor(new Event("x"), "isTrusted").get);
const SubmitEventCtor = SubmitEvent;
const SubmitEventPrototypeGetSubmitter = uncurryGetter(SubmitEvent.prototype, "submitter");
// Chromium's own SubmitEvent.agentInvoked (native WebMCP only), or null.
const nativeAgentInvokedDescriptor = ObjectGetOwnPropertyDescriptor(
  SubmitEvent.prototype,
  "agentInvoked",
);
const NativeSubmitEventPrototypeGetAgentInvoked =
  nativeAgentInvokedDescriptor !== undefined ? uncurryThis(nativeAgentInvokedDescriptor.get) : null;
const MutationObserverPrototypeTakeRecords = uncurryThis(MutationObserver.prototype.takeRecords);
const MutationRecordPrototypeGetType = uncurryGetter(MutationRecord.prototype, "type");
const MutationRecordPrototypeGetAttributeName = uncurryGetter(
  MutationRecord.prototype,
  "attributeName",
);
// Window attributes live on the window itself; these getters also work on other frames'
// (even cross-origin) WindowProxies, and cannot be replaced by a page that overwrites
// `window.parent` or `window.length` on its own global.
const WindowGetTop = uncurryGetter(globalThis, "top");
const WindowGetParent = uncurryGetter(globalThis, "parent");
const WindowGetLength = uncurryGetter(globalThis, "length");
const WindowGetClosed = uncurryGetter(globalThis, "closed");

// This realm's window. Its document can change without a new realm: an iframe's initial
// about:blank document that navigates to a same-origin URL keeps its Window (HTML's "reuse
// the window"), and no init script runs for the new document (realm.js deals with it).
const ownWindow = globalThis;
const WindowGetDocument = uncurryGetter(globalThis, "document");

// Collections whose methods are own properties of their prototype, so patching
// Map.prototype/Set.prototype later changes nothing. Iterate them with forEach only.
function makeSafe(Unsafe, Safe) {
  const keys = ReflectOwnKeys(Unsafe.prototype);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (key === "constructor") continue;
    const desc = ObjectGetOwnPropertyDescriptor(Unsafe.prototype, key);
    ObjectSetPrototypeOf(desc, null);
    ObjectDefineProperty(Safe.prototype, key, desc);
  }
  ObjectFreeze(Safe.prototype);
  return ObjectFreeze(Safe);
}
const SafeMap = makeSafe(
  Map,
  class SafeMap extends Map {
    constructor() {
      super();
    }
  },
);
const SafeSet = makeSafe(
  Set,
  class SafeSet extends Set {
    constructor() {
      super();
    }
  },
);
const SafeWeakMap = makeSafe(
  WeakMap,
  class SafeWeakMap extends WeakMap {
    constructor() {
      super();
    }
  },
);

// Function.prototype.toString as Chromium's built-ins answer it, for the functions the page
// can reach (the API's methods, accessors and classes, the legacy surfaces, the wrappers):
// "function registerTool() { [native code] }", not the injected script's source. The
// replacement is itself one of them; every other function gets the captured original's
// answer (and a non-function its TypeError). The record of which functions read as native
// lives in this closure only: the page can replace toString, never reach the original or
// undo the record. Another realm of the page (a same-origin frame) runs this same script, so
// its functions have the same source texts: a text recorded here reads as native here too,
// whichever realm's function has it.
const FunctionPrototypeToStringMethod = Function.prototype.toString;
const nativeTexts = new SafeWeakMap(); // function → its native text
const nativeSourceTexts = new SafeSet(); // source texts of the functions above

function nativeText(name) {
  return `function ${name}() { [native code] }`;
}

// Makes `fn` read as the built-in `name` ("registerTool", "get modelContext"): its toString
// and its `name`, as Web IDL's functions have them. Returns `fn`.
function readAsNative(fn, name) {
  ObjectDefineProperty(fn, "name", {
    __proto__: null,
    value: name,
    writable: false,
    enumerable: false,
    configurable: true,
  });
  nativeSourceTexts.add(ReflectApply(FunctionPrototypeToStringMethod, fn, []));
  nativeTexts.set(fn, nativeText(name));
  return fn;
}

// An accessor property's getter and setter, read as native ("get x", "set x").
function readAccessorsAsNative(object, key) {
  const desc = ObjectGetOwnPropertyDescriptor(object, key);
  if (desc.get !== undefined) readAsNative(desc.get, `get ${key}`);
  if (desc.set !== undefined) readAsNative(desc.set, `set ${key}`);
}

{
  const toString = {
    toString() {
      const text = nativeTexts.get(this);
      if (text !== undefined) return text;
      const source = ReflectApply(FunctionPrototypeToStringMethod, this, []);
      if (!nativeSourceTexts.has(source)) return source;
      const name = ownData(this, "name");
      return nativeText(typeof name === "string" ? name : "");
    },
  }.toString;
  ObjectDefineProperty(Function.prototype, "toString", {
    __proto__: null,
    value: toString,
    writable: true,
    enumerable: false,
    configurable: true,
  });
  readAsNative(toString, "toString");
}

// A promise whose `then`, `constructor` and species are its own: `await` and `.then` on it
// never consult Promise.prototype or Promise[Symbol.species], which the page may patch. Used
// for everything that flows to the harness; promises handed to the page are plain Promises.
class SafePromise extends Promise {
  static get [Symbol.species]() {
    return SafePromise;
  }
}
makeSafe(Promise, SafePromise);

function safeThen(promise, onFulfilled, onRejected) {
  return PromisePrototypeThen(promise, onFulfilled, onRejected);
}

// A fresh array that inherits nothing: pushing to it cannot hit an indexed setter the page
// defined on Array.prototype, and JSON.stringify finds no inherited toJSON on it.
function safeList() {
  const list = [];
  ObjectSetPrototypeOf(list, null);
  return list;
}

// CreateDataProperty: defines, never runs a setter the page put on Object.prototype.
function createDataProperty(object, key, value) {
  ObjectDefineProperty(object, key, {
    __proto__: null,
    value,
    writable: true,
    enumerable: true,
    configurable: true,
  });
}

// An own data property's value, or undefined: for objects that came from outside (message
// data, harness commands), so a getter on Object.prototype cannot answer for a missing key.
function ownData(object, key) {
  if (object === null || (typeof object !== "object" && typeof object !== "function")) {
    return undefined;
  }
  const desc = ObjectGetOwnPropertyDescriptor(object, key);
  return desc !== undefined && ObjectPrototypeHasOwnProperty(desc, "value")
    ? desc.value
    : undefined;
}

function isObject(value) {
  return value !== null && (typeof value === "object" || typeof value === "function");
}

// JSON text of plain data (what the harness sends: objects, arrays, strings, numbers,
// booleans, null) read through own data properties only, so nothing inherited — a toJSON or
// a getter on Object.prototype — can change it. Cycles and other values become null.
function plainJSONText(value, depth = 0) {
  if (value === null || typeof value === "boolean" || typeof value === "string") {
    return JSONStringify(value);
  }
  if (typeof value === "number") return JSONStringify(value);
  if (typeof value !== "object" || depth > 64) return "null";
  const parts = safeList();
  if (ArrayIsArray(value)) {
    const length = ownData(value, "length") ?? 0;
    for (let i = 0; i < length; i++) {
      ArrayPrototypePush(parts, plainJSONText(ownData(value, `${i}`), depth + 1));
    }
    return "[" + ArrayPrototypeJoin(parts, ",") + "]";
  }
  const keys = ObjectKeys(value);
  for (let i = 0; i < keys.length; i++) {
    const item = ownData(value, keys[i]);
    if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
    ArrayPrototypePush(parts, JSONStringify(keys[i]) + ":" + plainJSONText(item, depth + 1));
  }
  return "{" + ArrayPrototypeJoin(parts, ",") + "}";
}

// JSON text of what Chromium made by parsing its own JSON text (getTools()'s schemas and
// annotations: this realm's plain objects and arrays, own data properties only, no cycles).
// The captured JSON.stringify reads that as plainJSONText does, many times faster, unless the
// page gave Object.prototype or Array.prototype a toJSON, or another prototype to
// Array.prototype: the only ways page code could run in it, or change its text. Then the
// slow way. (Object.prototype's own prototype cannot be changed.)
function chromiumJSONText(value) {
  if (
    ObjectGetPrototypeOf(OwnArrayPrototype) !== OwnObjectPrototype ||
    ObjectPrototypeHasOwnProperty(OwnObjectPrototype, "toJSON") ||
    ObjectPrototypeHasOwnProperty(OwnArrayPrototype, "toJSON")
  ) {
    return plainJSONText(value);
  }
  return JSONStringify(value);
}

// A random (version 4) UUID, as crypto.randomUUID() writes one. Typed array elements and a
// string's characters are read without any lookup the page could patch.
const HEX_DIGITS = "0123456789abcdef";
function newUUID() {
  const bytes = CryptoGetRandomValues(theCrypto, new Uint8ArrayCtor(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  let text = "";
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) text += "-";
    text += HEX_DIGITS[bytes[i] >> 4] + HEX_DIGITS[bytes[i] & 0x0f];
  }
  return text;
}

// Chromium's own WebMCP, when it has one (native_layer.js layers on it). Captured before any
// page script, and before this harness patches any of it: the page may replace them later.
const nativeModelContextDescriptor = ObjectGetOwnPropertyDescriptor(Document.prototype, "modelContext");
const NativeModelContextPrototype =
  nativeModelContextDescriptor !== undefined && typeof globalThis.ModelContext === "function"
    ? globalThis.ModelContext.prototype
    : null;
const nativeRegisterTool =
  NativeModelContextPrototype !== null ? NativeModelContextPrototype.registerTool : null;
const nativeGetToolsMethod = NativeModelContextPrototype !== null ? NativeModelContextPrototype.getTools : null;
const nativeGetTools = nativeGetToolsMethod !== null ? uncurryThis(nativeGetToolsMethod) : null;
// The `on…` event handler attributes' accessors, by event type.
const nativeEventHandlerDescriptors = new SafeMap();
if (NativeModelContextPrototype !== null) {
  const types = ["toolchange", "toolactivated", "toolcancel"];
  for (let i = 0; i < types.length; i++) {
    const desc = ObjectGetOwnPropertyDescriptor(NativeModelContextPrototype, `on${types[i]}`);
    if (desc !== undefined) nativeEventHandlerDescriptors.set(types[i], desc);
  }
}
const nativeExecuteToolMethod =
  NativeModelContextPrototype !== null ? NativeModelContextPrototype.executeTool : null;
const nativeExecuteTool = nativeExecuteToolMethod !== null ? uncurryThis(nativeExecuteToolMethod) : null;
const nativeToolEventGetToolName =
  typeof globalThis.ToolActivatedEvent === "function"
    ? uncurryGetter(globalThis.ToolActivatedEvent.prototype, "toolName")
    : null;
const nativeToolCancelEventGetToolName =
  typeof globalThis.ToolCancelEvent === "function"
    ? uncurryGetter(globalThis.ToolCancelEvent.prototype, "toolName")
    : null;
// Chromium's Permissions Policy as script reads it (`document.featurePolicy`), captured once
// per realm (a reused window's newer document reads it too, after page scripts ran): with its
// own WebMCP, Chromium knows the `tools` feature (native_layer.js). Null where it has none.
const DocumentPrototypeGetFeaturePolicy =
  typeof globalThis.FeaturePolicy === "function" &&
  ObjectGetOwnPropertyDescriptor(Document.prototype, "featurePolicy") !== undefined
    ? uncurryGetter(Document.prototype, "featurePolicy")
    : null;
const FeaturePolicyPrototypeAllowsFeature =
  DocumentPrototypeGetFeaturePolicy !== null ? uncurryThis(globalThis.FeaturePolicy.prototype.allowsFeature) : null;

// The channel's binding (channel.js): the raw CDP binding Playwright installs, and the named
// wrapper, which is deleted so page script cannot call it. Read once per realm, before any
// page script could replace either.
const rawBinding =
  typeof globalThis.__playwright__binding__ === "function" ? globalThis.__playwright__binding__ : null;
const bindingWrapper = globalThis[HARNESS.binding];
try {
  delete globalThis[HARNESS.binding];
} catch {
  // Not configurable: then it cannot be ours either; nothing to hide.
}
