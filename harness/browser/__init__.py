"""The browser: finding and launching Chromium, the injected script, frames, backends.

- ``chromium``: where Chromium is, and the flags it runs with; ``launch``: launching it
  (cheap to import, so a front end can start it first); ``marks``: the start's steps;
- ``cdp``: CDP through Playwright's sessions, without its conversion of every value;
- ``injection``: the injected JS (``injected_js/``) and its authenticated channel;
- ``frames``: which frames may offer tools, and their origins;
- ``console``: the page's console, each message with the origin of the frame (or worker)
  that logged it, as Chromium knows it;
- ``isolated``: reading a page it does not trust in worlds it cannot patch, within a time
  limit (the audit, the fuzzer's page state, experiments' checks, the doctor);
- ``backends/``: how tools are found and run in a page (``polyfill``, ``native``),
  behind one interface (``backends.base``).

May import: ``harness.models``, ``harness.errors``, ``harness.urls`` (URLs as the browser
reads them), ``harness.catalog``, ``harness.elicitation`` — nothing above (stages, the core, front ends). What the
layers above lend a backend (the form reviewer, the seed dialect's tools) it takes
through the protocols in ``backends.base``.
"""
