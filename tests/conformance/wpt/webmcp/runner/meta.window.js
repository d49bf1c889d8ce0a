// META: title=The META lines of a .window.js test
// META: script=/webmcp/resources/helpers.js
// META: script=support/local-helper.js
// META: timeout=long
test(() => assert_true(window.sharedHelperLoaded, "sharedHelperLoaded"), "META: script= loads an absolute path");
test(() => assert_true(window.localHelperLoaded, "localHelperLoaded"), "META: script= loads a relative path");
test(
  () => assert_equals(document.title, "The META lines of a .window.js test", "document.title"),
  "META: title= becomes the title",
);
test(() => {
  const meta = document.querySelector('meta[name="timeout"]');
  assert_equals(meta && meta.content, "long", "the timeout meta");
}, "META: timeout=long becomes the timeout meta");
