// When Chromium's own `document.modelContext` exists, the polyfill does not install over it.
// This layer adds what the native object lacks, on top of it:
// - the legacy surfaces (legacy.js), built on the native registerTool; each tool keeps an
//   AbortController of ours, so unregisterTool() can take it down;
// - a side registry of the fields Chromium drops (title, outputSchema, every annotation,
//   resolve, the surface), keyed by name and emptied on unregistration, for `list`;
// - a wrapper around every `execute`, so the harness can add option members (`_meta`, …)
//   to the next call of a tool (the `prepare` op), keeping `signal`;
// - `invoke`, run through the native getTools/executeTool captured here.

// Chromium knows the "tools" permissions policy feature; its answer is the native one, which
// its registerTool() and forms follow, and so does the seed dialect's report
// (declarative_seed.js).
const nativeFeaturePolicy =
  nativeModelContextDescriptor !== undefined && DocumentPrototypeGetFeaturePolicy !== null
    ? DocumentPrototypeGetFeaturePolicy(ownDocument)
    : null;

function nativeToolsAllowed() {
  return nativeFeaturePolicy === null || FeaturePolicyPrototypeAllowsFeature(nativeFeaturePolicy, "tools");
}

// Then-ing a promise created by the native side or by us, without looking at the
// page-patchable Promise.prototype.constructor or Promise[Symbol.species].
function observePromise(promise, onFulfilled, onRejected) {
  ObjectDefineProperty(promise, "constructor", { __proto__: null, value: SafePromise });
  return safeThen(promise, onFulfilled, onRejected);
}

// A document without a browsing context (a <template>'s content document, one from
// createHTMLDocument(), new Document() or DOMParser) gets a ModelContext from Chromium too,
// and Chromium binds the frame's WebMCP host for it at that first read. A frame's second bind
// kills its renderer (Chromium 156, measured without the harness: reading the page's own
// `document.modelContext` and a template's, in either order, crashes the tab). The layer has
// read its own document's, so Chromium's object for such a document is never asked for; the
// document gets a stand-in, which does what Chromium's does there: an EventTarget on
// ModelContext.prototype whose methods convert their arguments and then reject with
// InvalidStateError "The document is not active.".
function inactiveModelContext(document) {
  const object = new EventTargetCtor();
  ObjectSetPrototypeOf(object, NativeModelContextPrototype);
  inactiveModelContexts.set(object, true);
  modelContextOfDocument.set(document, object);
  return object;
}

// An object JSON.stringify reads as `text` (undefined: as nothing), or that throws `error`
// when `serialized` is false: what Chromium serializes in place of an input the layer has
// already serialized. Its own toJSON is the only member read, and the value it gives is
// built of objects and arrays without prototypes, so no toJSON the page set on
// Object.prototype or Array.prototype runs a second time.
function withoutPrototype(key, value) {
  if (typeof value === "object" && value !== null) ObjectSetPrototypeOf(value, null);
  return value;
}

function serializedStandIn(serialized, text, error) {
  const value = serialized && text !== undefined ? JSONParse(text, withoutPrototype) : undefined;
  return {
    __proto__: null,
    toJSON() {
      if (!serialized) throw error;
      return value;
    },
  };
}

// A stand-in's method: Chromium's conversions (`convert`, which throws a TypeError), then
// the rejection every inactive document's call gets.
function inactiveModelContextSteps(operation, argumentCount, convert) {
  try {
    if (argumentCount < 1) throw failedToExecute(operation, "1 argument required, but only 0 present.");
    convert();
  } catch (error) {
    return PromiseReject(error);
  }
  return PromiseReject(domException(MESSAGES.notActive, "InvalidStateError"));
}

// An `on…` attribute of ModelContext.prototype that also serves the stand-ins (as the
// polyfill's attributes do, events.js); Chromium's own objects keep Chromium's accessor.
function defineInactiveEventHandler(type, desc) {
  const name = `on${type}`;
  ObjectDefineProperty(NativeModelContextPrototype, name, {
    __proto__: null,
    enumerable: desc.enumerable,
    configurable: true,
    get: {
      [name]() {
        if (!inactiveModelContexts.has(this)) return ReflectApply(desc.get, this, []);
        const record = eventHandlerRecord(this, type);
        return record === undefined ? null : record.value;
      },
    }[name],
    set: {
      [name](value) {
        if (!inactiveModelContexts.has(this)) return ReflectApply(desc.set, this, [value]);
        setEventHandler(this, type, isObject(value) ? value : null);
      },
    }[name],
  });
  readAccessorsAsNative(NativeModelContextPrototype, name);
}

function installNativeLayer() {
  // Chromium binds a document's WebMCP host the first time its `modelContext` is read. An
  // iframe's initial about:blank document that a page touched (a postMessage into it) and
  // that then navigates to a same-origin URL keeps its window; when that document had read
  // it, its bind can reach the browser after the next document's, which Chromium takes for
  // a second bind of one document: it kills the renderer ("bad IPC message, reason 346",
  // RFHI_WEBMCP_DUPLICATE_BIND; under load, about 1 such navigation in 35). So an
  // about:blank document's native object is read only once something needs it: the page
  // reading `document.modelContext`, a registration, a call. Any other document's, now.
  let nativeObject = null;
  const nativeReady = safeList(); // what waits for the native object to be read
  const native = () => {
    if (nativeObject === null) {
      nativeObject = ReflectApply(nativeModelContextDescriptor.get, ownDocument, []);
      if (nativeObject === null || nativeObject === undefined) return nativeObject;
      modelContextOfDocument.set(ownDocument, nativeObject);
      for (let i = 0; i < nativeReady.length; i++) nativeReady[i](nativeObject);
    }
    return nativeObject;
  };
  const whenNative = (callback) => {
    if (nativeObject !== null && nativeObject !== undefined) callback(nativeObject);
    else ArrayPrototypePush(nativeReady, callback);
  };
  if (DocumentPrototypeGetURL(ownDocument) !== "about:blank") native();
  const sideRegistry = new SafeMap(); // tool name → definition (the polyfill's shape)
  const controllers = new SafeWeakMap(); // definition → our AbortController for it
  const pendingMeta = new SafeMap(); // tool name → option members for its next execute
  // tool name → the registration the harness checked its next call against (`prepare`)
  const pendingRegistrations = new SafeMap();
  const harnessCalls = new SafeMap(); // callId → {toolName, controller, settle, …}
  const cancelledCalls = new SafeMap(); // tool name → callId of its last cancelled invoke

  // tool name → the object Chromium's getTools() gave for its current registration, so a
  // call of a script tool needs no getTools() of its own (forgotten at every change).
  const executableTools = new SafeMap();
  const removeIfCurrent = (definition) => {
    if (sideRegistry.get(definition.name) !== definition) return;
    executableTools.delete(definition.name);
    sideRegistry.delete(definition.name);
    pendingMeta.delete(definition.name);
    harnessHooks.toolsChanged();
  };

  // Adds the harness's option members (from `prepare` or `invoke`) to the next call, and
  // keeps what execute threw for a pending `invoke` (Chromium only reports UnknownError).
  // `registered.definition` is this registration's side-registry entry (set once known).
  const wrapExecute = (toolName, execute, registered) =>
    function execute_(inputObject, options) {
      if (pendingRegistrations.has(toolName)) {
        const expected = pendingRegistrations.get(toolName);
        pendingRegistrations.delete(toolName);
        const mine = registered.definition === null ? null : registrationOf(registered.definition);
        if (mine !== expected) {
          // The page registered the tool again since the harness checked this call: the
          // new definition's execute never runs with arguments checked for the old one.
          pendingMeta.delete(toolName);
          throw new ErrorCtor("WebMCPHarnessToolChanged: the tool was registered again; not run");
        }
      }
      const meta = pendingMeta.get(toolName);
      if (meta !== undefined && isObject(options)) {
        pendingMeta.delete(toolName);
        const keys = ObjectKeys(meta);
        for (let i = 0; i < keys.length; i++) {
          if (keys[i] !== "signal") createDataProperty(options, keys[i], meta[keys[i]]);
        }
      }
      let call;
      let callId = null;
      harnessCalls.forEach((candidate, id) => {
        if (candidate.toolName === toolName && !candidate.started) {
          call = candidate;
          callId = id;
        }
      });
      // Questions for the user (user_input.js); `callId` is null for calls made through CDP.
      if (isObject(options)) addUserInputMembers(options, toolName, callId, ownData(options, "signal"));
      if (call === undefined) return ReflectApply(execute, this, [inputObject, options]);
      call.started = true;
      const remember = (reason) => {
        call.failure = reason;
      };
      let value;
      try {
        value = ReflectApply(execute, this, [inputObject, options]);
      } catch (error) {
        remember(error);
        throw error;
      }
      safeThen(new SafePromise((resolve) => resolve(value)), undefined, remember);
      return value;
    };

  // Registers through the native registerTool with a copy of the tool whose execute is
  // wrapped, and our signal (following the page's). The side registry only records what the
  // native side will accept; it drops the entry again if the native side rejects.
  function registerNatively(tool, options, surface) {
    // The native side's checks, made here too (not by then-ing the page's promise, which
    // would mark its rejection handled).
    let accepted = isFullyActive() && nativeToolsAllowed();
    let inputSchemaText = null; // serialized once (as Chromium does), for the side registry
    try {
      // A <form toolname> holds its name in Chromium's map too (declarative.js).
      const taken = (name) => sideRegistry.has(name) || declarativeNameInUse(name);
      inputSchemaText = validateToolRegistration(tool, options, taken, null, false);
    } catch {
      accepted = false;
    }
    if (accepted) {
      // Outside WebMCP's subset, refused before Chromium (which accepts it) sees it (schema.js).
      try {
        checkSchemaSubset(inputSchemaText, "registerTool");
      } catch (error) {
        return PromiseReject(error);
      }
    }
    const controller = new AbortControllerCtor();
    const signal = AbortControllerPrototypeGetSignal(controller);
    const pageSignal = options.signal;
    if (pageSignal !== undefined) {
      if (AbortSignalPrototypeGetAborted(pageSignal)) {
        AbortControllerPrototypeAbort(controller, AbortSignalPrototypeGetReason(pageSignal));
      } else {
        EventTargetPrototypeAddEventListener(
          pageSignal,
          "abort",
          () => AbortControllerPrototypeAbort(controller, AbortSignalPrototypeGetReason(pageSignal)),
          { __proto__: null, once: true },
        );
      }
    }
    const nativeTool = { __proto__: null };
    if (tool.annotations !== null) {
      nativeTool.annotations = {
        __proto__: null,
        consequentialHint: tool.annotations.consequentialHint,
        debugging: tool.annotations.debugging,
        readOnlyHint: tool.annotations.readOnlyHint,
        untrustedContentHint: tool.annotations.untrustedContentHint,
      };
    }
    nativeTool.description = tool.description;
    const registered = { __proto__: null, definition: null };
    nativeTool.execute = wrapExecute(tool.name, tool.execute, registered);
    if (tool.inputSchema !== undefined) {
      // The schema as serialized once above (the page's toJSON runs once, as in Chromium), so
      // Chromium registers what the side registry records; else the page's own, for Chromium
      // to refuse as it does.
      nativeTool.inputSchema = accepted ? JSONParse(inputSchemaText) : tool.inputSchema;
    }
    nativeTool.name = tool.name;
    if (tool.title !== null) nativeTool.title = tool.title;
    const nativeOptions = { __proto__: null, signal };
    if (options.exposedTo !== undefined) {
      const exposedTo = [];
      for (let i = 0; i < options.exposedTo.length; i++) {
        createDataProperty(exposedTo, i, options.exposedTo[i]);
      }
      nativeOptions.exposedTo = exposedTo;
    }
    const promise = ReflectApply(nativeRegisterTool, native(), [nativeTool, nativeOptions]);
    if (!accepted) return promise;

    const definition = createToolDefinition(
      tool,
      inputSchemaText,
      options,
      options.exposedTo === undefined
        ? safeList()
        : parseOriginList(options.exposedTo, MESSAGES.exposedTo),
      surface,
    );
    controllers.set(definition, controller);
    registered.definition = definition;
    executableTools.delete(tool.name);
    sideRegistry.set(tool.name, definition);
    EventTargetPrototypeAddEventListener(signal, "abort", () => removeIfCurrent(definition), {
      __proto__: null,
      once: true,
    });
    harnessHooks.toolsChanged();
    return promise;
  }

  // The page-visible registerTool, replacing the native method on its prototype.
  const registerTool = {
    registerTool(tool, options = undefined) {
      const surface = modelContextAccessedThrough;
      if (inactiveModelContexts.has(this)) {
        return inactiveModelContextSteps("registerTool", arguments.length, () => {
          convertModelContextTool(tool, "registerTool");
          convertRegisterToolOptions(options, "registerTool");
        });
      }
      if (this !== nativeObject || arguments.length < 1) {
        return ReflectApply(nativeRegisterTool, this, arguments);
      }
      try {
        const converted = convertModelContextTool(tool, "registerTool");
        const convertedOptions = convertRegisterToolOptions(options, "registerTool");
        return registerNatively(converted, convertedOptions, surface);
      } catch (error) {
        return PromiseReject(error);
      }
    },
  }.registerTool;
  defineMethod(NativeModelContextPrototype, "registerTool", registerTool);

  // The page-visible executeTool: input that breaks one of this document's script tools'
  // inputSchema rejects with a DataError before Chromium runs it (schema.js). Anything else,
  // and anything the check cannot read, is Chromium's. The check serializes the input as
  // Chromium does (v8::JSON::Stringify); Chromium then gets a stand-in that serializes to the
  // same text (or throws the page's own exception), so the page's toJSON and getters run
  // once.
  const executeTool = {
    executeTool(tool, inputObject = undefined, options = undefined) {
      if (inactiveModelContexts.has(this)) {
        return inactiveModelContextSteps("executeTool", arguments.length, () => {
          convertRegisteredTool(tool);
          convertExecuteToolOptions(options);
        });
      }
      const args = arguments;
      if (this === nativeObject && isObject(tool) && isObject(inputObject)) {
        let definition;
        try {
          definition = ownData(tool, "window") === ownWindow ? sideRegistry.get(ownData(tool, "name")) : undefined;
        } catch {
          definition = undefined;
        }
        if (definition !== undefined) {
          let text;
          let serialized = true;
          let error;
          try {
            text = JSONStringify(inputObject);
          } catch (thrown) {
            serialized = false;
            error = thrown;
          }
          let violation = null;
          if (serialized) {
            try {
              violation = inputSchemaViolation(definition.inputSchema, text);
            } catch {
              violation = null;
            }
          }
          if (violation !== null) return PromiseReject(domException(violation, "DataError"));
          // What JSON.stringify itself refuses (a BigInt, a cycle) Chromium words as its own
          // error: it gets the input as it is, to refuse it so.
          if (serialized || jsonStringifyRefusal(error) === null) {
            args[1] = serializedStandIn(serialized, text, error);
          }
        }
      }
      return ReflectApply(nativeExecuteToolMethod, this, args);
    },
  }.executeTool;
  defineMethod(NativeModelContextPrototype, "executeTool", executeTool);

  const getTools = {
    getTools(options = undefined) {
      if (inactiveModelContexts.has(this)) {
        return inactiveModelContextSteps("getTools", 1, () => convertGetToolsOptions(options));
      }
      return ReflectApply(nativeGetToolsMethod, this, arguments);
    },
  }.getTools;
  defineMethod(NativeModelContextPrototype, "getTools", getTools);
  nativeEventHandlerDescriptors.forEach((desc, type) => defineInactiveEventHandler(type, desc));

  // document.modelContext, through the native getter, noting the surface like the polyfill.
  ObjectDefineProperty(Document.prototype, "modelContext", {
    __proto__: null,
    enumerable: nativeModelContextDescriptor.enumerable,
    configurable: true,
    get: {
      modelContext() {
        if (this !== ownDocument && this === WindowGetDocument(ownWindow)) {
          // The window's newer document, in a reused realm (realm.js): renew the layer for it.
          return currentDocumentRun().modelContext ?? undefined;
        }
        let value;
        if (this === ownDocument) value = native();
        else if (modelContextOfDocument.has(this)) value = modelContextOfDocument.get(this);
        // ("Illegal invocation" for anything but a document, as the native getter.)
        else if (DocumentPrototypeGetDefaultView(this) === null) value = inactiveModelContext(this);
        else value = ReflectApply(nativeModelContextDescriptor.get, this, []);
        if (value === nativeObject) modelContextAccessedThrough = "document.modelContext";
        return value;
      },
    }.modelContext,
  });
  readAccessorsAsNative(Document.prototype, "modelContext");

  // Chromium's own events, reported to the harness like the polyfill's.
  const forwardEvent = (type, getToolName) => (event) => {
    const toolName = getToolName(event);
    let callId = null;
    if (type === "toolcancel" && cancelledCalls.has(toolName)) {
      callId = cancelledCalls.get(toolName);
      cancelledCalls.delete(toolName);
    } else {
      harnessCalls.forEach((call, id) => {
        if (call.toolName === toolName) callId = callId === null ? id : callId;
      });
    }
    harnessHooks.toolEvent(type, toolName, callId);
  };
  whenNative((object) => {
    if (nativeToolEventGetToolName !== null) {
      EventTargetPrototypeAddEventListener(
        object,
        "toolactivated",
        forwardEvent("toolactivated", nativeToolEventGetToolName),
      );
    }
    if (nativeToolCancelEventGetToolName !== null) {
      EventTargetPrototypeAddEventListener(
        object,
        "toolcancel",
        forwardEvent("toolcancel", nativeToolCancelEventGetToolName),
      );
    }
  });

  function invoke(callId, toolName, inputArguments, extraOptions) {
    return new SafePromise((settle) => {
      const finish = (result) => {
        const call = harnessCalls.get(callId);
        if (call === undefined || call.settle !== settle) return;
        harnessCalls.delete(callId);
        pendingMeta.delete(toolName);
        settle(result);
      };
      harnessCalls.set(callId, {
        __proto__: null,
        toolName,
        controller: new AbortControllerCtor(),
        settle,
        started: false,
        failure: undefined,
      });
      const run = (registeredTool) => {
        const call = harnessCalls.get(callId);
        if (call === undefined || call.settle !== settle) return;
        if (registeredTool === null) {
          finish(harnessError("NotFoundError", `No tool named "${toolName}" is registered in this document.`));
          return;
        }
        if (extraOptions !== null) pendingMeta.set(toolName, extraOptions);
        const signal = AbortControllerPrototypeGetSignal(call.controller);
        let execution;
        try {
          execution = nativeExecuteTool(native(), registeredTool, JSONParse(inputArguments), {
            __proto__: null,
            signal,
          });
        } catch (error) {
          finish(harnessFailure(error, MESSAGES.unknown));
          return;
        }
        observePromise(
          execution,
          (json) => finish({ __proto__: null, status: "ok", json }),
          (error) => finish(harnessFailure(call.failure !== undefined ? call.failure : error, MESSAGES.unknown)),
        );
      };
      const known = executableTools.get(toolName);
      if (known !== undefined) {
        run(known);
        return;
      }
      // The side registry's entry as the lookup starts: a change meanwhile (a new
      // registration, an unregistration) must not leave a stale object behind.
      const definition = sideRegistry.get(toolName);
      // Chromium's getTools() in a frame may never settle (see `registry`): the call ends,
      // not run, rather than wait out its timeout; a late answer finds it ended.
      const silence = setTimeoutFn(
        () => finish({ __proto__: null, status: "unanswered", waited: REGISTRY_WAIT_MS }),
        REGISTRY_WAIT_MS,
      );
      observePromise(
        nativeGetTools(native()),
        (tools) => {
          clearTimeoutFn(silence);
          let registeredTool = null;
          const count = ArrayIsArray(tools) ? tools.length : 0;
          for (let i = 0; i < count; i++) {
            const candidate = tools[i];
            if (ownData(candidate, "name") === toolName && ownData(candidate, "window") === ownWindow) {
              registeredTool = candidate;
            }
          }
          if (registeredTool !== null && definition !== undefined && sideRegistry.get(toolName) === definition) {
            executableTools.set(toolName, registeredTool);
          }
          run(registeredTool);
        },
        (error) => {
          clearTimeoutFn(silence);
          finish(harnessFailure(error, MESSAGES.unknown));
        },
      );
    });
  }

  // How long a listing, or a call's lookup, waits for Chromium's getTools() in this document.
  const REGISTRY_WAIT_MS = 3000;

  // Chromium's registry for this document, read now (getTools), as the JSON text of
  // [{name, title, description, inputSchema, annotations}], each inputSchema as its own JSON
  // text (a schema nested too deeply for the harness to read spoils only its own tool,
  // not the whole listing) ("null" when getTools() failed,
  // '"timeout"' when it did not settle in time),
  // for `list` with `registry: true`: the harness reconciles the
  // batched CDP events with it whenever a listing is asked for.
  function registry() {
    return new SafePromise((resolve) => {
      if (nativeObject === null || nativeObject === undefined) {
        // An about:blank document whose native object nothing read (see above): reading its
        // registry would bind its host. "null" (not read): CDP's events still say what
        // Chromium has there.
        resolve("null");
        return;
      }
      // Chromium's getTools() in a frame may never settle (Chromium 156, now and then under
      // load: the frame's WebMCP requests go unanswered): the listing then answers
      // "timeout" for the registry rather than hang the harness's discovery.
      const timer = setTimeoutFn(() => resolve('"timeout"'), REGISTRY_WAIT_MS);
      const settle = (text) => {
        clearTimeoutFn(timer);
        resolve(text);
      };
      observePromise(
        nativeGetTools(nativeObject),
        (tools) => {
          const parts = safeList();
          const count = ArrayIsArray(tools) ? tools.length : 0;
          for (let i = 0; i < count; i++) {
            const tool = tools[i];
            if (ownData(tool, "window") !== ownWindow) continue;
            ArrayPrototypePush(
              parts,
              chromiumJSONText({
                __proto__: null,
                name: ownData(tool, "name"),
                title: ownData(tool, "title"),
                description: ownData(tool, "description"),
                inputSchema: schemaText(ownData(tool, "inputSchema")),
                annotations: ownData(tool, "annotations"),
              }),
            );
          }
          settle("[" + ArrayPrototypeJoin(parts, ",") + "]");
        },
        () => settle("null"),
      );
    });
  }

  function schemaText(schema) {
    if (schema === undefined || schema === null) return null;
    try {
      return chromiumJSONText(schema);
    } catch {
      return null; // (Chromium's own object: it does not throw)
    }
  }

  function cancel(callId, reason) {
    const call = harnessCalls.get(callId);
    if (call === undefined) return false;
    harnessCalls.delete(callId);
    pendingMeta.delete(call.toolName);
    cancelledCalls.set(call.toolName, callId);
    call.settle({ __proto__: null, status: "cancelled", reason });
    AbortControllerPrototypeAbort(call.controller);
    return true;
  }

  return ObjectFreeze({
    __proto__: null,
    native: true,
    // Read when asked for (see above): an about:blank document's only when needed.
    get modelContext() {
      return native();
    },
    whenModelContext: whenNative,
    // Chromium's policy is known when the document starts: it never waits for a parent.
    whenToolsAllowed(steps) {
      if (nativeToolsAllowed()) steps();
    },
    toolsPolicyPending() {
      return false;
    },
    prototype: NativeModelContextPrototype,
    register: registerNatively,
    validate(tool, options, replacing) {
      validateToolRegistration(tool, options, (name) => sideRegistry.has(name), replacing);
    },
    unregister(toolName) {
      const definition = sideRegistry.get(toolName);
      if (definition === undefined) return false;
      AbortControllerPrototypeAbort(controllers.get(definition));
      removeIfCurrent(definition);
      return true;
    },
    // The side registry, then what CDP does not say about the forms Chromium registered.
    forEachTool(callback) {
      sideRegistry.forEach(callback);
      forEachDeclarativeExtra((name) => sideRegistry.has(name), callback);
    },
    scriptTool(toolName) {
      return sideRegistry.get(toolName) ?? null;
    },
    invoke,
    registry,
    cancel,
    resolve(toolName, inputArguments) {
      return new SafePromise((settle) => {
        const definition = sideRegistry.get(toolName);
        if (definition === undefined || definition.resolve === null) {
          settle(harnessError("NotFoundError", `No tool named "${toolName}" with a resolve function.`));
          return;
        }
        runResolve(definition.resolve, inputArguments, settle);
      });
    },
    // The harness is about to run `toolName` through CDP: its next execute gets `meta`, and
    // runs only if it is the registration `expected` (a number; null: no check).
    prepare(toolName, meta, expected) {
      if (meta === null) pendingMeta.delete(toolName);
      else pendingMeta.set(toolName, meta);
      if (expected === null) pendingRegistrations.delete(toolName);
      else pendingRegistrations.set(toolName, expected);
      return true;
    },
  });
}
