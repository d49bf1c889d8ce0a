// What the page has scheduled: its timers and the fetches and body reads it awaits, for the
// harness's readiness (harness/catalog.py).
//
// After `load`, a page's catalog is settled once nothing happened for a quiet window (500 ms).
// The harness ends that window early when the page has nothing left that could still
// register a tool within it: no request in flight, no change for a moment, and — what this
// file keeps — no timer of the page's due before the window would end, no fetch or response
// body read unsettled (below). `setTimeout` and
// `setInterval` (and their `clear…`) are wrapped once per realm, before page scripts run,
// to note the due time of each timer the page sets; the timers themselves, their ids and
// their arguments are the browser's. The harness's own timers use the originals captured
// in primordials.js. A page that takes the wrappers away only makes its own catalog wait
// the whole window (the answer is never "nothing pending" from a page that cannot say).

const nativeSetTimeout = globalThis.setTimeout;
const nativeSetInterval = globalThis.setInterval;
const nativeClearTimeout = globalThis.clearTimeout;
const nativeClearInterval = globalThis.clearInterval;

// timer id → [due time (Date.now() ms), period (0: once), whether the handler is a
// function]; an interval's due time is its next run's
const pageTimers = new SafeMap();
// A string handler cannot be wrapped: its timer is taken as done this long after its due.
const STRING_TIMER_SLACK_MS = 50;

function scheduled(native, repeats) {
  return function (handler, timeout) {
    const delay = typeof timeout === "number" && timeout > 0 ? timeout : 0;
    const period = repeats ? delay || 1 : 0;
    const isFunction = typeof handler === "function";
    // A null-prototype array-like: no page-defined index setter runs (Reflect.apply reads
    // `length` and the indices, no iterator).
    const args = { __proto__: null, length: arguments.length };
    for (let i = 0; i < arguments.length; i++) args[i] = arguments[i];
    let id;
    if (isFunction) {
      args[0] = function () {
        if (period) pageTimers.set(id, [DateNow() + period, period, true]);
        else pageTimers.delete(id);
        return ReflectApply(handler, this, arguments);
      };
    }
    id = ReflectApply(native, this, args);
    pageTimers.set(id, [DateNow() + delay, period, isFunction]);
    return id;
  };
}

function cleared(native) {
  return function (id) {
    pageTimers.delete(id);
    return ReflectApply(native, this, arguments);
  };
}

// Fetches and response-body reads the page awaits. The harness sees a request end in the
// network stack, but the page's script may not have its response yet (the body still on its
// way to the renderer, the promise unresolved, the tool its continuation registers not yet
// registered: a loaded machine shows it). Counted from the call until the promise settles;
// the count drops in a reaction registered before any of the page's, so by the time a
// `quiet` command (a task of its own) reads 0, the page's continuation has run.
let pageReads = 0;
function readDone() {
  pageReads--;
}

function counted(native) {
  return function () {
    const promise = ReflectApply(native, this, arguments);
    pageReads++;
    PromisePrototypeThen(promise, readDone, readDone);
    return promise;
  };
}

function installTimerWrapper(name, fn, length, target = ownWindow) {
  ObjectDefineProperty(fn, "name", { __proto__: null, value: name, configurable: true });
  ObjectDefineProperty(fn, "length", { __proto__: null, value: length, configurable: true });
  const own = ObjectGetOwnPropertyDescriptor(target, name);
  if (own === undefined || !own.writable || typeof own.value !== "function") return;
  ObjectDefineProperty(target, name, {
    __proto__: null,
    value: fn,
    writable: true,
    enumerable: own.enumerable,
    configurable: own.configurable,
  });
}

// How many of the page's timers are due within `withinMs` from now — or overdue: a timer
// whose turn came but that has not run yet (the page is busy) still counts.
function timersDueWithin(withinMs) {
  const now = DateNow();
  let due = 0;
  pageTimers.forEach((timer, id) => {
    if (!timer[2] && timer[0] + STRING_TIMER_SLACK_MS < now) {
      pageTimers.delete(id); // a string handler's timer: it has run by now
      return;
    }
    if (timer[0] <= now + withinMs) due++;
  });
  return due;
}

installTimerWrapper("setTimeout", scheduled(nativeSetTimeout, false), 1);
installTimerWrapper("setInterval", scheduled(nativeSetInterval, true), 1);
installTimerWrapper("clearTimeout", cleared(nativeClearTimeout), 0);
installTimerWrapper("clearInterval", cleared(nativeClearInterval), 0);
if (typeof ownWindow.fetch === "function") {
  installTimerWrapper("fetch", counted(ownWindow.fetch), 1);
}
if (typeof ownWindow.Response === "function") {
  const body = ownWindow.Response.prototype;
  const readers = ["json", "text", "arrayBuffer", "blob", "formData", "bytes"];
  for (let i = 0; i < readers.length; i++) {
    const name = readers[i];
    const own = ObjectGetOwnPropertyDescriptor(body, name);
    if (own !== undefined && typeof own.value === "function") {
      installTimerWrapper(name, counted(own.value), 0, body);
    }
  }
}
