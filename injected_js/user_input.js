// Questions a tool asks the user from inside `execute` (CHANNEL.md: the `elicit` message and
// the `elicit-answer` op). Every execution's options get
// - `client.requestUserInput({mode, message, requestedSchema, url})` (the open spec proposal),
//   a promise of `{action, content}` (`content` only for an accepted form);
// - `requestUserInteraction(callback)` (the 2025 API, whose execute got an `agent` as its
//   second argument: the options object doubles as that agent). Accepted, it runs `callback`
//   and resolves with its value; declined or cancelled, it rejects with NotAllowedError.
// The harness plays the user: it asks its elicitation handler and answers with the op. When
// the execution's signal aborts, its open questions reject with AbortError.
//
// Runs after channel.js has started (only executions call it), so `sendToHarness` and
// `SECRET_JSON` from channel.js are in place by then.

const pendingQuestions = new SafeMap(); // requestId → {onAnswer, reject, signal, onAbort}
let questionCount = 0;

function questionAbortError() {
  return new DOMExceptionCtor("The tool call was cancelled.", "AbortError");
}

// A usable AbortSignal of this realm, or undefined (the brand check of the captured getter).
function questionSignal(signal) {
  try {
    AbortSignalPrototypeGetAborted(signal);
    return signal;
  } catch {
    return undefined;
  }
}

// The `request` of an `elicit` message as JSON text, read from the page's dictionary the way
// WebIDL reads one (members in lexicographic order); throws what a bad member would.
function questionRequestText(options) {
  if (options !== undefined && options !== null && !isObject(options)) {
    throw new TypeErrorCtor(
      "Failed to execute 'requestUserInput': The provided value is not of type 'UserInputRequest'.",
    );
  }
  const source = options ?? { __proto__: null };
  const message = source.message;
  const mode = source.mode;
  const requestedSchema = source.requestedSchema;
  const url = source.url;
  const parts = safeList();
  ArrayPrototypePush(parts, '"mode":' + JSONStringify(mode === undefined ? "form" : `${mode}`));
  if (message !== undefined) ArrayPrototypePush(parts, '"message":' + JSONStringify(`${message}`));
  if (requestedSchema !== undefined) {
    const text = JSONStringify(requestedSchema);
    if (typeof text !== "string") {
      throw new TypeErrorCtor("Failed to execute 'requestUserInput': requestedSchema is not JSON.");
    }
    ArrayPrototypePush(parts, '"requestedSchema":' + text);
  }
  if (url !== undefined) ArrayPrototypePush(parts, '"url":' + JSONStringify(`${url}`));
  return "{" + ArrayPrototypeJoin(parts, ",") + "}";
}

// Sends one question to the harness. `onAnswer(reply)` gets its `{action, content}` (a
// null-prototype record); `reject` gets the error the harness sent, or AbortError.
function askHarness(toolName, callId, signal, requestText, onAnswer, reject) {
  if (signal !== undefined && AbortSignalPrototypeGetAborted(signal)) {
    reject(questionAbortError());
    return;
  }
  questionCount += 1;
  const requestId = "q" + questionCount;
  const question = { __proto__: null, onAnswer, reject, signal, onAbort: null };
  if (signal !== undefined) {
    question.onAbort = () => settleQuestion(requestId, null, questionAbortError());
    EventTargetPrototypeAddEventListener(signal, "abort", question.onAbort, {
      __proto__: null,
      once: true,
    });
  }
  pendingQuestions.set(requestId, question);
  sendToHarness(
    '{"secret":' +
      SECRET_JSON +
      ',"type":"elicit","callId":' +
      (callId === null ? "null" : JSONStringify(callId)) +
      ',"name":' +
      JSONStringify(toolName) +
      ',"requestId":' +
      JSONStringify(requestId) +
      ',"request":' +
      requestText +
      "}",
  );
}

// Settles a pending question with the harness's reply or an error; false if none is pending.
function settleQuestion(requestId, reply, error) {
  const question = pendingQuestions.get(requestId);
  if (question === undefined) return false;
  pendingQuestions.delete(requestId);
  if (question.onAbort !== null) {
    EventTargetPrototypeRemoveEventListener(question.signal, "abort", question.onAbort);
  }
  if (error !== null) question.reject(error);
  else question.onAnswer(reply);
  return true;
}

// Adds `client` and `requestUserInteraction` to one execution's options.
function addUserInputMembers(options, toolName, callId, signal) {
  const executionSignal = questionSignal(signal);
  const client = {
    requestUserInput(request = undefined) {
      let requestText;
      try {
        requestText = questionRequestText(request);
      } catch (error) {
        return PromiseReject(error);
      }
      return new PromiseCtor((resolve, reject) => {
        const onAnswer = (reply) => {
          const action = reply.action;
          resolve(action === "accept" && reply.content !== null ? { action, content: reply.content } : { action });
        };
        askHarness(toolName, callId, executionSignal, requestText, onAnswer, reject);
      });
    },
  };
  readAsNative(client.requestUserInput, "requestUserInput");
  ObjectFreeze(client);
  const requestUserInteraction = {
    requestUserInteraction(callback) {
      if (typeof callback !== "function") {
        return PromiseReject(
          new TypeErrorCtor("Failed to execute 'requestUserInteraction': parameter 1 is not a function."),
        );
      }
      return new PromiseCtor((resolve, reject) => {
        const onAnswer = (reply) => {
          if (reply.action !== "accept") {
            reject(new DOMExceptionCtor(`The user did not allow the interaction (${reply.action}).`, "NotAllowedError"));
            return;
          }
          try {
            resolve(ReflectApply(callback, undefined, []));
          } catch (error) {
            reject(error);
          }
        };
        askHarness(toolName, callId, executionSignal, '{"mode":"interactive"}', onAnswer, reject);
      });
    },
  }.requestUserInteraction;
  readAsNative(requestUserInteraction, "requestUserInteraction");
  // Not enumerable: what the page enumerates on its options stays `signal` and the meta
  // members (CHANNEL.md), as without questions.
  defineHiddenMember(options, "client", client);
  defineHiddenMember(options, "requestUserInteraction", requestUserInteraction);
}

function defineHiddenMember(object, key, value) {
  ObjectDefineProperty(object, key, {
    __proto__: null,
    value,
    writable: true,
    enumerable: false,
    configurable: true,
  });
}

// The `elicit-answer` op: `{requestId, answer: {action, content?}}` or `{requestId, error:
// {name, message}}`. Answers `{answered}` (false: no such question is open any more).
function answerToolQuestion(command) {
  const requestId = ownData(command, "requestId");
  if (typeof requestId !== "string") {
    return harnessError("TypeError", 'elicit-answer: "requestId" must be a string');
  }
  const error = ownData(command, "error");
  if (isObject(error)) {
    const name = ownData(error, "name");
    const message = ownData(error, "message");
    const text = typeof message === "string" ? message : "";
    const rejection =
      name === "TypeError"
        ? new TypeErrorCtor(text)
        : new DOMExceptionCtor(text, typeof name === "string" ? name : "UnknownError");
    return { __proto__: null, answered: settleQuestion(requestId, null, rejection) };
  }
  const answer = ownData(command, "answer");
  const action = ownData(answer, "action");
  if (action !== "accept" && action !== "decline" && action !== "cancel") {
    return harnessError("TypeError", 'elicit-answer: "answer.action" must be accept, decline or cancel');
  }
  const content = ownData(answer, "content");
  const reply = {
    __proto__: null,
    action,
    // Re-created in this realm from its JSON text: a plain object for the page.
    content: action === "accept" && isObject(content) ? JSONParse(plainJSONText(content)) : null,
  };
  return { __proto__: null, answered: settleQuestion(requestId, reply, null) };
}
