// The checkout's own report script: it keeps the results in the page (a run that injects
// nothing reads them there). The WPT runner must serve its own instead.
add_completion_callback((tests, status) => {
  window.wptResults = {status: status.status,
    tests: tests.map((t) => ({name: t.name, status: t.status, message: t.message}))};
});
