// Seed 002's declarative dialect: `tool-name` on <form>, <a> and <button> (CHANNEL.md,
// "Declarations").
//
// This file only *reads* the DOM and reports a plain description of every element that
// carries `tool-name`: its tool-* attributes, its target (action/method/enctype, href,
// formaction/formmethod/formenctype) and, for a form (or a button's form owner), its
// controls with their type, name, constraint attributes, options, fieldset nesting and
// label text. The schema synthesis, the submission and the ordering guarantees are the
// harness's (harness/declarative/synthesis.py): all policy stays in Python.
//
// Reports go out as `declarations` messages, re-sent from a MutationObserver, coalesced
// (quiet for SEED_QUIET_MS, or at most every SEED_MAX_WAIT_MS while the page keeps
// changing) and only when the description actually changed, so a page that flaps does not
// flood the harness. The entry point's `list` answer carries the same description, and the
// `declarations` op reads it afresh with the controls' current values (for a submission).

const SEED_SELECTOR = "form[tool-name], a[tool-name], button[tool-name]";
const SEED_QUIET_MS = 40;
const SEED_MAX_WAIT_MS = 250;
// Bounds on what one report may carry: a hostile page must not make it unbounded.
const SEED_MAX_ELEMENTS = 256;
const SEED_MAX_CONTROLS = 512;
const SEED_MAX_OPTIONS = 1024;
const SEED_MAX_TEXT = 2048;
const SEED_MAX_TEXT_NODES = 4096;

const SEED_TOOL_ATTRIBUTES = [
  "tool-name",
  "tool-title",
  "tool-description",
  "tool-openworld",
  "tool-readonly",
  "tool-idempotent",
  "tool-destructive",
];
const SEED_CONTROL_ATTRIBUTES = [
  "required",
  "pattern",
  "minlength",
  "maxlength",
  "min",
  "max",
  "step",
  "multiple",
  "readonly",
  "size",
  "value",
  "checked",
  "tool-param-title",
  "tool-param-description",
  "tool-param-type",
  "tool-elicit",
];
const SEED_FIELDSET_ATTRIBUTES = ["tool-param-title", "tool-param-description"];

// A stable number per element for the document's lifetime: the harness tells a re-sent
// declaration from a new one, and refuses the later of two elements with one name.
const seedElementIds = new SafeWeakMap();
let seedNextElementId = 1;

function seedElementId(element) {
  let id = seedElementIds.get(element);
  if (id === undefined) {
    id = seedNextElementId++;
    seedElementIds.set(element, id);
  }
  return id;
}

function seedAttributes(element, names) {
  const found = { __proto__: null };
  for (let i = 0; i < names.length; i++) {
    const value = ElementPrototypeGetAttribute(element, names[i]);
    if (value !== null) found[names[i]] = seedClip(value);
  }
  return found;
}

function seedClip(text) {
  return text.length > SEED_MAX_TEXT ? StringPrototypeSlice(text, 0, SEED_MAX_TEXT) : text;
}

function seedIsSpace(code) {
  return code === 32 || code === 9 || code === 10 || code === 12 || code === 13;
}

// Runs of ASCII whitespace become one space, and the ends are trimmed (no RegExp: the page
// may patch RegExp.prototype).
function seedCollapse(text) {
  let out = "";
  let pending = false;
  for (let i = 0; i < text.length; i++) {
    const code = StringPrototypeCharCodeAt(text, i);
    if (seedIsSpace(code)) {
      pending = out.length > 0;
      continue;
    }
    if (pending) out += " ";
    pending = false;
    out += StringPrototypeSlice(text, i, i + 1);
    if (out.length >= SEED_MAX_TEXT) break;
  }
  return out;
}

// Subtrees whose text is not part of the label or link text around them.
const SEED_TEXT_SKIPPED = new SafeSet();
SEED_TEXT_SKIPPED.add("select");
SEED_TEXT_SKIPPED.add("textarea");
SEED_TEXT_SKIPPED.add("datalist");
SEED_TEXT_SKIPPED.add("option");
SEED_TEXT_SKIPPED.add("script");
SEED_TEXT_SKIPPED.add("style");
SEED_TEXT_SKIPPED.add("template");

// The text a person reads in `root`, without the text of controls inside it.
function seedText(root) {
  let text = "";
  let seen = 0;
  let node = NodePrototypeGetFirstChild(root);
  while (node !== null && seen < SEED_MAX_TEXT_NODES && text.length < SEED_MAX_TEXT) {
    seen++;
    const type = NodePrototypeGetNodeType(node);
    let descend = false;
    if (type === 3) {
      text += NodePrototypeGetNodeValue(node);
    } else if (type === 1) {
      descend = !SEED_TEXT_SKIPPED.has(ElementPrototypeGetLocalName(node));
      if (!descend) text += " ";
    }
    const child = descend ? NodePrototypeGetFirstChild(node) : null;
    if (child !== null) {
      node = child;
      continue;
    }
    while (node !== null && node !== root && NodePrototypeGetNextSibling(node) === null) {
      node = NodePrototypeGetParentNode(node);
    }
    node = node === null || node === root ? null : NodePrototypeGetNextSibling(node);
  }
  return seedCollapse(text);
}

function seedLabels(list) {
  if (list === null) return "";
  const parts = safeList();
  const length = NodeListPrototypeGetLength(list);
  for (let i = 0; i < length && i < 8; i++) {
    const text = seedText(NodeListPrototypeItem(list, i));
    if (text !== "") ArrayPrototypePush(parts, text);
  }
  return ArrayPrototypeJoin(parts, " ");
}

// An absolute URL for an attribute's value, resolved against the document's base URL.
function seedResolve(raw) {
  try {
    return URLPrototypeGetHref(new URLCtor(raw, NodePrototypeGetBaseURI(ownDocument)));
  } catch {
    return null;
  }
}

// The innermost-last list of named fieldsets (of `form`) around `control`, as indices into
// `fieldsets` (which this fills, once per fieldset element).
function seedFieldsetChain(control, form, fieldsets, fieldsetIndex) {
  const chain = safeList();
  let node = NodePrototypeGetParentNode(control);
  for (let depth = 0; node !== null && node !== form && depth < 64; depth++) {
    if (NodePrototypeGetNodeType(node) === 1 && ElementPrototypeGetLocalName(node) === "fieldset") {
      const name = ElementPrototypeGetAttribute(node, "name");
      if (name !== null && name !== "" && HTMLFieldSetElementPrototypeGetForm(node) === form) {
        let index = fieldsetIndex.get(node);
        if (index === undefined) {
          index = fieldsets.length;
          fieldsetIndex.set(node, index);
          let legend = "";
          let child = NodePrototypeGetFirstChild(node);
          while (child !== null) {
            if (NodePrototypeGetNodeType(child) === 1 && ElementPrototypeGetLocalName(child) === "legend") {
              legend = seedText(child);
              break;
            }
            child = NodePrototypeGetNextSibling(child);
          }
          ArrayPrototypePush(fieldsets, {
            __proto__: null,
            name: seedClip(name),
            legend,
            attributes: seedAttributes(node, SEED_FIELDSET_ATTRIBUTES),
          });
        }
        ArrayPrototypePush(chain, index);
      }
    }
    node = NodePrototypeGetParentNode(node);
  }
  // Collected innermost first; the harness wants the outermost first.
  const ordered = safeList();
  for (let i = chain.length - 1; i >= 0; i--) ArrayPrototypePush(ordered, chain[i]);
  return ordered;
}

function seedOptions(select, withValues) {
  const options = safeList();
  const collection = HTMLSelectElementPrototypeGetOptions(select);
  const length = HTMLCollectionPrototypeGetLength(collection);
  for (let i = 0; i < length && i < SEED_MAX_OPTIONS; i++) {
    const option = HTMLCollectionPrototypeItem(collection, i);
    const parent = NodePrototypeGetParentNode(option);
    const described = {
      __proto__: null,
      value: seedClip(HTMLOptionElementPrototypeGetValue(option)),
      label: seedClip(seedCollapse(HTMLOptionElementPrototypeGetLabel(option))),
      disabled: ElementPrototypeMatches(option, ":disabled"),
      defaultSelected: ElementPrototypeHasAttribute(option, "selected"),
      inGroup: parent !== null && NodePrototypeGetNodeType(parent) === 1 && ElementPrototypeGetLocalName(parent) === "optgroup",
    };
    if (withValues) described.selected = HTMLOptionElementPrototypeGetSelected(option);
    ArrayPrototypePush(options, described);
  }
  return options;
}

function seedControl(element, form, fieldsets, fieldsetIndex, withValues) {
  const tag = ElementPrototypeGetLocalName(element);
  let type = "";
  let labels = null;
  if (tag === "input") {
    type = HTMLInputElementPrototypeGetType(element);
    labels = HTMLInputElementPrototypeGetLabels(element);
  } else if (tag === "select") {
    labels = HTMLSelectElementPrototypeGetLabels(element);
  } else if (tag === "textarea") {
    labels = HTMLTextAreaElementPrototypeGetLabels(element);
  } else if (tag === "button") {
    type = HTMLButtonElementPrototypeGetType(element);
  }
  const control = {
    __proto__: null,
    tag,
    type,
    name: ElementPrototypeGetAttribute(element, "name"),
    disabled: ElementPrototypeMatches(element, ":disabled"),
    attributes: seedAttributes(element, SEED_CONTROL_ATTRIBUTES),
    fieldsets: seedFieldsetChain(element, form, fieldsets, fieldsetIndex),
    labels: seedLabels(labels),
  };
  if (tag === "select") control.options = seedOptions(element, withValues);
  if (withValues) {
    if (tag === "input" && type !== "file") {
      control.value = HTMLInputElementPrototypeGetValue(element);
      control.checked = HTMLInputElementPrototypeGetChecked(element);
    } else if (tag === "textarea") {
      control.value = HTMLTextAreaElementPrototypeGetValue(element);
    }
  }
  return control;
}

function seedForm(form, withValues) {
  const controls = safeList();
  const fieldsets = safeList();
  const fieldsetIndex = new SafeMap();
  const elements = HTMLFormElementPrototypeGetElements(form);
  const length = HTMLCollectionPrototypeGetLength(elements);
  for (let i = 0; i < length && i < SEED_MAX_CONTROLS; i++) {
    const element = HTMLCollectionPrototypeItem(elements, i);
    const tag = ElementPrototypeGetLocalName(element);
    if (tag === "fieldset" || tag === "object" || tag === "output") continue;
    ArrayPrototypePush(controls, seedControl(element, form, fieldsets, fieldsetIndex, withValues));
  }
  const action = ElementPrototypeGetAttribute(form, "action");
  return {
    __proto__: null,
    action: action === null || action === "" ? ownLocation.href : seedResolve(action),
    method: ElementPrototypeGetAttribute(form, "method"),
    enctype: ElementPrototypeGetAttribute(form, "enctype"),
    controls,
    fieldsets,
    defaultButton: seedDefaultButton(form, elements, length),
  };
}

// The form's default button (HTML: its first submit button in tree order), which a person's
// Enter activates. form.elements leaves out <input type=image>, so image buttons are looked
// for besides; the one that matches :default is it.
function seedDefaultButton(form, elements, length) {
  const candidates = safeList();
  for (let i = 0; i < length && i < SEED_MAX_CONTROLS; i++) {
    const element = HTMLCollectionPrototypeItem(elements, i);
    const tag = ElementPrototypeGetLocalName(element);
    const type =
      tag === "input" ? HTMLInputElementPrototypeGetType(element) : tag === "button" ? HTMLButtonElementPrototypeGetType(element) : "";
    if (type === "submit") {
      ArrayPrototypePush(candidates, element);
      break; // the first listed one; an image button may come before it
    }
  }
  const inputs = DocumentPrototypeQuerySelectorAll(ownDocument, "input");
  const count = NodeListPrototypeGetLength(inputs);
  for (let i = 0; i < count && candidates.length < SEED_MAX_CONTROLS; i++) {
    const input = NodeListPrototypeItem(inputs, i);
    if (HTMLInputElementPrototypeGetType(input) === "image" && HTMLInputElementPrototypeGetForm(input) === form) {
      ArrayPrototypePush(candidates, input);
    }
  }
  for (let i = 0; i < candidates.length; i++) {
    const button = candidates[i];
    if (!ElementPrototypeMatches(button, ":default")) continue;
    const tag = ElementPrototypeGetLocalName(button);
    return {
      __proto__: null,
      tag,
      type: tag === "input" ? HTMLInputElementPrototypeGetType(button) : HTMLButtonElementPrototypeGetType(button),
      name: ElementPrototypeGetAttribute(button, "name"),
      disabled: ElementPrototypeMatches(button, ":disabled"),
      attributes: seedAttributes(button, ["value"]),
    };
  }
  return null;
}

function seedDeclaration(element, index, withValues) {
  const kind = ElementPrototypeGetLocalName(element);
  const declaration = {
    __proto__: null,
    id: seedElementId(element),
    kind,
    index,
    htmlId: ElementPrototypeGetAttribute(element, "id"),
    attributes: seedAttributes(element, SEED_TOOL_ATTRIBUTES),
    text: kind === "form" ? "" : seedText(element),
    url: ownLocation.href,
    href: null,
    form: null,
    button: null,
  };
  if (kind === "form") {
    declaration.form = seedForm(element, withValues);
  } else if (kind === "a") {
    const href = ElementPrototypeGetAttribute(element, "href");
    declaration.href = href === null ? null : seedResolve(href);
  } else {
    const owner = HTMLButtonElementPrototypeGetForm(element);
    const formaction = ElementPrototypeGetAttribute(element, "formaction");
    declaration.button = {
      __proto__: null,
      type: HTMLButtonElementPrototypeGetType(element),
      name: ElementPrototypeGetAttribute(element, "name"),
      value: ElementPrototypeGetAttribute(element, "value"),
      formaction: formaction === null ? null : formaction === "" ? ownLocation.href : seedResolve(formaction),
      formmethod: ElementPrototypeGetAttribute(element, "formmethod"),
      formenctype: ElementPrototypeGetAttribute(element, "formenctype"),
    };
    if (owner !== null) declaration.form = seedForm(owner, withValues);
  }
  return declaration;
}

// Every tool-name element of this document, in tree order, as JSON text. None before the
// document may use the feature, and none ever in a document the permissions policy refuses
// it: the decision its script tools and forms follow (seedAllowed, below).
function seedDeclarationsText(withValues) {
  if (!isSecureContextAtStart || !seedAllowed) return "[]";
  const found = DocumentPrototypeQuerySelectorAll(ownDocument, SEED_SELECTOR);
  const length = NodeListPrototypeGetLength(found);
  const declarations = safeList();
  for (let i = 0; i < length && i < SEED_MAX_ELEMENTS; i++) {
    ArrayPrototypePush(declarations, seedDeclaration(NodeListPrototypeItem(found, i), i, withValues));
  }
  return JSONStringify(declarations);
}

// -------------------------------------------------------------------------------------------
// Following the DOM
// -------------------------------------------------------------------------------------------

let seedQuietTimer = null;
let seedMaxTimer = null;
let seedLastSent = "[]";
let seedSent = 0; // `declarations` messages sent: the version of what the harness was told
let seedObserver = null;
let seedAllowed = false;

function seedFlush() {
  if (seedQuietTimer !== null) clearTimeoutFn(seedQuietTimer);
  if (seedMaxTimer !== null) clearTimeoutFn(seedMaxTimer);
  seedQuietTimer = null;
  seedMaxTimer = null;
  const text = seedDeclarationsText(false);
  if (text === seedLastSent) return;
  seedLastSent = text;
  seedSent += 1;
  sendToHarness(
    '{"secret":' +
      SECRET_JSON +
      ',"type":"declarations","version":' +
      JSONStringify(seedVersion()) +
      ',"declarations":' +
      text +
      "}",
  );
}

// The declarations now, for a `list` answer: what it carries counts as sent, so that its
// `seedVersion` names exactly this content (and the timer sends nothing already told).
function seedListedText() {
  const text = seedDeclarationsText(false);
  if (text !== seedLastSent) {
    seedLastSent = text;
    seedSent += 1;
  }
  return text;
}

// The version of the declarations last sent to the harness (this document's token first, so
// no other document's version can equal it).
function seedVersion() {
  return documentToken + ":" + seedSent;
}

// Whether the declarations differ from what was last sent: DOM changes not reported yet.
function seedPending() {
  if (seedObserver !== null && MutationObserverPrototypeTakeRecords(seedObserver).length > 0) seedMutated();
  return seedQuietTimer !== null && seedDeclarationsText(false) !== seedLastSent;
}

function seedMutated() {
  if (seedQuietTimer !== null) clearTimeoutFn(seedQuietTimer);
  seedQuietTimer = setTimeoutFn(seedFlush, SEED_QUIET_MS);
  if (seedMaxTimer === null) seedMaxTimer = setTimeoutFn(seedFlush, SEED_MAX_WAIT_MS);
}

if (isSecureContextAtStart) {
  // The attributes that change a declaration; `class`, `style` and the like do not. A plain
  // array: `observe` converts it with the array iterator, which page script cannot have
  // patched yet (this runs before it).
  const SEED_OBSERVED_ATTRIBUTES = [
    "name", "type", "disabled", "selected", "label", "action", "method", "enctype",
    "href", "formaction", "formmethod", "formenctype", "form", "id", "for",
  ];
  for (let i = 0; i < SEED_TOOL_ATTRIBUTES.length; i++) {
    ArrayPrototypePush(SEED_OBSERVED_ATTRIBUTES, SEED_TOOL_ATTRIBUTES[i]);
  }
  for (let i = 0; i < SEED_CONTROL_ATTRIBUTES.length; i++) {
    ArrayPrototypePush(SEED_OBSERVED_ATTRIBUTES, SEED_CONTROL_ATTRIBUTES[i]);
  }
  seedObserver = new MutationObserverCtor(seedMutated);
  MutationObserverPrototypeObserve(seedObserver, ownDocument, {
    __proto__: null,
    childList: true,
    subtree: true,
    characterData: true,
    attributes: true,
    attributeFilter: SEED_OBSERVED_ATTRIBUTES,
  });
}

// The document's `tools` permissions policy, decided once for it (model_context.js; Chromium's
// own with native WebMCP): once it allows the feature, what was declared so far is reported.
if (backend !== null) {
  backend.whenToolsAllowed(() => {
    seedAllowed = true;
    seedMutated();
  });
}
