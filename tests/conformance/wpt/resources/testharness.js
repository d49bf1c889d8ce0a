// A stand-in for web-platform-tests' resources/testharness.js (the project ships no WPT
// file): test(), promise_test() (one after another, as testharness.js runs them), the
// asserts the fixture tests use, and the callbacks a testharnessreport.js uses. Like the real
// one, it completes after load once every test has a result, and its global timeout() ends
// the tests still running.
(function () {
  const PASS = 0, FAIL = 1, TIMEOUT = 2;
  const tests = [], onResult = [], onComplete = [];
  let pending = 0, loaded = false, finished = false;
  let queue = Promise.resolve();
  function record(t, status, message) {
    if (t.status !== undefined) return;
    t.status = status; t.message = message; pending--;
    onResult.forEach((cb) => cb(t));
    if (loaded && pending === 0) finish(0);
  }
  function finish(status) {
    if (finished) return;
    finished = true;
    onComplete.forEach((cb) => cb(tests, {status, message: null}));
  }
  function newTest(name) {
    const t = {name, cleanups: []};
    t.add_cleanup = (f) => t.cleanups.push(f);
    t.step_timeout = (f, ms) => setTimeout(f, ms);
    tests.push(t); pending++;
    return t;
  }
  const cleanUp = (t) => t.cleanups.forEach((f) => { try { f(); } catch (e) {} });
  const failure = (e) => String((e && e.message) || e);
  window.test = (fn, name) => {
    const t = newTest(name);
    try { fn(t); record(t, PASS, null); } catch (e) { record(t, FAIL, failure(e)); }
    cleanUp(t);
  };
  window.promise_test = (fn, name) => {
    const t = newTest(name);
    queue = queue.then(() => fn(t)).then(
      () => record(t, PASS, null), (e) => record(t, FAIL, failure(e))).then(() => cleanUp(t));
  };
  const fail = (message) => { throw new Error(message); };
  window.assert_true = (value, what) => { if (value !== true) fail(`${what}: ${value} is not true`); };
  window.assert_false = (value, what) => { if (value !== false) fail(`${what}: ${value} is not false`); };
  window.assert_equals = (actual, expected, what) => {
    if (!Object.is(actual, expected)) fail(`${what}: expected ${expected} but got ${actual}`);
  };
  window.assert_array_equals = (actual, expected, what) => {
    const a = JSON.stringify(actual), e = JSON.stringify(expected);
    if (a !== e) fail(`${what}: expected ${e} but got ${a}`);
  };
  window.assert_unreached = (what) => fail(`reached unreachable code: ${what}`);
  window.promise_rejects_dom = (t, name, promise, what) => promise.then(
    () => fail(`${what}: resolved, expected a ${name} rejection`),
    (e) => { if (!(e instanceof DOMException) || e.name !== name) fail(`${what}: expected ${name} but got ${e && e.name}: ${e && e.message}`); });
  window.promise_rejects_js = (t, ctor, promise, what) => promise.then(
    () => fail(`${what}: resolved, expected a ${ctor.name} rejection`),
    (e) => { if (!(e instanceof ctor)) fail(`${what}: expected ${ctor.name} but got ${e && e.name}: ${e && e.message}`); });
  window.step_timeout = (f, ms) => setTimeout(f, ms);
  window.setup = () => {};
  window.add_result_callback = (cb) => onResult.push(cb);
  window.add_completion_callback = (cb) => onComplete.push(cb);
  window.timeout = () => {
    tests.forEach((t) => { if (t.status === undefined) record(t, TIMEOUT, "timed out"); });
    finish(2);
  };
  window.addEventListener("load", () => { loaded = true; if (pending === 0) finish(0); });
})();
