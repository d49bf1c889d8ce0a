// META: global=worker
test(() => assert_true(typeof importScripts === "function", "importScripts"), "runs in workers only");
