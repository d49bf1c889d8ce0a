test(() => assert_true(typeof importScripts === "function", "importScripts"), "a .worker.js test");
