// META: global=window-module
test(() => assert_equals(document.currentScript, null, "document.currentScript"), "runs as a module script");
