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

const CryptoRandomUUID = uncurryThis(Crypto.prototype.randomUUID);
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
const HTMLIFrameElementPrototypeGetContentWindow = uncurryGetter(
  HTMLIFrameElement.prototype,
  "contentWindow",
);
const NodePrototypeGetNodeType = uncurryGetter(Node.prototype, "nodeType");
const NodeListPrototypeGetLength = uncurryGetter(NodeList.prototype, "length");
// Window attributes live on the window itself; these getters also work on other frames'
// (even cross-origin) WindowProxies, and cannot be replaced by a page that overwrites
// `window.parent` or `window.length` on its own global.
const WindowGetTop = uncurryGetter(globalThis, "top");
const WindowGetParent = uncurryGetter(globalThis, "parent");
const WindowGetLength = uncurryGetter(globalThis, "length");

// What this document is, read once: none of it can change for the document's lifetime.
const ownWindow = globalThis;
const ownDocument = globalThis.document;
const ownOrigin = globalThis.origin;
// `location` and its members are unforgeable (non-configurable own properties).
const ownLocation = globalThis.location;
const isSecureContextAtStart = globalThis.isSecureContext === true;

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

function newUUID() {
  return CryptoRandomUUID(theCrypto);
}
