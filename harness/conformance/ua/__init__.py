"""The user-agent suite: does this user agent meet the MUSTs of the WebMCP spec and the seeds?

Tests are laid out like web-platform-tests — ``/webmcp/imperative/…``,
``/webmcp/declarative/…``, ``/seeds/sensitive/…``, ``/seeds/trust/…``,
``/seeds/declarative-draft/…``, ``/seeds/elicitation/…``, ``/seeds/script-tools/…`` — one
module per area, each a set of :class:`~harness.conformance.ua.framework.TestFile` objects on
fixture pages (``pages/``) served on loopback by :mod:`~harness.conformance.ua.server`.
:mod:`~harness.conformance.ua.suite` runs them on a backend and returns a wptreport;
``baseline.yml`` holds this harness's expected results, with the reason for each.

Part of the conformance front end: it may import what :mod:`harness.conformance` may (the
core, the stages, the models), never another front end.
"""
