"""The reliability selftest (``webmcp-harness selftest``): hostile pages, bad input and
load, against a real browser, with a report anyone can regenerate.

- ``pages``: the project's hostile pages (``pages/*.html``) and their loopback server;
- ``faults``: fault scenarios, each ending clearly with a usable (or recovered) session;
- ``inputs``: malformed tool definitions, names, schemas, arguments, policy and answers files;
- ``load``: calls over concurrent pages, none lost, duplicated or crossed;
- ``bridge``: the MCP bridge, run as ``webmcp-harness mcp`` in its own process, under load
  and bad requests;
- ``report``: ``reports/reliability.{md,json}``; ``runner``: the quick and full runs.

A front end: may import the core, ``harness.agents``, ``harness.trace`` and everything
below them; never another front end (the MCP bridge is driven from outside, over HTTP).
"""
