// The realm's side: the harness's entry point (defined once per realm) and which document's
// state answers. `startDocument()` runs document.js … declarative_seed.js for the window's
// current document and returns that document's `thisDocument` (channel.js).
//
// Why: when an iframe's initial about:blank document navigates to a same-origin URL, the
// browser keeps its Window and realm (HTML's "reuse the window"), so no init script runs for
// the new document, and the state the script set up belongs to the about:blank document.
// That happens whenever anything touched the iframe's window before it navigated (a parent
// script, or the parent's polyfill posting `toolchange` to its frames). The first thing that
// meets the new document — its script reading `document.modelContext`, a message from
// another frame, a command from the harness — renews the state: the old document's state
// is retired and the init script's per-document part runs again, for the new document, with
// the built-ins captured when the realm started (primordials.js), before any page script.

let currentDocumentState = null;

// Native mode: the ModelContext of each document of this realm that the layer answered for
// (native_layer.js), kept for the realm's life: a document keeps its object after its
// window moved on to a newer document, as in Chromium. Stand-ins are in both maps.
const modelContextOfDocument = new SafeWeakMap(); // document → its ModelContext
const inactiveModelContexts = new SafeWeakMap(); // the layer's stand-ins → true

function currentDocumentRun() {
  if (currentDocumentState !== null && currentDocumentState.document === WindowGetDocument(ownWindow)) {
    return currentDocumentState;
  }
  if (currentDocumentState !== null) currentDocumentState.retire();
  currentDocumentState = startDocument();
  return currentDocumentState;
}

// Harness → page: `window[HARNESS.entry](secret, commandText)` (CHANNEL.md). Non-writable
// and non-configurable, defined before page scripts run; it answers for the window's current
// document. The command is JSON text, parsed here: JSON.parse makes a key "__proto__" an own
// property (as Chromium's executeTool() hands it to a tool), where an object the harness
// sent as a value would have lost it.
ObjectDefineProperty(ownWindow, HARNESS.entry, {
  __proto__: null,
  value: ObjectFreeze(
    {
      entry(secret, commandText) {
        if (secret !== HARNESS.secret) throw new TypeErrorCtor("denied");
        if (typeof commandText !== "string") throw new TypeErrorCtor("the command must be JSON text");
        return currentDocumentRun().runCommand(JSONParse(commandText));
      },
    }.entry,
  ),
  writable: false,
  enumerable: false,
  configurable: false,
});

currentDocumentRun();
