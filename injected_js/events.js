// The WebMCP events (spec §Events): `toolchange` is a plain Event, `toolactivated` a
// ToolActivatedEvent and `toolcancel` a ToolCancelEvent, each with an `on…` event handler
// IDL attribute on ModelContext. The classes are only exposed on `window` when the polyfill
// installs (Chromium's native implementation brings its own).

// `toolName` lives in a private field: page script can read it through the getter only.
class ToolActivatedEvent extends EventCtor {
  #toolName;
  constructor(type, eventInitDict = undefined) {
    if (arguments.length < 1) {
      throw new TypeErrorCtor(
        "Failed to construct 'ToolActivatedEvent': 1 argument required, but only 0 present.",
      );
    }
    super(`${type}`, eventInitDict);
    this.#toolName = toolEventInitToolName(eventInitDict, "ToolActivatedEvent");
  }
  get toolName() {
    return this.#toolName;
  }
}

class ToolCancelEvent extends EventCtor {
  #toolName;
  constructor(type, eventInitDict = undefined) {
    if (arguments.length < 1) {
      throw new TypeErrorCtor(
        "Failed to construct 'ToolCancelEvent': 1 argument required, but only 0 present.",
      );
    }
    super(`${type}`, eventInitDict);
    this.#toolName = toolEventInitToolName(eventInitDict, "ToolCancelEvent");
  }
  get toolName() {
    return this.#toolName;
  }
}

// ToolActivatedEventInit / ToolCancelEventInit: `DOMString toolName = ""`.
function toolEventInitToolName(init, interfaceName) {
  if (init === undefined || init === null) return "";
  if (!isObject(init)) {
    throw new TypeErrorCtor(
      `Failed to construct '${interfaceName}': The provided value is not of type '${interfaceName}Init'.`,
    );
  }
  const toolName = init.toolName;
  return toolName === undefined ? "" : `${toolName}`;
}

// Make class members look like Web IDL ones: attributes and operations are enumerable, the
// prototype carries its interface name as @@toStringTag, and the class and its members read
// as native functions (primordials.js).
function shapeLikeWebIDL(Interface, name) {
  readAsNative(Interface, name);
  const proto = Interface.prototype;
  const keys = ReflectOwnKeys(proto);
  for (let i = 0; i < keys.length; i++) {
    if (keys[i] === "constructor") continue;
    const desc = ObjectGetOwnPropertyDescriptor(proto, keys[i]);
    ObjectSetPrototypeOf(desc, null);
    desc.enumerable = true;
    ObjectDefineProperty(proto, keys[i], desc);
    if (typeof desc.value === "function") readAsNative(desc.value, keys[i]);
    else readAccessorsAsNative(proto, keys[i]);
  }
  ObjectDefineProperty(proto, SymbolToStringTag, {
    __proto__: null,
    value: name,
    writable: false,
    enumerable: false,
    configurable: true,
  });
}
shapeLikeWebIDL(ToolActivatedEvent, "ToolActivatedEvent");
shapeLikeWebIDL(ToolCancelEvent, "ToolCancelEvent");

// Event handler IDL attributes (HTML §8.1.8.1): the first non-null value adds one listener,
// which keeps its place in the listener list while the handler is replaced; null removes it.
const eventHandlerRecords = new SafeWeakMap(); // target → SafeMap(type → {value, listener})

function defineEventHandlerAttribute(proto, type, brandCheck) {
  const name = `on${type}`;
  ObjectDefineProperty(proto, name, {
    __proto__: null,
    enumerable: true,
    configurable: true,
    get: {
      [name]() {
        brandCheck(this);
        const record = eventHandlerRecord(this, type);
        return record === undefined ? null : record.value;
      },
    }[name],
    set: {
      [name](value) {
        brandCheck(this);
        setEventHandler(this, type, isObject(value) ? value : null);
      },
    }[name],
  });
  readAccessorsAsNative(proto, name);
}

function eventHandlerRecord(target, type) {
  const records = eventHandlerRecords.get(target);
  return records === undefined ? undefined : records.get(type);
}

function setEventHandler(target, type, value) {
  let records = eventHandlerRecords.get(target);
  if (records === undefined) {
    records = new SafeMap();
    eventHandlerRecords.set(target, records);
  }
  const record = records.get(type);
  if (value === null) {
    if (record !== undefined) {
      EventTargetPrototypeRemoveEventListener(target, type, record.listener);
      records.delete(type);
    }
    return;
  }
  if (record !== undefined) {
    record.value = value;
    return;
  }
  const fresh = { __proto__: null, value, listener: null };
  // The event handler processing algorithm: call the handler; `false` cancels the event.
  fresh.listener = function (event) {
    if (typeof fresh.value !== "function") return;
    if (ReflectApply(fresh.value, target, [event]) === false) EventPrototypePreventDefault(event);
  };
  records.set(type, fresh);
  EventTargetPrototypeAddEventListener(target, type, fresh.listener);
}

function fireEvent(target, event) {
  EventTargetPrototypeDispatchEvent(target, event);
}

function createToolEvent(Interface, type, toolName) {
  return new Interface(type, { __proto__: null, toolName });
}
