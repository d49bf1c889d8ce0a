// META: variant=?first
// META: variant=?second
test(() => assert_true(GLOBAL.isWindow(), "GLOBAL.isWindow()"), "an .any.js test runs in a window");
test(
  () => assert_true(["?first", "?second"].includes(location.search), `location.search ${location.search}`),
  "its variant is its query",
);
