// Declarative tools in the spec dialect: `<form toolname tooldescription [tooltitle]
// [toolautosubmit]>` (webmachinelearning/webmcp, "Declarative API"), written to match Chromium
// 156's native implementation, which is the reference. The names follow Chromium's
// (FormMCPSchema, "fill form controls", "prepare for submission").
//
// What Chromium 156 does natively (--enable-experimental-web-platform-features), probed:
// - A connected <form> with both `toolname` and `tooldescription` (empty allowed) is a tool, in
//   the same map as script tools: an invalid or taken name registers nothing (silently); a
//   later registerTool() of a form's name rejects "Duplicate tool name". getTools() gives it
//   `title` (from `tooltitle`, "" by default) and no `annotations`; CDP reports
//   `annotations: {autosubmit: true}` for `toolautosubmit` (a boolean attribute).
// - Its inputSchema: {type: "object", properties, required} (always both). Parameters are the
//   form's listed controls that are neither disabled nor readonly (readonly counts only where
//   it applies: text fields, number, temporal types, textarea), grouped by `name` ("" too), in
//   tree order of first appearance. One control per name for every kind but checkbox and radio
//   groups; a name shared by different kinds (or by a button, fieldset, output) is left out.
//   Kinds and shapes: text/email/search/tel/url/password/unknown types, textarea, and hidden
//   inputs that carry a tool attribute → string (+ `pattern` when the input's pattern compiles
//   with the v flag); number → number with minimum/maximum/multipleOf; range → number with
//   minimum/maximum (0/100 by default, max clamped up to min) and multipleOf; date → format
//   "date" and a note appended to the description; datetime-local/month/week/time/color → a
//   regular expression in `format` (time and datetime-local depend on step); select → string
//   with anyOf [{type, const, title}] and enum, select[multiple] → array of them with
//   uniqueItems; one checkbox → boolean; checkboxes sharing a name → array of enum values with
//   uniqueItems; radios → string enum. multipleOf only when the step base (min, else value,
//   else 0) is an exact decimal multiple of the step. Descriptions: toolparamdescription, else
//   the labels' text (without labelable descendants, trimmed, joined with "; "), else
//   aria-description; radio and checkbox groups take theirs from the nearest fieldset around
//   the whole group (within the form), their options' titles from each control's labels.
//   File inputs are left out (a separate flag). `required` lists names whose control (any,
//   for groups) has the attribute.
// - Registration happens in a task after the DOM change; attribute changes on the form and its
//   controls, and controls coming and going, re-register it (unregister + register: two
//   `toolchange` events) when the schema or the tool attributes changed.
// - executeTool(): input keys in order are validated first (unknown name → "Input contains a
//   parameter …", bad value → `Invalid value "…" for parameter …`), nothing changes on an error;
//   then every value is set, with `input` (composed) and `change` events where the value
//   changed (checkboxes and the chosen radio get `change` even when unchanged). Numbers become
//   text the way Blink prints a double (6 significant digits); booleans accept true/false,
//   integers and "true"/"false"/"1"/"0". With `toolautosubmit` the form is then submitted from
//   its first submit button: interactive validation ("Form validation failed: name: message. "),
//   a trusted `submit` event with `agentInvoked` true; `respondWith(promise)` (after
//   preventDefault) gives the result (objects as JSON, anything else as a string, "" stays "");
//   preventDefault() alone is an error; a submission that goes ahead (navigation, dialog,
//   form.submit()) resolves executeTool() to null. Without it, the submit button is focused and
//   the call waits for the user's submission (any submit of that form is then agent-invoked).
//   `toolactivated` fires once the form was filled (and submitted), before the result; a
//   fill error still fires it. While running, the form matches :tool-form-active and its
//   submit button :tool-submit-active. A form reset or a changed/removed definition ends the
//   call ("Tool execution cancelled by a form reset" / "…, since tool definition was updated")
//   without `toolcancel`; an aborted signal rejects with its reason and fires `toolcancel`. A
//   second call while one waits leaves the first pending for good.
//
// Where the polyfill differs (README's table): its events and the submit event of a
// user-initiated submission are the browser's, but `input`/`change` it dispatches are
// untrusted; the pseudo-classes cannot be polyfilled, so the running form carries
// `data-tool-form-active` and its submit button `data-tool-submit-active` instead; DOM changes
// are coalesced (at most one re-scan per DECLARATIVE_SCAN_INTERVAL_MS, one `toolchange` per
// re-scan that changed something), and every change that alters a schema is seen, not only
// attribute changes; `toolparamtitle` (newer Chromium) becomes a parameter's `title`, which
// Chromium 156 ignores.

const DECLARATIVE_SCAN_INTERVAL_MS = 100;
const DECLARATIVE_SURFACE = "form[toolname]";
const FORM_ACTIVE_ATTRIBUTE = "data-tool-form-active";
const SUBMIT_ACTIVE_ATTRIBUTE = "data-tool-submit-active";
const LISTED_CONTROLS = "button,fieldset,input,output,select,textarea";

const DECLARATIVE_MESSAGES = ObjectFreeze({
  __proto__: null,
  noSubmitButton:
    "No submit button was found, but for a form without `toolautosubmit`, there must be a submit button",
  validationFailed: "Form validation failed: ",
  preventedWithoutResponse:
    "The site has a programming error: it called preventDefault() on the 'submit' event, without also calling respondWith() with the tool result",
  respondWithRejected: "respondWith promise was rejected",
  respondWithUnserializable:
    "respondWith promise resolved with an object that could not be serialized to JSON",
  reset: "Tool execution cancelled by a form reset",
  definitionUpdated: "Tool execution cancelled, since tool definition was updated",
  dateNote: "Dates MUST be provided in 'YYYY-MM-DD' format.",
});

const FORMATS = ObjectFreeze({
  __proto__: null,
  color: "^#[0-9a-zA-Z]{6}$",
  month: "^[0-9]{4}-(0[1-9]|1[0-2])$",
  week: "^[0-9]{4}-W(0[1-9]|[1-4][0-9]|5[0-3])$",
  timeFraction: "^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,3})?)?$",
  timeSeconds: "^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$",
  timeMinutes: "^([01][0-9]|2[0-3]):[0-5][0-9]$",
  dateTimeFraction:
    "^[0-9]{4}-(0[1-9]|1[0-2])-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,3})?)?$",
  dateTimeSeconds: "^[0-9]{4}-(0[1-9]|1[0-2])-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?$",
  dateTimeMinutes: "^[0-9]{4}-(0[1-9]|1[0-2])-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9]$",
});

// channel.js fills this in: declarative.js reports, it never talks to the harness itself.
const declarativeHooks = {
  __proto__: null,
  send(fieldsText) {},
};

// -------------------------------------------------------------------------------------------
// Numbers, the way Blink parses and prints them
// -------------------------------------------------------------------------------------------

function isDigitCode(c) {
  return c >= 0x30 && c <= 0x39;
}

// HTML's "valid floating-point number" (Chromium's ParseToDoubleForNumberType): an optional
// "-", digits with an optional fraction (".5" yes, "5." no), an optional exponent; no "+",
// no whitespace; finite. -0 is 0. Anything else is null.
function parseHTMLNumber(text) {
  if (text === null || text.length === 0) return null;
  const n = text.length;
  let i = StringPrototypeCharCodeAt(text, 0) === 0x2d ? 1 : 0;
  let digits = 0;
  while (i < n && isDigitCode(StringPrototypeCharCodeAt(text, i))) {
    i++;
    digits++;
  }
  if (i < n && StringPrototypeCharCodeAt(text, i) === 0x2e) {
    i++;
    let fraction = 0;
    while (i < n && isDigitCode(StringPrototypeCharCodeAt(text, i))) {
      i++;
      fraction++;
    }
    if (fraction === 0) return null;
    digits += fraction;
  }
  if (digits === 0) return null;
  if (i < n && (StringPrototypeCharCodeAt(text, i) | 0x20) === 0x65) {
    i++;
    const sign = i < n ? StringPrototypeCharCodeAt(text, i) : 0;
    if (sign === 0x2b || sign === 0x2d) i++;
    let exponent = 0;
    while (i < n && isDigitCode(StringPrototypeCharCodeAt(text, i))) {
      i++;
      exponent++;
    }
    if (exponent === 0) return null;
  }
  if (i !== n) return null;
  const value = +text;
  if (value !== value || value === 1 / 0 || value === -1 / 0) return null;
  return value === 0 ? 0 : value;
}

// The exact decimal value of a double's shortest representation (what Chromium's Decimal
// holds), as a BigInt mantissa and a power of ten.
function decimalOf(number) {
  const text = `${number}`;
  let mantissa = text;
  let exponent = 0;
  const e = StringPrototypeIndexOf(text, "e");
  if (e >= 0) {
    mantissa = StringPrototypeSlice(text, 0, e);
    exponent = +StringPrototypeSlice(text, e + 1);
  }
  const dot = StringPrototypeIndexOf(mantissa, ".");
  if (dot >= 0) {
    exponent -= mantissa.length - dot - 1;
    mantissa = StringPrototypeSlice(mantissa, 0, dot) + StringPrototypeSlice(mantissa, dot + 1);
  }
  return { __proto__: null, mantissa: BigIntCtor(mantissa), exponent };
}

function scaledMantissa(decimal, exponent) {
  return decimal.mantissa * 10n ** BigIntCtor(decimal.exponent - exponent);
}

// Whether `base` is an exact decimal multiple of `step` (Decimal::Remainder(...).IsZero()).
function isDecimalMultiple(base, step) {
  const a = decimalOf(base);
  const b = decimalOf(step);
  const exponent = a.exponent < b.exponent ? a.exponent : b.exponent;
  const divisor = scaledMantissa(b, exponent);
  return divisor !== 0n && scaledMantissa(a, exponent) % divisor === 0n;
}

// A time step in whole milliseconds: max(round(step × 1000), 1), computed exactly.
function stepInMilliseconds(step) {
  const d = decimalOf(step);
  const shift = d.exponent + 3;
  if (shift >= 0) return d.mantissa * 10n ** BigIntCtor(shift);
  const unit = 10n ** BigIntCtor(-shift);
  let ms = d.mantissa / unit;
  if ((d.mantissa % unit) * 2n >= unit) ms += 1n;
  return ms < 1n ? 1n : ms;
}

function isInt32(value) {
  return typeof value === "number" && (value | 0) === value;
}

// Blink's String::Number(double): 6 significant digits, trailing zeros dropped unless the
// text is in exponential form ("1.00000e+21").
function blinkDoubleText(value) {
  const text = NumberPrototypeToPrecision(value, 6);
  if (StringPrototypeIndexOf(text, "e") >= 0 || StringPrototypeIndexOf(text, ".") < 0) return text;
  let end = text.length;
  while (StringPrototypeCharCodeAt(text, end - 1) === 0x30) end--;
  if (StringPrototypeCharCodeAt(text, end - 1) === 0x2e) end--;
  return StringPrototypeSlice(text, 0, end);
}

// A JSON value as the text Chromium fills in (its JSON parser keeps int32 integers as
// integers), or null when it has none (null, arrays, objects).
function valueText(value) {
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") return isInt32(value) ? `${value}` : blinkDoubleText(value);
  return null;
}

// A JSON value as a checkbox state, or null.
function valueBoolean(value) {
  if (typeof value === "boolean") return value;
  if (isInt32(value)) return value !== 0;
  if (typeof value === "string") {
    const lower = StringPrototypeToLowerCase(value);
    if (lower === "true" || value === "1") return true;
    if (lower === "false" || value === "0") return false;
  }
  return null;
}

// -------------------------------------------------------------------------------------------
// The DOM, read through captured accessors only
// -------------------------------------------------------------------------------------------

function localNameOf(node) {
  return NodePrototypeGetNodeType(node) === 1 ? ElementPrototypeGetLocalName(node) : "";
}

function attribute(element, name) {
  return ElementPrototypeGetAttribute(element, name);
}

function nonEmptyAttribute(element, name) {
  const value = ElementPrototypeGetAttribute(element, name);
  return value === null || value === "" ? null : value;
}

function inputType(element) {
  return HTMLInputElementPrototypeGetType(element);
}

function formOwnerOf(element) {
  switch (localNameOf(element)) {
    case "input":
      return HTMLInputElementPrototypeGetForm(element);
    case "select":
      return HTMLSelectElementPrototypeGetForm(element);
    case "textarea":
      return HTMLTextAreaElementPrototypeGetForm(element);
    case "button":
      return HTMLButtonElementPrototypeGetForm(element);
    case "fieldset":
      return HTMLFieldSetElementPrototypeGetForm(element);
    case "output":
      return HTMLOutputElementPrototypeGetForm(element);
    default:
      return null;
  }
}

function labelsOf(element) {
  switch (localNameOf(element)) {
    case "input":
      return HTMLInputElementPrototypeGetLabels(element);
    case "select":
      return HTMLSelectElementPrototypeGetLabels(element);
    case "textarea":
      return HTMLTextAreaElementPrototypeGetLabels(element);
    default:
      return null;
  }
}

const READONLY_INPUT_TYPES = new SafeSet();
const TEXT_INPUT_TYPES = new SafeSet();
const LABELABLE_ELEMENTS = new SafeSet();
{
  const readonly = ["text", "search", "url", "tel", "email", "password", "number", "date",
    "datetime-local", "month", "week", "time"];
  for (let i = 0; i < readonly.length; i++) READONLY_INPUT_TYPES.add(readonly[i]);
  const text = ["text", "email", "search", "tel", "url", "password"];
  for (let i = 0; i < text.length; i++) TEXT_INPUT_TYPES.add(text[i]);
  const labelable = ["button", "input", "meter", "output", "progress", "select", "textarea"];
  for (let i = 0; i < labelable.length; i++) LABELABLE_ELEMENTS.add(labelable[i]);
}

// Chromium's IsDisabledOrReadOnly().
function isDisabledOrReadOnly(element) {
  if (ElementPrototypeMatches(element, ":disabled")) return true;
  if (!ElementPrototypeHasAttribute(element, "readonly")) return false;
  const name = localNameOf(element);
  if (name === "textarea") return true;
  return name === "input" && READONLY_INPUT_TYPES.has(inputType(element));
}

// Blink's IsSpaceOrNewline: ASCII whitespace, and the Unicode characters of bidi class WS.
function isStrippedSpace(c) {
  if (c <= 0x7f) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  return (
    c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x205f || c === 0x3000
  );
}

function stripWhiteSpace(text) {
  let start = 0;
  let end = text.length;
  while (start < end && isStrippedSpace(StringPrototypeCharCodeAt(text, start))) start++;
  while (end > start && isStrippedSpace(StringPrototypeCharCodeAt(text, end - 1))) end--;
  return StringPrototypeSlice(text, start, end);
}

// HTMLLabelElement::TextContentExcludingLabelable: the text of the label's subtree, leaving
// out labelable elements (inputs, selects, buttons, …) and everything inside them.
function textContentExcludingLabelable(label) {
  const parts = safeList();
  const visit = (node) => {
    for (let child = NodePrototypeGetFirstChild(node); child !== null; child = NodePrototypeGetNextSibling(child)) {
      const type = NodePrototypeGetNodeType(child);
      if (type === 3 || type === 4) {
        ArrayPrototypePush(parts, NodePrototypeGetNodeValue(child));
      } else if (type === 1 && !LABELABLE_ELEMENTS.has(ElementPrototypeGetLocalName(child))) {
        visit(child);
      }
    }
  };
  visit(label);
  return ArrayPrototypeJoin(parts, "");
}

// The control's labels' text joined with "; ", or null when it has no labels.
function labelText(control) {
  const labels = labelsOf(control);
  if (labels === null) return null;
  const count = NodeListPrototypeGetLength(labels);
  if (count === 0) return null;
  const parts = safeList();
  for (let i = 0; i < count; i++) {
    ArrayPrototypePush(parts, stripWhiteSpace(textContentExcludingLabelable(labels[i])));
  }
  const text = ArrayPrototypeJoin(parts, "; ");
  return text === "" ? null : text;
}

// ComputeDescription: toolparamdescription, else the labels' text, else aria-description.
function computeDescription(control) {
  return (
    nonEmptyAttribute(control, "toolparamdescription") ??
    labelText(control) ??
    nonEmptyAttribute(control, "aria-description")
  );
}

function isAncestorOf(ancestor, node) {
  for (let n = node; n !== null; n = NodePrototypeGetParentNode(n)) if (n === ancestor) return true;
  return false;
}

// A radio or checkbox group's description: the toolparamdescription of the nearest fieldset
// around all of its controls (looking no further out than a form).
function groupDescription(controls) {
  let common = controls[0];
  for (let i = 1; i < controls.length && common !== null; i++) {
    while (common !== null && !isAncestorOf(common, controls[i])) common = NodePrototypeGetParentNode(common);
  }
  for (let n = common; n !== null && NodePrototypeGetNodeType(n) === 1; n = NodePrototypeGetParentNode(n)) {
    const name = ElementPrototypeGetLocalName(n);
    if (name === "fieldset") return nonEmptyAttribute(n, "toolparamdescription");
    if (name === "form") return null;
  }
  return null;
}

// -------------------------------------------------------------------------------------------
// FormMCPSchema: a form's parameters and its input schema
// -------------------------------------------------------------------------------------------

// The kind of parameter one control makes, or null (buttons, fieldsets, outputs, files,
// hidden inputs without a tool attribute).
function controlKind(control) {
  const name = localNameOf(control);
  if (name === "textarea") return "text";
  if (name === "select") return "select";
  if (name !== "input") return null;
  const type = inputType(control);
  if (TEXT_INPUT_TYPES.has(type)) return "text";
  switch (type) {
    case "hidden":
      return nonEmptyAttribute(control, "toolparamtitle") !== null ||
        nonEmptyAttribute(control, "toolparamdescription") !== null
        ? "text"
        : null;
    case "date":
    case "datetime-local":
    case "month":
    case "week":
    case "time":
    case "number":
    case "range":
    case "checkbox":
    case "radio":
    case "color":
      return type;
    default:
      return null;
  }
}

// The kind of a whole parameter (all controls sharing a name), or null when unsupported.
function parameterKind(controls) {
  const first = controlKind(controls[0]);
  if (first === "checkbox" || first === "radio") {
    for (let i = 1; i < controls.length; i++) if (controlKind(controls[i]) !== first) return null;
    return first;
  }
  return controls.length === 1 ? first : null;
}

function isSubmitButton(control) {
  const name = localNameOf(control);
  if (name === "button") return HTMLButtonElementPrototypeGetType(control) === "submit";
  if (name !== "input") return false;
  const type = inputType(control);
  return type === "submit" || type === "image";
}

// -------------------------------------------------------------------------------------------
// Shadow trees: Chromium's forms in them are tools too. The polyfill sees forms in open
// shadow roots (found by walking the document) and in any root made with attachShadow(),
// open or closed (it wraps attachShadow before page scripts run); a closed root that the
// parser made (`<template shadowrootmode="closed">`) it cannot see. The submit, reset and
// formdata events of a form in a shadow tree do not leave it (they are not composed), so
// each root gets the listeners the window has, and the mutation observers watch it too.
// -------------------------------------------------------------------------------------------

const shadowRootRefs = safeList(); // WeakRef of every root adopted, in the order found
const adoptedShadowRoots = new SafeWeakMap(); // root → true
const madeShadowRoots = new SafeWeakMap(); // host → its root, from attachShadow()
const shadowRootListeners = safeList(); // {type, listener}: capture listeners every root gets
const shadowRootObservers = safeList(); // {observer, options}: observers every root gets

function querySelectorAllIn(root, selector) {
  return root === ownDocument
    ? DocumentPrototypeQuerySelectorAll(root, selector)
    : DocumentFragmentPrototypeQuerySelectorAll(root, selector);
}

function adoptShadowRoot(root) {
  if (adoptedShadowRoots.has(root)) return;
  adoptedShadowRoots.set(root, true);
  ArrayPrototypePush(shadowRootRefs, new WeakRefCtor(root));
  for (let i = 0; i < shadowRootListeners.length; i++) {
    const entry = shadowRootListeners[i];
    EventTargetPrototypeAddEventListener(root, entry.type, entry.listener, { __proto__: null, capture: true });
  }
  for (let i = 0; i < shadowRootObservers.length; i++) {
    MutationObserverPrototypeObserve(shadowRootObservers[i].observer, root, shadowRootObservers[i].options);
  }
}

// The shadow root of `element`: its open one, or one it made with attachShadow().
function shadowRootOf(element) {
  return ElementPrototypeGetShadowRoot(element) ?? madeShadowRoots.get(element) ?? null;
}

// Every shadow root of the document that is connected, outermost trees first; open roots
// the parser made are found (and adopted) here.
function shadowRootsOfDocument() {
  const roots = safeList();
  const seen = new SafeSet();
  const visit = (tree) => {
    const elements = querySelectorAllIn(tree, "*");
    const count = NodeListPrototypeGetLength(elements);
    for (let i = 0; i < count; i++) {
      const root = shadowRootOf(elements[i]);
      if (root === null || seen.has(root)) continue;
      seen.add(root);
      adoptShadowRoot(root);
      ArrayPrototypePush(roots, root);
      visit(root);
    }
  };
  visit(ownDocument);
  // Forget roots that were collected.
  let kept = 0;
  for (let i = 0; i < shadowRootRefs.length; i++) {
    if (WeakRefPrototypeDeref(shadowRootRefs[i]) !== undefined) shadowRootRefs[kept++] = shadowRootRefs[i];
  }
  shadowRootRefs.length = kept;
  return roots;
}

// The document's forms (matching `selector`) in tree order, then those of each shadow tree.
function formsOfDocument(selector) {
  const forms = safeList();
  const add = (tree) => {
    const found = querySelectorAllIn(tree, selector);
    const count = NodeListPrototypeGetLength(found);
    for (let i = 0; i < count; i++) ArrayPrototypePush(forms, found[i]);
  };
  add(ownDocument);
  const roots = shadowRootsOfDocument();
  for (let i = 0; i < roots.length; i++) add(roots[i]);
  return forms;
}

// attachShadow(), wrapped: the harness learns of every root, closed ones too.
function installShadowRootHook() {
  defineMethod(
    Element.prototype,
    "attachShadow",
    {
      attachShadow(init) {
        const root = ReflectApply(ElementPrototypeAttachShadow, this, arguments);
        madeShadowRoots.set(this, root);
        adoptShadowRoot(root);
        if (declarativeObserver !== null) scheduleDeclarativeScan();
        return root;
      },
    }.attachShadow,
  );
}

// The form's listed controls in tree order (those associated with `form=` too).
function listedControlsOf(form) {
  const root = NodePrototypeGetRootNode(form);
  let owners = controlsIndex === null ? undefined : controlsIndex.get(root);
  if (owners === undefined) {
    owners = controlsByOwner(root);
    // During a pass over many forms: each tree's controls are read once, grouped by owner.
    if (controlsIndex !== null) controlsIndex.set(root, owners);
  }
  return owners.get(form) ?? safeList(); // read, never changed, by the callers
}

// Every form of `root` that owns listed controls → those controls, in tree order.
function controlsByOwner(root) {
  const all = querySelectorAllIn(root, LISTED_CONTROLS);
  const count = NodeListPrototypeGetLength(all);
  const owners = new SafeMap();
  for (let i = 0; i < count; i++) {
    const owner = formOwnerOf(all[i]);
    if (owner === null) continue;
    let list = owners.get(owner);
    if (list === undefined) {
      list = safeList();
      owners.set(owner, list);
    }
    ArrayPrototypePush(list, all[i]);
  }
  return owners;
}

// Tree → (form → its listed controls), while withControlsIndex() runs; else null. Asking
// each form of a page for its controls reads the whole tree each time (a page of a hundred
// forms: ten thousand owner checks); a pass over every form reads it once. Only for a pass
// that changes nothing in the DOM and runs no page script meanwhile.
let controlsIndex = null;

function withControlsIndex(pass) {
  if (controlsIndex !== null) return pass();
  controlsIndex = new SafeMap();
  try {
    return pass();
  } finally {
    controlsIndex = null;
  }
}

// What executeTool() and getTools() need from a form right now: its parameters by name (every
// enabled control's name, supported or not, as Chromium's lookup map has them), the names in
// order, and the submit button.
function formModelOf(form) {
  const controls = listedControlsOf(form);
  const byName = new SafeMap();
  const order = safeList();
  let submitButton = null;
  for (let i = 0; i < controls.length; i++) {
    const control = controls[i];
    if (isDisabledOrReadOnly(control)) continue;
    const name = stripWhiteSpace(attribute(control, "name") ?? ""); // Chromium trims names
    let list = byName.get(name);
    if (list === undefined) {
      list = safeList();
      byName.set(name, list);
      ArrayPrototypePush(order, name);
    }
    ArrayPrototypePush(list, control);
    if (submitButton === null && isSubmitButton(control)) submitButton = control;
  }
  return { __proto__: null, byName, order, submitButton };
}

function addTitleAndDescription(schema, control, extra) {
  const title = nonEmptyAttribute(control, "toolparamtitle");
  if (title !== null) schema.title = title;
  let description = computeDescription(control);
  if (extra !== null) description = description !== null ? `${description} (${extra})` : extra;
  if (description !== null) schema.description = description;
}

function addPattern(schema, control) {
  if (localNameOf(control) !== "input") return;
  const pattern = ElementPrototypeGetAttribute(control, "pattern");
  if (pattern === null) return;
  try {
    new RegExpCtor(pattern, "v"); // Blink's check of the attribute, as written
  } catch {
    return;
  }
  schema.pattern = pattern;
}

// StepRange for number and range inputs: {min, max, step (NaN: none), base}.
function numberStepRange(control, isRange) {
  const minText = ElementPrototypeGetAttribute(control, "min");
  const maxText = ElementPrototypeGetAttribute(control, "max");
  let min = parseHTMLNumber(minText);
  let max = parseHTMLNumber(maxText);
  if (isRange) {
    if (min === null) min = 0;
    if (max === null) max = 100;
    if (max < min) max = min;
  }
  const stepText = ElementPrototypeGetAttribute(control, "step");
  let step = 1;
  if (stepText !== null && stepText !== "") {
    if (StringPrototypeToLowerCase(stepText) === "any") {
      step = isRange ? 1 : 0 / 0;
    } else {
      const parsed = parseHTMLNumber(stepText);
      if (parsed !== null && parsed > 0) step = parsed;
    }
  }
  let base = parseHTMLNumber(minText);
  if (base === null) base = parseHTMLNumber(ElementPrototypeGetAttribute(control, "value"));
  if (base === null) base = 0;
  return { __proto__: null, min, max, step, base };
}

// The `format` pattern of a time or datetime-local input, by its step (60 s by default).
function temporalFormat(control, fraction, seconds, minutes) {
  const stepText = ElementPrototypeGetAttribute(control, "step");
  let ms = 60000n;
  if (stepText !== null && stepText !== "" && StringPrototypeToLowerCase(stepText) !== "any") {
    const parsed = parseHTMLNumber(stepText);
    if (parsed !== null && parsed > 0) ms = stepInMilliseconds(parsed);
  }
  if (ms < 1000n) return fraction;
  return ms < 60000n ? seconds : minutes;
}

function optionsOf(select) {
  const options = HTMLSelectElementPrototypeGetOptions(select);
  const count = HTMLCollectionPrototypeGetLength(options);
  const list = safeList();
  for (let i = 0; i < count; i++) ArrayPrototypePush(list, HTMLCollectionPrototypeItem(options, i));
  return list;
}

function selectChoices(select) {
  const anyOf = safeList();
  const values = safeList();
  const options = optionsOf(select);
  for (let i = 0; i < options.length; i++) {
    const value = HTMLOptionElementPrototypeGetValue(options[i]);
    ArrayPrototypePush(anyOf, {
      __proto__: null,
      type: "string",
      const: value,
      title: NodePrototypeGetTextContent(options[i]),
    });
    ArrayPrototypePush(values, value);
  }
  return { __proto__: null, anyOf, values };
}

// Radio and checkbox groups: one choice per control, titled with its labels' text.
function groupChoices(controls) {
  const anyOf = safeList();
  const values = safeList();
  for (let i = 0; i < controls.length; i++) {
    const value = HTMLInputElementPrototypeGetValue(controls[i]);
    const choice = { __proto__: null, type: "string", const: value };
    const title = labelText(controls[i]);
    if (title !== null) choice.title = title;
    ArrayPrototypePush(anyOf, choice);
    ArrayPrototypePush(values, value);
  }
  return { __proto__: null, anyOf, values };
}

function anyRequired(controls) {
  for (let i = 0; i < controls.length; i++) {
    if (ElementPrototypeHasAttribute(controls[i], "required")) return true;
  }
  return false;
}

// One parameter's schema, or null when the parameter is not supported.
function parameterSchema(kind, controls) {
  const control = controls[0];
  const schema = { __proto__: null };
  switch (kind) {
    case "text":
      schema.type = "string";
      addPattern(schema, control);
      addTitleAndDescription(schema, control, null);
      return schema;
    case "date":
      schema.type = "string";
      schema.format = "date";
      addTitleAndDescription(schema, control, DECLARATIVE_MESSAGES.dateNote);
      return schema;
    case "datetime-local":
      schema.type = "string";
      schema.format = temporalFormat(
        control,
        FORMATS.dateTimeFraction,
        FORMATS.dateTimeSeconds,
        FORMATS.dateTimeMinutes,
      );
      addTitleAndDescription(schema, control, null);
      return schema;
    case "month":
    case "week":
    case "color":
      schema.type = "string";
      schema.format = FORMATS[kind];
      addTitleAndDescription(schema, control, null);
      return schema;
    case "time":
      schema.type = "string";
      schema.format = temporalFormat(control, FORMATS.timeFraction, FORMATS.timeSeconds, FORMATS.timeMinutes);
      addTitleAndDescription(schema, control, null);
      return schema;
    case "number":
    case "range": {
      const range = numberStepRange(control, kind === "range");
      schema.type = "number";
      if (range.min !== null) schema.minimum = range.min;
      if (range.max !== null) schema.maximum = range.max;
      if (range.step === range.step && isDecimalMultiple(range.base, range.step)) {
        schema.multipleOf = range.step;
      }
      if (kind === "number") addPattern(schema, control);
      addTitleAndDescription(schema, control, null);
      return schema;
    }
    case "select": {
      const choices = selectChoices(control);
      if (ElementPrototypeHasAttribute(control, "multiple")) {
        schema.type = "array";
        schema.items = { __proto__: null, type: "string", anyOf: choices.anyOf, enum: choices.values };
        schema.uniqueItems = true;
      } else {
        schema.type = "string";
        schema.anyOf = choices.anyOf;
        schema.enum = choices.values;
      }
      addTitleAndDescription(schema, control, null);
      return schema;
    }
    case "checkbox":
      if (controls.length === 1) {
        schema.type = "boolean";
        const description = computeDescription(control);
        if (description !== null) schema.description = description;
        return schema;
      }
    // falls through: a checkbox group is an array of the radio group's choices
    case "radio": {
      const choices = groupChoices(controls);
      const title = nonEmptyAttribute(control, "toolparamtitle");
      if (kind === "radio") {
        schema.type = "string";
        schema.anyOf = choices.anyOf;
        schema.enum = choices.values;
      } else {
        schema.type = "array";
        schema.items = { __proto__: null, type: "string", anyOf: choices.anyOf, enum: choices.values };
        schema.uniqueItems = true;
      }
      if (title !== null) schema.title = title;
      // A group of one is described like a single control (its own description or labels).
      const description = controls.length === 1 ? computeDescription(control) : groupDescription(controls);
      if (description !== null) schema.description = description;
      return schema;
    }
    default:
      return null;
  }
}

// ComputeJSON: the form's inputSchema as JSON text.
function computeInputSchemaText(model) {
  const properties = { __proto__: null };
  const required = safeList();
  for (let i = 0; i < model.order.length; i++) {
    const name = model.order[i];
    const controls = model.byName.get(name);
    const kind = parameterKind(controls);
    if (kind === null) continue;
    const schema = parameterSchema(kind, controls);
    if (schema === null) continue;
    createDataProperty(properties, name, schema);
    const isRequired =
      kind === "checkbox" || kind === "radio" ? anyRequired(controls) : ElementPrototypeHasAttribute(controls[0], "required");
    if (isRequired) ArrayPrototypePush(required, name);
  }
  return JSONStringify({ __proto__: null, type: "object", properties, required });
}

// -------------------------------------------------------------------------------------------
// Filling the form (FillData): validate every entry, then set every value
// -------------------------------------------------------------------------------------------

let scratchDocument = null;

// A detached input of `control`'s type, with its `attributes` that are set, in an inert
// document: what is set on it, neither the page nor its observers see.
function scratchInputLike(control, attributes) {
  if (scratchDocument === null) {
    scratchDocument = DOMImplementationPrototypeCreateHTMLDocument(
      DocumentPrototypeGetImplementation(ownDocument),
      "",
    );
  }
  const scratch = DocumentPrototypeCreateElement(scratchDocument, "input");
  HTMLInputElementPrototypeSetType(scratch, inputType(control));
  for (let i = 0; i < attributes.length; i++) {
    const value = ElementPrototypeGetAttribute(control, attributes[i]);
    if (value !== null) ElementPrototypeSetAttribute(scratch, attributes[i], value);
  }
  return scratch;
}

// SanitizeValue() of an input of this type, as Chromium's fill checks a value.
function sanitizedValue(control, text) {
  const scratch = scratchInputLike(control, ["multiple"]);
  HTMLInputElementPrototypeSetValue(scratch, text);
  return HTMLInputElementPrototypeGetValue(scratch);
}

function isValidTextValue(control, value) {
  const text = valueText(value);
  if (text === null) return false;
  if (text === "") return true;
  if (localNameOf(control) === "textarea") return true;
  return sanitizedValue(control, text) !== "";
}

function isValidNumberValue(control, value) {
  const text = valueText(value);
  return text !== null && text !== "" && sanitizedValue(control, text) !== "";
}

// Each of `items` (an array of JSON values) names one of `allowed`, at most once.
function isValidChoiceList(items, allowed) {
  if (!ArrayIsArray(items)) return false;
  const left = new SafeSet();
  for (let i = 0; i < allowed.length; i++) left.add(allowed[i]);
  for (let i = 0; i < items.length; i++) {
    const text = valueText(items[i]);
    if (text === null || !left.has(text)) return false;
    left.delete(text);
  }
  return true;
}

function controlValues(controls) {
  const values = safeList();
  for (let i = 0; i < controls.length; i++) {
    ArrayPrototypePush(values, HTMLInputElementPrototypeGetValue(controls[i]));
  }
  return values;
}

function optionValues(select) {
  const values = safeList();
  const options = optionsOf(select);
  for (let i = 0; i < options.length; i++) ArrayPrototypePush(values, HTMLOptionElementPrototypeGetValue(options[i]));
  return values;
}

function isValidParameterValue(kind, controls, value) {
  switch (kind) {
    case "text":
    case "date":
    case "datetime-local":
    case "month":
    case "week":
    case "time":
    case "color":
      return isValidTextValue(controls[0], value);
    case "number":
    case "range":
      return isValidNumberValue(controls[0], value);
    case "select": {
      const allowed = optionValues(controls[0]);
      if (ElementPrototypeHasAttribute(controls[0], "multiple")) return isValidChoiceList(value, allowed);
      const text = valueText(value);
      return text !== null && listIncludes(allowed, text);
    }
    case "checkbox":
      if (controls.length === 1) return valueBoolean(value) !== null;
      return isValidChoiceList(value, controlValues(controls));
    case "radio": {
      const text = valueText(value);
      return text !== null && listIncludes(controlValues(controls), text);
    }
    default:
      return false;
  }
}

function dispatchFillEvent(control, type) {
  // Chromium's input event is composed, its change event is not; both bubble.
  fireEvent(control, new EventCtor(type, { __proto__: null, bubbles: true, composed: type === "input" }));
}

function setTextValue(control, text) {
  if (localNameOf(control) === "textarea") {
    if (HTMLTextAreaElementPrototypeGetValue(control) === text) return;
    HTMLTextAreaElementPrototypeSetValue(control, text);
  } else {
    if (HTMLInputElementPrototypeGetValue(control) === text) return;
    HTMLInputElementPrototypeSetValue(control, text);
  }
  dispatchFillEvent(control, "input");
  dispatchFillEvent(control, "change");
}

// A checkbox (or the chosen radio) gets `change` even when its state does not change.
function setChecked(control, checked) {
  const changed = HTMLInputElementPrototypeGetChecked(control) !== checked;
  if (changed) HTMLInputElementPrototypeSetChecked(control, checked);
  if (changed) dispatchFillEvent(control, "input");
  dispatchFillEvent(control, "change");
}

function selectedValues(select) {
  const values = safeList();
  const options = optionsOf(select);
  for (let i = 0; i < options.length; i++) {
    if (HTMLOptionElementPrototypeGetSelected(options[i])) {
      ArrayPrototypePush(values, HTMLOptionElementPrototypeGetValue(options[i]));
    }
  }
  return values;
}

function fillParameter(kind, controls, value) {
  const control = controls[0];
  switch (kind) {
    case "select": {
      if (!ElementPrototypeHasAttribute(control, "multiple")) {
        const text = valueText(value);
        if (HTMLSelectElementPrototypeGetValue(control) === text) return;
        HTMLSelectElementPrototypeSetValue(control, text);
        dispatchFillEvent(control, "input");
        dispatchFillEvent(control, "change");
        return;
      }
      const wanted = new SafeSet();
      for (let i = 0; i < value.length; i++) wanted.add(valueText(value[i]));
      const before = ArrayPrototypeJoin(selectedValues(control), "\u0000");
      const options = optionsOf(control);
      for (let i = 0; i < options.length; i++) {
        HTMLOptionElementPrototypeSetSelected(options[i], wanted.has(HTMLOptionElementPrototypeGetValue(options[i])));
      }
      if (ArrayPrototypeJoin(selectedValues(control), "\u0000") !== before) {
        dispatchFillEvent(control, "input");
        dispatchFillEvent(control, "change");
      }
      return;
    }
    case "checkbox": {
      if (controls.length === 1) {
        setChecked(control, valueBoolean(value));
        return;
      }
      const wanted = new SafeSet();
      for (let i = 0; i < value.length; i++) wanted.add(valueText(value[i]));
      for (let i = 0; i < controls.length; i++) {
        setChecked(controls[i], wanted.has(HTMLInputElementPrototypeGetValue(controls[i])));
      }
      return;
    }
    case "radio": {
      const text = valueText(value);
      for (let i = 0; i < controls.length; i++) {
        if (HTMLInputElementPrototypeGetValue(controls[i]) === text) setChecked(controls[i], true);
      }
      return;
    }
    default:
      setTextValue(control, valueText(value));
  }
}

// How the form refused a harness's call, for the harness to tell apart from what a page says
// (a page's words can imitate any message): `kind` is "fill" (a value a control cannot
// hold), "changed" (a value the form would change as it is set) or "validation" (its
// constraint validation at submission); `parameter` names the one refused (null: validation).
function formRefusal(kind, parameter, message) {
  return { __proto__: null, kind, parameter, message };
}

// Chromium's check of a fill (FillData): the first entry it refuses (a formRefusal; an unknown
// parameter has no kind), or null.
function fillRefusal(model, input, keys) {
  for (let i = 0; i < keys.length; i++) {
    const name = keys[i];
    const controls = model.byName.get(name);
    if (controls === undefined) {
      return formRefusal(null, name, `Input contains a parameter "${name}" but there is no such parameter for the tool`);
    }
    const value = input[name];
    const kind = parameterKind(controls);
    if (kind === null || !isValidParameterValue(kind, controls, value)) {
      const text = valueText(value);
      return formRefusal(
        "fill",
        name,
        text !== null ? `Invalid value "${text}" for parameter ${name}` : `Invalid value for parameter ${name}`,
      );
    }
  }
  return null;
}

// Fills the form from a JSON object: nothing changes unless every entry is valid. Returns the
// refusal (a formRefusal), or null. `exact` (the harness's calls and reviews): a value the
// form would change as it is set is refused too (changedValue).
function fillFormControls(model, input, exact) {
  const keys = ObjectKeys(input);
  const refused = fillRefusal(model, input, keys) ?? (exact ? changedValue(model, input, keys) : null);
  if (refused !== null) return refused;
  for (let i = 0; i < keys.length; i++) {
    const controls = model.byName.get(keys[i]);
    fillParameter(parameterKind(controls), controls, input[keys[i]]);
  }
  return null;
}

// -------------------------------------------------------------------------------------------
// The harness's exact fill: the value the agent (or the person reviewing) chose is the one
// the form holds, or nothing is filled. A control's value sanitization changes some values
// Chromium's fill takes, and the call would report success with another value submitted:
// a range rounds a value off its step to the nearest step (clamped to min and max), and a
// one-line field drops line breaks. The schema cannot always say so (multipleOf only when the
// step base is a multiple of the step), so such a value is refused, saying what the form
// takes. Re-spellings of the same value (a color's case, a date-time's seconds, the spaces
// around an email address or a URL) are not changes. A page's own executeTool() keeps
// Chromium's way.
// -------------------------------------------------------------------------------------------

// The first entry the form would change as it is set (a formRefusal), or null.
function changedValue(model, input, keys) {
  for (let i = 0; i < keys.length; i++) {
    const controls = model.byName.get(keys[i]);
    const kind = parameterKind(controls);
    const text = valueText(input[keys[i]]);
    let problem = null;
    if (kind === "range") problem = rangeChange(controls[0], text);
    else if (kind === "text") problem = lineBreaksChange(controls[0], text);
    if (problem === null) continue;
    const shown = problem.shown === null ? "" : ` ${problem.shown}`;
    return formRefusal("changed", keys[i], `Invalid value${shown} for parameter ${keys[i]}: ${problem.why}`);
  }
  return null;
}

// A range keeps only base + n × step within [min, max]: an input of the control's attributes,
// in the inert scratch document, rounds `text` as the form would, and steps to the neighbours.
function rangeChange(control, text) {
  const sent = parseHTMLNumber(text);
  if (sent === null) return null;
  const scratch = scratchInputLike(control, ["min", "max", "step", "value"]);
  HTMLInputElementPrototypeSetValue(scratch, text);
  const heldText = HTMLInputElementPrototypeGetValue(scratch);
  const held = parseHTMLNumber(heldText);
  if (held === null || held === sent) return null;
  let other = null;
  try {
    if (held < sent) HTMLInputElementPrototypeStepUp(scratch);
    else HTMLInputElementPrototypeStepDown(scratch);
    const stepped = HTMLInputElementPrototypeGetValue(scratch);
    const value = parseHTMLNumber(stepped);
    if (value !== null && value !== held && (value < sent) !== (held < sent)) other = stepped;
  } catch {
    // No step (step="any"): no neighbour.
  }
  let nearest = `the nearest value it takes is ${heldText}`;
  if (other !== null) {
    const pair = held < sent ? `${heldText} and ${other}` : `${other} and ${heldText}`;
    nearest = `the nearest values it takes are ${pair}`;
  }
  const range = numberStepRange(control, true);
  const steps = range.step === range.step ? `steps of ${range.step} from ${range.base}, ` : "";
  return {
    __proto__: null,
    shown: text,
    why:
      `the form's range control would change it to ${heldText} (it takes ${steps}between ` +
      `${range.min} and ${range.max}); ${nearest}. Nothing was filled.`,
  };
}

// A one-line field (an input, not a textarea) drops line breaks as it is set: "a\nb" is "ab".
function lineBreaksChange(control, text) {
  // The one-line types: text, email, search, tel, url, password (a hidden input keeps them).
  if (text === null || localNameOf(control) !== "input" || !TEXT_INPUT_TYPES.has(inputType(control))) {
    return null;
  }
  if (StringPrototypeIndexOf(text, "\n") < 0 && StringPrototypeIndexOf(text, "\r") < 0) return null;
  const why = ": it drops line breaks. Send the value on one line. Nothing was filled.";
  if (inputType(control) === "password") {
    // A password is not repeated in a message (results and errors reach traces and logs).
    return { __proto__: null, shown: null, why: `the form's one-line field would change it${why}` };
  }
  const held = JSONStringify(sanitizedValue(control, text));
  return {
    __proto__: null,
    shown: JSONStringify(text),
    why: `the form's one-line field would change it to ${held}${why}`,
  };
}

// The form's current values in the schema's shape (what a person reviewing it sees).
function currentValues(model) {
  const values = { __proto__: null };
  for (let i = 0; i < model.order.length; i++) {
    const name = model.order[i];
    const controls = model.byName.get(name);
    const kind = parameterKind(controls);
    if (kind === null) continue;
    const control = controls[0];
    if (kind === "select") {
      if (ElementPrototypeHasAttribute(control, "multiple")) values[name] = selectedValues(control);
      else if (optionsOf(control).length > 0) values[name] = HTMLSelectElementPrototypeGetValue(control);
    } else if (kind === "checkbox" && controls.length === 1) {
      values[name] = HTMLInputElementPrototypeGetChecked(control);
    } else if (kind === "checkbox" || kind === "radio") {
      const checked = safeList();
      for (let j = 0; j < controls.length; j++) {
        if (HTMLInputElementPrototypeGetChecked(controls[j])) {
          ArrayPrototypePush(checked, HTMLInputElementPrototypeGetValue(controls[j]));
        }
      }
      if (kind === "checkbox") values[name] = checked;
      else if (checked.length > 0) values[name] = checked[0];
    } else if (kind === "number" || kind === "range") {
      const number = parseHTMLNumber(HTMLInputElementPrototypeGetValue(control));
      if (number !== null) values[name] = number;
    } else {
      const text =
        localNameOf(control) === "textarea"
          ? HTMLTextAreaElementPrototypeGetValue(control)
          : HTMLInputElementPrototypeGetValue(control);
      if (text !== "") values[name] = text;
    }
  }
  return values;
}

// "Form validation failed: name: message. " for every listed control that is invalid.
function validationFailureMessage(form) {
  let message = DECLARATIVE_MESSAGES.validationFailed;
  const controls = listedControlsOf(form);
  for (let i = 0; i < controls.length; i++) {
    const control = controls[i];
    let getters;
    switch (localNameOf(control)) {
      case "input":
        getters = HTMLInputElementValidation;
        break;
      case "select":
        getters = HTMLSelectElementValidation;
        break;
      case "textarea":
        getters = HTMLTextAreaElementValidation;
        break;
      case "button":
        getters = HTMLButtonElementValidation;
        break;
      default:
        continue; // fieldsets and outputs are never candidates for validation
    }
    if (getters.willValidate(control) && !ValidityStatePrototypeGetValid(getters.validity(control))) {
      message += `${attribute(control, "name") ?? ""}: ${getters.validationMessage(control)}. `;
    }
  }
  return message;
}

// Where a submission goes: the submitter's formmethod/formaction/formtarget, else the form's.
function submissionDetails(form, submitter) {
  let method = HTMLFormElementPrototypeGetMethod(form);
  let action = HTMLFormElementPrototypeGetAction(form);
  let target = attribute(form, "target") ?? "";
  if (submitter !== null) {
    const isButton = localNameOf(submitter) === "button";
    if (ElementPrototypeHasAttribute(submitter, "formmethod")) {
      method = isButton
        ? HTMLButtonElementPrototypeGetFormMethod(submitter)
        : HTMLInputElementPrototypeGetFormMethod(submitter);
    }
    if (ElementPrototypeHasAttribute(submitter, "formaction")) {
      action = isButton
        ? HTMLButtonElementPrototypeGetFormAction(submitter)
        : HTMLInputElementPrototypeGetFormAction(submitter);
    }
    target = attribute(submitter, "formtarget") ?? target;
  }
  return { __proto__: null, method, action, target };
}

function toolNameOfForm(form) {
  return attribute(form, "toolname") ?? "";
}

// The first candidate form (connected, with toolname and tooldescription) named `name`, in
// tree order, matching `selector` when one is given.
function candidateFormNamed(name, selector) {
  const forms = formsOfDocument("form[toolname][tooldescription]");
  const count = forms.length;
  for (let i = 0; i < count; i++) {
    if (attribute(forms[i], "toolname") !== name) continue;
    if (selector === null || ElementPrototypeMatches(forms[i], selector)) return forms[i];
  }
  return null;
}

// How a warning names a form: its tag with toolname (and id), and its place in the document.
function formDescription(form) {
  const id = attribute(form, "id");
  const forms = formsOfDocument("form");
  const count = forms.length;
  let index = 0;
  while (index < count && forms[index] !== form) index++;
  const tag = `<form toolname=${JSONStringify(toolNameOfForm(form))}${id !== null ? ` id=${JSONStringify(id)}` : ""}>`;
  return `${tag} (form ${index + 1} of ${count} in the document)`;
}

// -------------------------------------------------------------------------------------------
// The polyfill: registration of forms in the model context's tool map
// -------------------------------------------------------------------------------------------

const declarativeDefinitions = new SafeMap(); // form → its registered tool definition
const runningDeclarativeTools = new SafeMap(); // form → the execution waiting on it
const agentInvokedEvents = new SafeWeakMap(); // SubmitEvent → true (agent-invoked)
const respondWithPromises = new SafeWeakMap(); // SubmitEvent → the promise given to respondWith
let declarativeRefusals = safeList(); // {name, source, holder, where} of the last scan
const scriptRefusals = new SafeMap(); // name → where, for script tools refused over a form
let declarativeObserver = null;
let declarativeAllowed = false; // the document may use the feature (model_context.js)
let declarativeScanDirty = false;
let declarativeScanScheduled = false;
let declarativeLastScan = -1 / 0;

function createDeclarativeDefinition(form, record) {
  return ObjectFreeze({
    __proto__: null,
    name: record.name,
    title: record.title,
    description: record.description,
    inputSchema: record.schemaText,
    execute: null,
    annotations: null,
    exposedOrigins: safeList(),
    exposedTo: null,
    annotationsJSON: record.autosubmit ? '{"autosubmit":true}' : "{}",
    outputSchemaJSON: "null",
    resolve: null,
    origin: ownOrigin,
    surface: DECLARATIVE_SURFACE,
    source: "declarative",
    form,
    autosubmit: record.autosubmit,
  });
}

function declarativeRecordOf(form) {
  const name = attribute(form, "toolname");
  const description = attribute(form, "tooldescription");
  if (name === null || description === null || !NodePrototypeGetIsConnected(form)) return null;
  return {
    __proto__: null,
    name,
    description,
    title: attribute(form, "tooltitle"),
    autosubmit: ElementPrototypeHasAttribute(form, "toolautosubmit"),
    schemaText: computeInputSchemaText(formModelOf(form)),
  };
}

function sameRecord(definition, record) {
  return (
    definition.name === record.name &&
    definition.description === record.description &&
    definition.title === record.title &&
    definition.autosubmit === record.autosubmit &&
    definition.inputSchema === record.schemaText
  );
}

// Brings the tool map in line with the document's forms; one `toolchange` if anything changed.
// Not before the document may use the feature (the permissions policy registerTool() follows
// too): until then the scan stays due, and in a document the policy refuses it, forms never
// become tools (Chromium's neither).
function scanDeclarativeForms() {
  if (!declarativeAllowed) return;
  declarativeScanDirty = false;
  declarativeLastScan = DateNow();
  const forms = formsOfDocument("form");
  const count = forms.length;
  const records = new SafeMap();
  const ordered = safeList();
  withControlsIndex(() => {
    for (let i = 0; i < count; i++) {
      const record = declarativeRecordOf(forms[i]);
      if (record === null) continue;
      records.set(forms[i], record);
      ArrayPrototypePush(ordered, forms[i]);
    }
  });
  let changed = false;
  const stale = safeList();
  declarativeDefinitions.forEach((definition, form) => {
    const record = records.get(form);
    if (record === undefined || !sameRecord(definition, record)) ArrayPrototypePush(stale, form);
  });
  for (let i = 0; i < stale.length; i++) {
    const definition = declarativeDefinitions.get(stale[i]);
    declarativeDefinitions.delete(stale[i]);
    if (modelContextToolMap.get(definition.name) === definition) modelContextToolMap.delete(definition.name);
    scriptRefusals.delete(definition.name);
    const run = runningDeclarativeTools.get(stale[i]);
    if (run !== undefined) definitionChangedUnder(run);
    changed = true;
  }
  const refusals = safeList();
  for (let i = 0; i < ordered.length; i++) {
    const form = ordered[i];
    if (declarativeDefinitions.has(form)) continue;
    const record = records.get(form);
    if (!isValidToolName(record.name)) continue;
    const holder = modelContextToolMap.get(record.name);
    if (holder !== undefined) {
      ArrayPrototypePush(refusals, {
        __proto__: null,
        name: record.name,
        source: "declarative",
        holder: holder.source,
        where: formDescription(form),
      });
      continue;
    }
    const definition = createDeclarativeDefinition(form, record);
    declarativeDefinitions.set(form, definition);
    modelContextToolMap.set(record.name, definition);
    changed = true;
  }
  declarativeRefusals = refusals;
  if (changed) {
    notifyDocumentsOfAToolChange(safeList());
    harnessHooks.toolsChanged();
  }
}

// A DOM change: re-scan in a later task, at most once per DECLARATIVE_SCAN_INTERVAL_MS.
function scheduleDeclarativeScan() {
  declarativeScanDirty = true;
  if (declarativeScanScheduled) return;
  declarativeScanScheduled = true;
  const run = () => {
    declarativeScanScheduled = false;
    if (declarativeScanDirty) scanDeclarativeForms();
  };
  const wait = declarativeLastScan + DECLARATIVE_SCAN_INTERVAL_MS - DateNow();
  if (wait > 0) setTimeoutFn(run, wait);
  else queueGlobalTask(run);
}

function onDeclarativeMutations(records) {
  const count = records.length;
  for (let i = 0; i < count; i++) {
    const record = records[i];
    if (MutationRecordPrototypeGetType(record) === "attributes") {
      // Our own marks, and attributes no schema depends on (animations touch them often).
      const name = MutationRecordPrototypeGetAttributeName(record);
      if (name === FORM_ACTIVE_ATTRIBUTE || name === SUBMIT_ACTIVE_ATTRIBUTE) continue;
      if (name === "style" || name === "class") continue;
    }
    scheduleDeclarativeScan();
    // A running call whose form changed ends now, not at the next scan: Chromium cancels it
    // when the change happens, before an answer that settles in the same task is delivered.
    runningDeclarativeTools.forEach((run) => {
      const definition = declarativeDefinitions.get(run.form);
      const current = declarativeRecordOf(run.form);
      if (definition === undefined || current === null || !sameRecord(definition, current)) {
        definitionChangedUnder(run);
      }
    });
    return;
  }
}

// The form of a running call went away or changed. Chromium lets a call whose form changed
// during its submit event's dispatch (or that dispatch's microtasks) wait for its
// respondWith() answer; any other change cancels it.
function definitionChangedUnder(run) {
  if (run.handlingSubmit || run.finished) return;
  if (run.inSubmitDispatch || run.outlivesDefinition) {
    run.outlivesDefinition = true;
    return;
  }
  finishDeclarativeRun(run, null, false, DECLARATIVE_MESSAGES.definitionUpdated, "cancelled");
}

// Native mode: Chromium derives its form tools itself. A DOM change counts as a change of
// the state version (CHANNEL.md) only when the forms' records changed — the polyfill's
// reading of them, which is Chromium's (the differential corpus in tests/forms/).
let nativeFormsObserver = null;
let nativeFormsDirty = true;
let nativeFormsFingerprint = "";

function checkNativeForms() {
  if (MutationObserverPrototypeTakeRecords(nativeFormsObserver).length > 0) nativeFormsDirty = true;
  if (!nativeFormsDirty) return;
  nativeFormsDirty = false;
  const forms = formsOfDocument("form[toolname]");
  const parts = safeList();
  withControlsIndex(() => {
    for (let i = 0; i < forms.length; i++) {
      const record = declarativeRecordOf(forms[i]);
      if (record !== null) ArrayPrototypePush(parts, JSONStringify(record));
    }
  });
  const fingerprint = ArrayPrototypeJoin(parts, "\n");
  if (fingerprint === nativeFormsFingerprint) return;
  nativeFormsFingerprint = fingerprint;
  harnessHooks.stateChanged();
}

// Before the tool map is read (getTools, executeTool, the harness's `list`): apply DOM changes
// not scanned yet, the way Chromium's registration task runs before a later task.
function flushDeclarativeScan() {
  if (nativeFormsObserver !== null) checkNativeForms();
  if (declarativeObserver === null) return;
  onDeclarativeMutations(MutationObserverPrototypeTakeRecords(declarativeObserver));
  if (declarativeScanDirty) scanDeclarativeForms();
}

// registerTool() was refused because a form holds the name: the harness hears of it.
function noteScriptToolRefused(toolName) {
  const holder = modelContextToolMap.get(toolName);
  if (holder !== undefined && holder.source === "declarative") {
    scriptRefusals.set(toolName, formDescription(holder.form));
    harnessHooks.toolsChanged();
  }
}

// -------------------------------------------------------------------------------------------
// The polyfill: executing a declarative tool
// -------------------------------------------------------------------------------------------

function setRunMarkers(run, on) {
  const mark = (element, name) => {
    if (element === null) return;
    if (on) ElementPrototypeSetAttribute(element, name, "");
    else ElementPrototypeRemoveAttribute(element, name);
  };
  mark(run.form, FORM_ACTIVE_ATTRIBUTE);
  mark(run.submitButton, SUBMIT_ACTIVE_ATTRIBUTE);
}

// CallDoneCallback: the run's one result. `outcome` is "cancelled" or the submission details.
function finishDeclarativeRun(run, result, success, message, outcome, refusal) {
  if (run.finished) return;
  run.finished = true;
  if (runningDeclarativeTools.get(run.form) === run) {
    runningDeclarativeTools.delete(run.form);
    setRunMarkers(run, false); // a later call on the same form keeps them
  }
  if (!localPendingToolExecutions.has(run.uuid)) return; // cancelled through its signal
  localPendingToolExecutions.delete(run.uuid);
  // A submission that goes ahead may take the document with it before the result gets out
  // (the answer to the harness is a task later, and an about:blank or fast response commits
  // first): the harness hears of it now.
  if (success && isObject(outcome)) reportSubmission(run.name, run.callId, outcome);
  run.completionSteps(result, success, message, undefined, outcome, refusal);
}

function reportSubmission(toolName, callId, details) {
  declarativeHooks.send(
    '"type":"submitted","name":' +
      JSONStringify(toolName) +
      ',"callId":' +
      (callId === null ? "null" : JSONStringify(callId)) +
      ',"submitted":' +
      JSONStringify(details),
  );
}

function fireDeclarativeToolActivated(toolName, callId) {
  if (modelContextObject !== null) {
    fireEvent(modelContextObject, createToolEvent(ToolActivatedEvent, "toolactivated", toolName));
  }
  harnessHooks.toolEvent("toolactivated", toolName, callId);
}

// The tool execute steps of a declarative tool (the imperative ones are in model_context.js).
function runDeclarativeTool(definition, inputObject, uuid, callId, signal, completionSteps) {
  const form = definition.form;
  const model = formModelOf(form);
  // `toolactivated` comes once this task (fill, submit) is over and its microtasks ran, as
  // Chromium's does where the harness listens to it; before any result, which is a task later.
  let waitsForReview = false;
  queueGlobalTask(() => {
    fireDeclarativeToolActivated(definition.name, callId);
    if (waitsForReview && runningDeclarativeTools.has(form)) sendReview(definition.name, callId, model);
  });
  let error = null;
  if (!definition.autosubmit && model.submitButton === null) error = formRefusal(null, null, DECLARATIVE_MESSAGES.noSubmitButton);
  else error = fillFormControls(model, inputObject, callId !== null); // the harness's call: exact
  if (error !== null) {
    localPendingToolExecutions.delete(uuid);
    completionSteps(null, false, error.message, undefined, undefined, error.kind === null ? undefined : error);
    return;
  }
  const run = {
    __proto__: null,
    form,
    name: definition.name,
    uuid,
    callId,
    submitButton: model.submitButton,
    completionSteps,
    finished: false,
    handlingSubmit: false,
    submitEvent: null,
    inSubmitDispatch: false,
    outlivesDefinition: false,
  };
  runningDeclarativeTools.set(form, run);
  setRunMarkers(run, true);
  EventTargetPrototypeAddEventListener(signal, "abort", () => finishDeclarativeRun(run, null, false, null, undefined), {
    __proto__: null,
    once: true,
  });
  if (!definition.autosubmit) {
    // Wait for the user: focus the submit button; the harness is asked for the review.
    HTMLElementPrototypeFocus(model.submitButton);
    waitsForReview = true;
    return;
  }
  submitDeclarativeRun(run, model.submitButton);
}

// Submits the running form as Chromium's PrepareForSubmission does: interactive validation,
// then the (trusted) submit event, which the capture listener marks as agent-invoked.
function submitDeclarativeRun(run, submitter) {
  run.handlingSubmit = true;
  run.submitEvent = null;
  duringSubmitDispatch(run);
  try {
    if (submitter !== null) HTMLFormElementPrototypeRequestSubmit(run.form, submitter);
    else HTMLFormElementPrototypeRequestSubmit(run.form);
  } catch (error) {
    // The submit button went away (or stopped being one) since the form was filled.
    finishDeclarativeRun(run, null, false, errorMessageOf(error), undefined);
    return;
  } finally {
    run.handlingSubmit = false;
  }
  if (run.finished) return;
  if (run.submitEvent === null) {
    const message = validationFailureMessage(run.form);
    finishDeclarativeRun(run, null, false, message, undefined, formRefusal("validation", null, message));
    return;
  }
  afterSubmitDispatch(run);
}

// How many microtask hops the window after a submit event stays open: a page's chain of
// microtasks (awaits in an async submit handler) that started during the dispatch runs one
// level per hop of ours.
const SUBMIT_DISPATCH_MICROTASK_HOPS = 32;

// From the submit event's dispatch to the end of the microtask checkpoint that follows it:
// DOM changes made then do not cancel the call (Chromium dispatches from the event loop, so
// the handlers' microtasks run inside its dispatch; ours is called from script, so they run
// after it). A later task is outside the window. Changes not scanned yet are scanned before
// the window closes, so they count as made during it.
function duringSubmitDispatch(run) {
  run.inSubmitDispatch = true;
  let hops = 0;
  const hop = () => {
    if (++hops < SUBMIT_DISPATCH_MICROTASK_HOPS) {
      queueMicrotaskFn(hop);
      return;
    }
    flushDeclarativeScan();
    run.inSubmitDispatch = false;
  };
  queueMicrotaskFn(hop);
}

// After the submit event was dispatched: the submission goes ahead (null), respondWith()
// gives the result, or preventDefault() alone is the page's error.
function afterSubmitDispatch(run) {
  const event = run.submitEvent;
  run.submitEvent = null;
  if (run.finished || event === null) return;
  if (!EventPrototypeGetDefaultPrevented(event)) {
    finishDeclarativeRun(run, null, true, null, submissionDetails(run.form, SubmitEventPrototypeGetSubmitter(event)));
    return;
  }
  const promise = respondWithPromises.get(event);
  if (promise === undefined) {
    finishDeclarativeRun(run, null, false, DECLARATIVE_MESSAGES.preventedWithoutResponse, undefined);
    return;
  }
  safeThen(
    promise,
    (value) => {
      let text = null;
      if (isObject(value)) {
        try {
          text = JSONStringify(value);
        } catch {
          finishDeclarativeRun(run, null, false, DECLARATIVE_MESSAGES.respondWithUnserializable, undefined);
          return;
        }
        if (text === undefined) text = "undefined";
      } else {
        try {
          text = `${value}`;
        } catch {
          text = null;
        }
      }
      finishDeclarativeRun(run, text, true, null, undefined);
    },
    (reason) => {
      ConsoleWarn(`Uncaught (in promise) ${describeForConsole(reason)}`);
      finishDeclarativeRun(run, null, false, DECLARATIVE_MESSAGES.respondWithRejected, undefined);
    },
  );
}

// A submit event of a form whose tool is running is agent-invoked, and is the run's
// submission. Chromium marks it before any listener runs, wherever the form lives; the
// polyfill cannot mark it before dispatch, and no one listener of its own comes first
// everywhere: a form's submit event does not leave its tree (it is not composed), so a
// page's capture listener on a shadow root the parser made, added before the polyfill found
// the root, runs before the polyfill's. So the event is claimed by whatever meets it first
// during its dispatch: the polyfill's capture listeners (the window's, each root's), or the
// page reading `agentInvoked`, calling `respondWith()` or stopping the event's propagation
// (which would hide it from the polyfill's listener after its own).
function claimSubmitEvent(event) {
  const run = runningDeclarativeTools.get(EventPrototypeGetTarget(event));
  if (run === undefined || run.submitEvent === event) return;
  agentInvokedEvents.set(event, true);
  run.submitEvent = event;
  // A submission the user (or the page) started: look at the outcome once it was dispatched.
  if (!run.handlingSubmit) {
    duringSubmitDispatch(run);
    queueGlobalTask(() => afterSubmitDispatch(run));
  }
}

// The page looks at a submit event: one being dispatched is claimed first, if it is a run's.
function claimIfDispatching(event) {
  if (EventPrototypeGetEventPhase(event) !== 0 && EventPrototypeGetType(event) === "submit") {
    claimSubmitEvent(event);
  }
}

// Window, capture phase, registered before any page script (and each shadow root's, once
// found): every submit of a form whose tool is running passes here.
function onSubmitCapture(event) {
  claimSubmitEvent(event);
}

// stopPropagation(), stopImmediatePropagation() and `cancelBubble = true`, wrapped: a submit
// event a page listener stops is claimed first.
function installPropagationClaims() {
  const proto = EventCtor.prototype;
  const stopping = {
    stopPropagation() {
      const result = ReflectApply(EventPrototypeStopPropagationMethod, this, arguments);
      claimIfDispatching(this);
      return result;
    },
    stopImmediatePropagation() {
      const result = ReflectApply(EventPrototypeStopImmediatePropagationMethod, this, arguments);
      claimIfDispatching(this);
      return result;
    },
    set cancelBubble(value) {
      ReflectApply(EventPrototypeCancelBubbleDescriptor.set, this, [value]);
      if (value) claimIfDispatching(this);
    },
  };
  defineMethod(proto, "stopPropagation", stopping.stopPropagation);
  defineMethod(proto, "stopImmediatePropagation", stopping.stopImmediatePropagation);
  ObjectDefineProperty(proto, "cancelBubble", {
    __proto__: null,
    get: EventPrototypeCancelBubbleDescriptor.get,
    set: readAsNative(ObjectGetOwnPropertyDescriptor(stopping, "cancelBubble").set, "set cancelBubble"),
    enumerable: EventPrototypeCancelBubbleDescriptor.enumerable,
    configurable: true,
  });
}

function onResetCapture(event) {
  const run = runningDeclarativeTools.get(EventPrototypeGetTarget(event));
  if (run === undefined) return;
  queueGlobalTask(() => {
    if (!EventPrototypeGetDefaultPrevented(event)) {
      finishDeclarativeRun(run, null, false, DECLARATIVE_MESSAGES.reset, "cancelled");
    }
  });
}

// form.submit() from the page while the tool runs: the submission goes ahead, the result is null.
const polyfilledFormSubmit = {
  submit() {
    const result = ReflectApply(HTMLFormElementPrototypeSubmitMethod, this, []);
    const run = runningDeclarativeTools.get(this);
    if (run !== undefined) finishDeclarativeRun(run, null, true, null, submissionDetails(this, null));
    return result;
  },
}.submit;

// SubmitEvent.agentInvoked and respondWith(), for Chromium without its own.
const polyfilledSubmitEventMembers = {
  get agentInvoked() {
    SubmitEventPrototypeGetSubmitter(this); // "Illegal invocation" for anything else
    claimIfDispatching(this);
    return agentInvokedEvents.get(this) === true;
  },
  respondWith(promise) {
    SubmitEventPrototypeGetSubmitter(this);
    const fail = (detail) =>
      new DOMExceptionCtor(`Failed to execute 'respondWith' on 'SubmitEvent': ${detail}`, "InvalidStateError");
    if (arguments.length < 1) {
      throw new TypeErrorCtor(
        "Failed to execute 'respondWith' on 'SubmitEvent': 1 argument required, but only 0 present.",
      );
    }
    claimIfDispatching(this);
    if (agentInvokedEvents.get(this) !== true) {
      throw fail("You can only call respondWith on an submit event that has agentInvoked == true.");
    }
    if (!EventPrototypeGetDefaultPrevented(this)) {
      throw fail("To call respondWith, you must first call preventDefault.");
    }
    if (EventPrototypeGetEventPhase(this) === 0) {
      throw fail("To call respondWith, the event must be currently being dispatched.");
    }
    // Web IDL's promise conversion, kept in a SafePromise (the page's promise is not touched).
    respondWithPromises.set(this, new SafePromise((resolve) => resolve(promise)));
  },
};

// `new SubmitEvent(type, {agentInvoked: true})`: the same constructor otherwise.
const PolyfilledSubmitEvent = function SubmitEvent(type, eventInitDict = undefined) {
  if (new.target === undefined) {
    throw new TypeErrorCtor(
      "Failed to construct 'SubmitEvent': Please use the 'new' operator, this DOM object constructor cannot be called as a function.",
    );
  }
  const target = new.target === PolyfilledSubmitEvent ? SubmitEventCtor : new.target;
  const event = ReflectConstruct(SubmitEventCtor, arguments, target);
  if (isObject(eventInitDict) && eventInitDict.agentInvoked) agentInvokedEvents.set(event, true);
  return event;
};

function installSubmitEventMembers() {
  const proto = SubmitEventCtor.prototype;
  const getter = ObjectGetOwnPropertyDescriptor(polyfilledSubmitEventMembers, "agentInvoked").get;
  ObjectDefineProperty(proto, "agentInvoked", {
    __proto__: null,
    get: getter,
    enumerable: true,
    configurable: true,
  });
  readAccessorsAsNative(proto, "agentInvoked");
  defineMethod(proto, "respondWith", polyfilledSubmitEventMembers.respondWith);
  ObjectDefineProperty(PolyfilledSubmitEvent, "prototype", {
    __proto__: null,
    value: proto,
    writable: false,
    enumerable: false,
    configurable: false,
  });
  ObjectSetPrototypeOf(PolyfilledSubmitEvent, EventCtor);
  readAsNative(PolyfilledSubmitEvent, "SubmitEvent");
  ObjectDefineProperty(proto, "constructor", {
    __proto__: null,
    value: PolyfilledSubmitEvent,
    writable: true,
    enumerable: false,
    configurable: true,
  });
  exposeInterface("SubmitEvent", PolyfilledSubmitEvent);
  defineMethod(HTMLFormElement.prototype, "submit", polyfilledFormSubmit);
}

// -------------------------------------------------------------------------------------------
// The harness's side: review of forms without toolautosubmit, and refusals
// -------------------------------------------------------------------------------------------

function sendReview(toolName, callId, model) {
  declarativeHooks.send(
    '"type":"review","name":' +
      JSONStringify(toolName) +
      ',"callId":' +
      (callId === null ? "null" : JSONStringify(callId)) +
      ',"values":' +
      JSONStringify(currentValues(model)),
  );
}

function refusedText(list) {
  const texts = safeList();
  for (let i = 0; i < list.length; i++) ArrayPrototypePush(texts, JSONStringify(list[i]));
  return "[" + ArrayPrototypeJoin(texts, ",") + "]";
}

// Declarations refused over a name another tool of this document holds (the catalog warns).
let declarativeRefusedText = () => "[]";

// The `review` op: the person reviewing the form submits it (after changing `values`, if
// given). The polyfill looks the run up by callId (the harness's) or tool name; in native
// mode, the form that matches :tool-form-active.
let reviewDeclarativeTool = () => harnessError("NotFoundError", "No form is waiting for a review.");

function reviewAnswer(submitted, error) {
  return { __proto__: null, submitted, error };
}

// What the person reviewing the form changed: filled exactly, as the harness's calls are.
// Returns the refusal's message, or null.
function fillReviewedValues(form, values) {
  if (values === null) return null;
  return fillFormControls(formModelOf(form), values, true)?.message ?? null;
}

// The `check` op (native mode), for `input` in the first form of that name: `problem`, the
// message the harness's exact fill gives (null: none), `parameter`, the one it is about, and
// `refused`, the parameter whose
// value Chromium's fill cannot hold (null: none). Chromium's own fill runs the harness's calls
// there, and nothing hooks it: the harness asks first. A value Chromium refuses is left to
// Chromium, which refuses it with its own message; asked again after such an error (the form
// is as it was: a refused fill changes nothing), `refused` tells the harness that it was one.
function exactFillCheck(toolName, input) {
  const answer = { __proto__: null, problem: null, parameter: null, refused: null };
  const form = candidateFormNamed(toolName, null);
  if (form === null) return answer;
  const model = formModelOf(form);
  const keys = ObjectKeys(input);
  const refused = fillRefusal(model, input, keys);
  if (refused !== null) {
    if (refused.kind === "fill") answer.refused = refused.parameter;
    return answer;
  }
  const changed = changedValue(model, input, keys);
  if (changed !== null) {
    answer.problem = changed.message;
    answer.parameter = changed.parameter;
  }
  return answer;
}

function installDeclarativePolyfill() {
  installSubmitEventMembers();
  if (documentDomainEnabled) return; // Chromium makes no tools of such a document's forms
  installPropagationClaims();
  listenOnWindow("submit", onSubmitCapture, true);
  listenOnWindow("reset", onResetCapture, true);
  ArrayPrototypePush(shadowRootListeners, { __proto__: null, type: "submit", listener: onSubmitCapture });
  ArrayPrototypePush(shadowRootListeners, { __proto__: null, type: "reset", listener: onResetCapture });
  declarativeObserver = new MutationObserverCtor(onDeclarativeMutations);
  const observed = {
    __proto__: null,
    subtree: true,
    childList: true,
    attributes: true,
    characterData: true,
  };
  MutationObserverPrototypeObserve(declarativeObserver, ownDocument, observed);
  ArrayPrototypePush(shadowRootObservers, { __proto__: null, observer: declarativeObserver, options: observed });
  installShadowRootHook();
  // Once the document may use the feature: what it has by then (all of it, for a reused
  // window's newer document, realm.js) is announced by no mutation.
  whenToolsAllowed(() => {
    declarativeAllowed = true;
    if (NodePrototypeGetFirstChild(ownDocument) !== null) scheduleDeclarativeScan();
  });
  declarativeRefusedText = () => {
    const all = safeList();
    for (let i = 0; i < declarativeRefusals.length; i++) ArrayPrototypePush(all, declarativeRefusals[i]);
    scriptRefusals.forEach((where, name) =>
      ArrayPrototypePush(all, { __proto__: null, name, source: "script", holder: "declarative", where }),
    );
    return refusedText(all);
  };
  reviewDeclarativeTool = (toolName, callId, values) => {
    flushDeclarativeScan();
    let run;
    runningDeclarativeTools.forEach((candidate) => {
      if (candidate.name === toolName && (callId === null || candidate.callId === callId)) run = candidate;
    });
    if (run === undefined) return harnessError("NotFoundError", `No form of tool "${toolName}" is waiting for a review.`);
    const error = fillReviewedValues(run.form, values);
    if (error !== null) return reviewAnswer(false, error);
    submitDeclarativeRun(run, run.submitButton);
    return reviewAnswer(true, null);
  };
}

// -------------------------------------------------------------------------------------------
// Native mode: Chromium registers and runs the forms; this reports to the harness what CDP
// does not say (a review is due, a submission navigates, names refused) and submits a form
// the harness's reviewer accepted.
// -------------------------------------------------------------------------------------------

// The names Chromium's forms hold: Chromium registers a form in a task after the DOM change,
// so a script that registers a tool of the same name while the page parses gets it first.
// Followed with the same timing: a mutation, then a task.
const nativeDeclarativeNames = new SafeSet();
const nativeScriptRefusals = new SafeMap(); // name → the form, for registerTool() refused over it
let nativeNamesQueued = false;

function updateNativeDeclarativeNames() {
  nativeNamesQueued = false;
  nativeDeclarativeNames.clear();
  const forms = formsOfDocument("form[toolname][tooldescription]");
  const count = forms.length;
  for (let i = 0; i < count; i++) nativeDeclarativeNames.add(toolNameOfForm(forms[i]));
  nativeScriptRefusals.forEach((form, name) => {
    if (!nativeDeclarativeNames.has(name)) nativeScriptRefusals.delete(name);
  });
}

// Whether a form holds `name` in Chromium's map (the native layer refuses script tools over
// it, as Chromium does); the refusal is remembered for the catalog's warning.
function declarativeNameInUse(name) {
  if (!nativeDeclarativeNames.has(name)) return false;
  const form = candidateFormNamed(name, null);
  if (form !== null) nativeScriptRefusals.set(name, form);
  return true;
}

function nativeRefusals(backend) {
  const refusals = safeList();
  nativeScriptRefusals.forEach((form, name) =>
    ArrayPrototypePush(refusals, {
      __proto__: null,
      name,
      source: "script",
      holder: "declarative",
      where: formDescription(form),
    }),
  );
  const scriptNames = new SafeSet();
  backend.forEachTool((definition) => {
    if (definition.source === "script") scriptNames.add(definition.name);
  });
  const seen = new SafeSet();
  const forms = formsOfDocument("form[toolname][tooldescription]");
  const count = forms.length;
  for (let i = 0; i < count; i++) {
    const name = toolNameOfForm(forms[i]);
    if (!isValidToolName(name)) continue;
    const holder = scriptNames.has(name) ? "script" : seen.has(name) ? "declarative" : null;
    seen.add(name);
    if (holder !== null) {
      ArrayPrototypePush(refusals, {
        __proto__: null,
        name,
        source: "declarative",
        holder,
        where: formDescription(forms[i]),
      });
    }
  }
  return refusals;
}

// The definitions forEachDeclarativeExtra last made of the document's forms (tree order),
// kept until a DOM change may have changed one (nativeExtrasObserver): a listing then reads
// no form again, and an unchanged form keeps its definition, so its snapshot text too.
let nativeExtras = null;
let nativeExtrasObserver = null;

// Snapshot extras for the forms Chromium registers (CDP gives no title): one per name.
function forEachDeclarativeExtra(skip, callback) {
  // Changes not yet delivered to the observer (made in this very task) count as well.
  if (nativeExtrasObserver === null || MutationObserverPrototypeTakeRecords(nativeExtrasObserver).length > 0) {
    nativeExtras = null;
  }
  if (nativeExtras === null) {
    const definitions = safeList();
    const forms = formsOfDocument("form[toolname][tooldescription]");
    const count = forms.length;
    withControlsIndex(() => {
      for (let i = 0; i < count; i++) {
        const record = declarativeRecordOf(forms[i]);
        if (record === null || !isValidToolName(record.name)) continue;
        ArrayPrototypePush(definitions, createDeclarativeDefinition(forms[i], record));
      }
    });
    nativeExtras = definitions;
  }
  const extras = nativeExtras;
  const seen = new SafeSet();
  for (let i = 0; i < extras.length; i++) {
    const definition = extras[i];
    if (seen.has(definition.name) || skip(definition.name)) continue;
    seen.add(definition.name);
    callback(definition);
  }
}

function installDeclarativeNativeHelpers(backend) {
  const observer = new MutationObserverCtor(() => {
    if (nativeNamesQueued) return;
    nativeNamesQueued = true;
    queueGlobalTask(updateNativeDeclarativeNames);
  });
  const observed = {
    __proto__: null,
    subtree: true,
    childList: true,
    attributes: true,
    attributeFilter: ["toolname", "tooldescription"],
  };
  MutationObserverPrototypeObserve(observer, ownDocument, observed);
  ArrayPrototypePush(shadowRootObservers, { __proto__: null, observer, options: observed });
  nativeFormsObserver = new MutationObserverCtor(() => {
    nativeFormsDirty = true;
  });
  const allChanges = { __proto__: null, subtree: true, childList: true, attributes: true, characterData: true };
  MutationObserverPrototypeObserve(nativeFormsObserver, ownDocument, allChanges);
  ArrayPrototypePush(shadowRootObservers, { __proto__: null, observer: nativeFormsObserver, options: allChanges });
  // Any change of the DOM may change a form's extras (its attributes, controls, labels).
  nativeExtrasObserver = new MutationObserverCtor(() => {
    nativeExtras = null;
  });
  MutationObserverPrototypeObserve(nativeExtrasObserver, ownDocument, allChanges);
  ArrayPrototypePush(shadowRootObservers, { __proto__: null, observer: nativeExtrasObserver, options: allChanges });
  // A document with content before its state starts (realm.js): read its forms now.
  if (NodePrototypeGetFirstChild(ownDocument) !== null) {
    nativeNamesQueued = true;
    queueGlobalTask(updateNativeDeclarativeNames);
  }
  const agentInvoked = (event) =>
    NativeSubmitEventPrototypeGetAgentInvoked !== null && NativeSubmitEventPrototypeGetAgentInvoked(event) === true;
  // An agent-invoked submission that goes ahead: reported at its `formdata` event (fired once
  // the submit event was not cancelled, before the navigation starts), so the report leaves
  // before the document can go; a dialog submission has no form data: a task later.
  const submitting = new SafeWeakMap(); // form → {event, toolName, submitter, reported}
  const onSubmit = (event) => {
    // Only the browser's own agent-invoked submission: a page can construct a SubmitEvent
    // with {agentInvoked: true}, but not a trusted one, and dispatching it submits nothing.
    if (!agentInvoked(event) || !EventGetIsTrusted(event)) return;
    const form = EventPrototypeGetTarget(event);
    // The tool's name is read now, before the page's submit listeners run: a listener may
    // rename the form.
    const pending = {
      __proto__: null,
      event,
      toolName: toolNameOfForm(form),
      submitter: SubmitEventPrototypeGetSubmitter(event),
      reported: false,
    };
    submitting.set(form, pending);
    queueGlobalTask(() => {
      if (submitting.get(form) === pending) submitting.delete(form);
      if (pending.reported || EventPrototypeGetDefaultPrevented(event)) return;
      reportSubmission(pending.toolName, null, submissionDetails(form, pending.submitter));
    });
  };
  const onFormData = (event) => {
    const form = EventPrototypeGetTarget(event);
    const pending = submitting.get(form);
    if (pending === undefined || pending.reported) return;
    // `new FormData(form)` in a submit handler fires one too: the submission's own comes
    // after the submit event's dispatch, and only when it was not cancelled.
    if (EventPrototypeGetEventPhase(pending.event) !== 0 || EventPrototypeGetDefaultPrevented(pending.event)) return;
    pending.reported = true;
    submitting.delete(form);
    reportSubmission(pending.toolName, null, submissionDetails(form, pending.submitter));
  };
  listenOnWindow("submit", onSubmit, true);
  listenOnWindow("formdata", onFormData, true);
  ArrayPrototypePush(shadowRootListeners, { __proto__: null, type: "submit", listener: onSubmit });
  ArrayPrototypePush(shadowRootListeners, { __proto__: null, type: "formdata", listener: onFormData });
  installShadowRootHook();
  // form.submit() from a submit handler ends a running call with null, and sends no submit event.
  defineMethod(
    HTMLFormElement.prototype,
    "submit",
    {
      submit() {
        const running = NodePrototypeGetNodeType(this) === 1 && ElementPrototypeMatches(this, "form:tool-form-active");
        if (running) {
          // Reported here, before its `formdata` event could report it again.
          const pending = submitting.get(this);
          if (pending !== undefined) pending.reported = true;
          submitting.delete(this);
          reportSubmission(toolNameOfForm(this), null, submissionDetails(this, null));
        }
        return ReflectApply(HTMLFormElementPrototypeSubmitMethod, this, []);
      },
    }.submit,
  );
  if (nativeToolEventGetToolName !== null) {
    backend.whenModelContext((modelContext) => {
      EventTargetPrototypeAddEventListener(modelContext, "toolactivated", (event) => {
        const toolName = nativeToolEventGetToolName(event);
        const form = candidateFormNamed(toolName, ":tool-form-active");
        if (form === null || ElementPrototypeHasAttribute(form, "toolautosubmit")) return;
        sendReview(toolName, null, formModelOf(form));
      });
    });
  }
  declarativeRefusedText = () => refusedText(nativeRefusals(backend));
  reviewDeclarativeTool = (toolName, callId, values) => {
    const form = candidateFormNamed(toolName, ":tool-form-active");
    if (form === null) return harnessError("NotFoundError", `No form of tool "${toolName}" is waiting for a review.`);
    const error = fillReviewedValues(form, values);
    if (error !== null) return reviewAnswer(false, error);
    let submitter = null;
    const controls = listedControlsOf(form);
    for (let i = 0; i < controls.length && submitter === null; i++) {
      if (ElementPrototypeMatches(controls[i], ":tool-submit-active")) submitter = controls[i];
    }
    try {
      if (submitter !== null) HTMLFormElementPrototypeRequestSubmit(form, submitter);
      else HTMLFormElementPrototypeRequestSubmit(form);
    } catch (error) {
      return reviewAnswer(false, errorMessageOf(error));
    }
    return reviewAnswer(true, null);
  };
}

// Start-up (channel.js): the polyfill registers forms itself; on Chromium's own WebMCP the
// helpers above report what the harness needs.
function installDeclarativeTools(backend) {
  if (backend.native) installDeclarativeNativeHelpers(backend);
  else installDeclarativePolyfill();
}
