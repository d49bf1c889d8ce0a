// Legacy surfaces. The API moved from `navigator.modelContext` to `document.modelContext` and
// lost unregisterTool/provideContext/clearContext; older pages still call them, and the seeds
// use their own forms. All of them are kept working as aliases of the current API, on both
// backends (the polyfill, or Chromium's native object with native_layer.js), and each tool
// records the surface it came through (`surface` in the harness's snapshot).

const NO_REGISTER_OPTIONS = ObjectFreeze({ __proto__: null, exposedTo: undefined, signal: undefined });

// A registration the page gets no promise for: report its failure like an unhandled one.
function reportRejection(promise, surface) {
  if (!isObject(promise)) return;
  ObjectDefineProperty(promise, "constructor", { __proto__: null, value: SafePromise });
  safeThen(promise, undefined, (error) =>
    ConsoleWarn(`WebMCP ${surface}: a tool was not registered: ${describeForConsole(error)}`),
  );
}

// A page-visible method, reading as a native one (primordials.js).
function defineMethod(object, name, method) {
  ObjectDefineProperty(object, name, {
    __proto__: null,
    value: readAsNative(method, name),
    writable: true,
    enumerable: true,
    configurable: true,
  });
}

// setToolState() (seed 004): tools disabled by name, with what re-registers them.
const disabledTools = new SafeMap(); // name → {tool, options, surface}

// A tool state: true/false, "enabled"/"disabled", or {enabled: boolean}.
function toolStateEnabled(state) {
  if (typeof state === "boolean") return state;
  if (state === "enabled" || state === "disabled") return state === "enabled";
  const enabled = isObject(state) ? state.enabled : undefined;
  if (typeof enabled === "boolean") return enabled;
  throw new TypeErrorCtor(
    "Failed to execute 'setToolState': the state must be true, false, \"enabled\", \"disabled\" or {enabled: boolean}.",
  );
}

// What registers a disabled tool again: its converted tool and options, from its definition.
function reRegistrationOf(definition) {
  const parsed = (text, none) => (text === none ? undefined : JSONParse(text));
  return {
    __proto__: null,
    tool: {
      __proto__: null,
      name: definition.name,
      title: definition.title,
      description: definition.description,
      execute: definition.execute,
      inputSchema: parsed(definition.inputSchema, ""),
      annotations: definition.annotations,
      annotationsJSON: definition.annotationsJSON,
      outputSchema: parsed(definition.outputSchemaJSON, "null"),
      resolve: definition.resolve,
    },
    options: {
      __proto__: null,
      exposedTo: definition.exposedTo === null ? undefined : definition.exposedTo,
      signal: definition.signal,
    },
    surface: definition.surface,
  };
}

// Disables (the tool leaves the registry, and so every agent's list) or re-enables a script
// tool of this document. Its registration's signal still counts: aborted while the tool was
// disabled, it does not come back.
function setToolState(backend, nameValue, state) {
  const name = idlDOMString(nameValue);
  const enabled = toolStateEnabled(state);
  let registered;
  backend.forEachTool((definition) => {
    if (definition.name === name && definition.source === "script") registered = definition;
  });
  if (!enabled) {
    if (disabledTools.has(name)) return;
    if (registered === undefined) throw domException(`No tool named "${name}" is registered.`, "NotFoundError");
    disabledTools.set(name, reRegistrationOf(registered));
    backend.unregister(name);
    return;
  }
  const saved = disabledTools.get(name);
  if (saved === undefined) {
    if (registered !== undefined) return; // enabled already
    throw domException(`No tool named "${name}" is registered.`, "NotFoundError");
  }
  disabledTools.delete(name);
  if (saved.options.signal !== undefined && AbortSignalPrototypeGetAborted(saved.options.signal)) return;
  backend.validate(saved.tool, saved.options, null); // another tool took the name meanwhile
  reportRejection(backend.register(saved.tool, saved.options, saved.surface), "setToolState");
}

function installLegacySurfaces(backend) {
  // Read when needed, not now: the native layer reads an about:blank document's native
  // object only once something needs it (native_layer.js).
  const theModelContext = () => backend.modelContext;
  const brand = (value) => {
    if (value !== theModelContext()) throw new TypeErrorCtor("Illegal invocation");
  };

  // navigator.modelContext (2025 API): the very same object as document.modelContext. Calls
  // made right after reading it are recorded as coming through it (until the next microtask).
  ObjectDefineProperty(Navigator.prototype, "modelContext", {
    __proto__: null,
    enumerable: true,
    configurable: true,
    get: {
      modelContext() {
        modelContextAccessedThrough = "navigator.modelContext";
        queueMicrotaskFn(() => {
          modelContextAccessedThrough = "document.modelContext";
        });
        return theModelContext();
      },
    }.modelContext,
  });
  readAccessorsAsNative(Navigator.prototype, "modelContext");

  // unregisterTool(name) (2025 API): removes the tool, whichever surface registered it.
  defineMethod(backend.prototype, "unregisterTool", {
    unregisterTool(name) {
      brand(this);
      const toolName = idlDOMString(name);
      disabledTools.delete(toolName);
      backend.unregister(toolName);
    },
  }.unregisterTool);

  // provideContext({tools}) (2025 API): replaces the set of tools provided by earlier
  // provideContext() calls; tools from registerTool() stay. Invalid input throws and
  // changes nothing.
  defineMethod(backend.prototype, "provideContext", {
    provideContext(context = undefined) {
      brand(this);
      const source = optionsObject(context, "provideContext", "ModelContextProvidedContext");
      const toolsValue = source.tools;
      const tools =
        toolsValue === undefined
          ? safeList()
          : toSequence(
              toolsValue,
              (tool) => convertModelContextTool(tool, "provideContext"),
              () =>
                failedToExecute(
                  "provideContext",
                  "Failed to read the 'tools' property from 'ModelContextProvidedContext': The provided value cannot be converted to a sequence.",
                ),
            );
      const previous = new SafeSet();
      backend.forEachTool((definition) => {
        if (definition.surface === "provideContext") previous.add(definition.name);
      });
      const seen = new SafeSet();
      for (let i = 0; i < tools.length; i++) {
        if (seen.has(tools[i].name)) throw domException(MESSAGES.duplicate, "InvalidStateError");
        seen.add(tools[i].name);
        backend.validate(tools[i], NO_REGISTER_OPTIONS, previous);
      }
      previous.forEach((name) => backend.unregister(name));
      for (let i = 0; i < tools.length; i++) {
        reportRejection(
          backend.register(tools[i], NO_REGISTER_OPTIONS, "provideContext"),
          "provideContext",
        );
      }
    },
  }.provideContext);

  // clearContext() (2025 API): unregisters every tool of the document.
  defineMethod(backend.prototype, "clearContext", {
    clearContext() {
      brand(this);
      const names = safeList();
      backend.forEachTool((definition) => ArrayPrototypePush(names, definition.name));
      for (let i = 0; i < names.length; i++) backend.unregister(names[i]);
      disabledTools.clear();
    },
  }.clearContext);

  // window.createAutomationDelegate() (seed 004, Script Tools proposal): an object with a
  // synchronous registerTool(params) that throws on invalid input, and unregisterTool(name).
  defineMethod(ownWindow, "createAutomationDelegate", {
    createAutomationDelegate() {
      const delegate = {};
      defineMethod(delegate, "registerTool", {
        registerTool(params) {
          const tool = convertModelContextTool(params, "registerTool");
          backend.validate(tool, NO_REGISTER_OPTIONS, null);
          reportRejection(
            backend.register(tool, NO_REGISTER_OPTIONS, "createAutomationDelegate"),
            "createAutomationDelegate",
          );
        },
      }.registerTool);
      defineMethod(delegate, "unregisterTool", {
        unregisterTool(name) {
          const toolName = idlDOMString(name);
          disabledTools.delete(toolName);
          backend.unregister(toolName);
        },
      }.unregisterTool);
      defineMethod(delegate, "setToolState", {
        setToolState(name, state) {
          setToolState(backend, name, state);
        },
      }.setToolState);
      return ObjectFreeze(delegate);
    },
  }.createAutomationDelegate);

  // window.mcp (seed 002, Declarative draft): registerTool(name, {title, description,
  // inputSchema, …}, execute) or registerTool(tool); returns registerTool()'s promise.
  const mcp = {};
  defineMethod(mcp, "registerTool", {
    registerTool(nameOrTool, definition = undefined, execute = undefined) {
      try {
        const tool = isObject(nameOrTool)
          ? nameOrTool
          : legacyToolFromParts(nameOrTool, definition, execute);
        const converted = convertModelContextTool(tool, "registerTool");
        return backend.register(converted, NO_REGISTER_OPTIONS, "window.mcp");
      } catch (error) {
        return PromiseReject(error);
      }
    },
  }.registerTool);
  defineMethod(mcp, "unregisterTool", {
    unregisterTool(name) {
      const toolName = idlDOMString(name);
      disabledTools.delete(toolName);
      backend.unregister(toolName);
    },
  }.unregisterTool);
  defineMethod(mcp, "setToolState", {
    setToolState(name, state) {
      setToolState(backend, name, state);
    },
  }.setToolState);
  ObjectDefineProperty(ownWindow, "mcp", {
    __proto__: null,
    value: ObjectFreeze(mcp),
    writable: true, // a page with its own `window.mcp` must still be able to set it
    enumerable: false,
    configurable: true,
  });
}

function legacyToolFromParts(name, definition, execute) {
  const parts = isObject(definition) ? definition : {};
  return {
    __proto__: null,
    name,
    title: parts.title,
    description: parts.description,
    inputSchema: parts.inputSchema,
    outputSchema: parts.outputSchema,
    annotations: parts.annotations,
    resolve: parts.resolve,
    execute: typeof execute === "function" ? execute : parts.execute,
  };
}
