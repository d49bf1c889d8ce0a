// What this document is. Everything from here to the end of declarative_seed.js runs once per
// document (realm.js calls it): once when the init script starts, and again when the realm's
// window gets a new document without a new realm (an iframe's initial about:blank that
// navigates to a same-origin URL keeps its Window, and Chromium runs no init script for it).

// Read once: none of it changes for the document's lifetime.
const ownDocument = WindowGetDocument(ownWindow);
const ownOrigin = globalThis.origin;
// `location` and its members are unforgeable (non-configurable own properties).
const ownLocation = globalThis.location;
const isSecureContextAtStart = globalThis.isSecureContext === true;
// "document.domain is enabled": the document is not origin-keyed (an `Origin-Agent-Cluster:
// ?0` response), so setting document.domain works. Chromium refuses WebMCP there. An opaque
// origin (a file: document's) has no domain to set: not origin-keyed, yet Chromium allows it.
const documentDomainEnabled = globalThis.originAgentCluster === false && ownOrigin !== "null";

// Once the window has another document, this one's state is retired: its listeners on the
// (shared) window are removed, and it stops talking to the harness.
let documentRetired = false;
const windowListeners = safeList(); // {type, listener, wrapped, capture}

function isCurrentDocument() {
  return WindowGetDocument(ownWindow) === ownDocument;
}

// A listener on the window for this document. The window outlives the document when it is
// reused: an event that arrives for a newer document renews the harness's state for it
// (realm.js) and goes to the newer document's listener instead.
function listenOnWindow(type, listener, capture) {
  const wrapped = (event) => {
    if (documentRetired) return;
    if (!isCurrentDocument()) {
      currentDocumentRun().forward(type, capture, event);
      return;
    }
    listener(event);
  };
  ArrayPrototypePush(windowListeners, { __proto__: null, type, listener, wrapped, capture });
  EventTargetPrototypeAddEventListener(ownWindow, type, wrapped, { __proto__: null, capture });
}

// document.open() erases every listener of the document's window (HTML: "erase all event
// listeners and handlers"), these among them, and keeps the document, its realm and this
// state: a same-origin iframe rewritten with open()/write()/close() would hear no other
// frame again. The open() also replaces the document's children, which a MutationObserver
// (which open() keeps) sees; the listeners are added again then, in their order. Adding one
// that is still there changes nothing.
function listenOnWindowAgain() {
  if (documentRetired) return;
  for (let i = 0; i < windowListeners.length; i++) {
    const entry = windowListeners[i];
    EventTargetPrototypeAddEventListener(ownWindow, entry.type, entry.wrapped, {
      __proto__: null,
      capture: entry.capture,
    });
  }
}
MutationObserverPrototypeObserve(new MutationObserverCtor(listenOnWindowAgain), ownDocument, {
  __proto__: null,
  childList: true,
});

// A newer document in the reused window that nothing else meets (no script of its own reads
// `document.modelContext`, no frame or harness talks to it) is met by its own
// DOMContentLoaded, which reaches the window: its state starts then, and its forms become
// tools, as Chromium's do.
listenOnWindow("DOMContentLoaded", () => {}, true);

// The newer document's own handling of an event this document's listener received.
function forwardWindowEvent(type, capture, event) {
  for (let i = 0; i < windowListeners.length; i++) {
    const entry = windowListeners[i];
    if (entry.type === type && entry.capture === capture) entry.listener(event);
  }
}

function retireDocument() {
  documentRetired = true;
  for (let i = 0; i < windowListeners.length; i++) {
    const entry = windowListeners[i];
    EventTargetPrototypeRemoveEventListener(ownWindow, entry.type, entry.wrapped, {
      __proto__: null,
      capture: entry.capture,
    });
  }
}
