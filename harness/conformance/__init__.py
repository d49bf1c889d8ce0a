"""Conformance for CI: the user-agent suite, the site audit, the WPT runner, and their reports.

- :mod:`harness.conformance.ua` — does this user agent (the harness on one backend) meet the
  MUSTs of the WebMCP spec and of the seeds? Tests laid out like web-platform-tests, on
  fixture pages the project serves on loopback.
- :mod:`harness.conformance.audit` (rules in :mod:`~harness.conformance.findings`, calls in
  :mod:`~harness.conformance.probes`) — what is wrong with a site's tools before an agent
  finds out.
- :mod:`harness.conformance.wpt` — a web-platform-tests checkout's ``webmcp/`` directory,
  run through the polyfill or natively.
- :mod:`harness.conformance.results` (the wptreport model), :mod:`~harness.conformance.baseline`
  (expected results, unexpected ones, ``--diff``) and :mod:`~harness.conformance.reports`
  (wptreport JSON, JUnit XML, HTML, Markdown) are shared by all three.

A front end: it may import the core (``harness.harness``, ``harness.session``), ``agents``,
``trace``, the stages and the models, never another front end (the CLI dispatches to it).
"""
