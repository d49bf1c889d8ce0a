"""The stages: one duty of the user agent each, plain Python over plain data.

A stage takes a typed value (a :class:`~harness.models.CallRequest`, a result) and
returns one; it never reaches back into a front end. In the order a call meets them:

- ``validation``: arguments against the tool's ``inputSchema``; ``reasons`` words why a
  value does not fit a page's schema without quoting the page's text;
- ``trust``: the SEP's annotations, ``resolve()``, the session's trust state;
- ``policy``: block / escalate rules (packs are data files in ``packs/``) and the audit;
- ``normalization``: what the page returned, as an MCP ``CallToolResult``;
- ``redaction``, ``vault``, ``redemption``: secrets withheld, kept for the user, redeemed;
  ``sensitivity`` finds where an ``outputSchema`` marks them, ``scrubbing`` replaces what
  a session withheld on every channel an agent reads;
- ``framing``: page-provided text marked as untrusted data;
- ``navigation``: consent for an agent's navigation that leaves the start origin.

May import: ``harness.models``, ``harness.errors``, ``harness.inputs``, ``harness.schemas``,
``harness.urls``, ``harness.catalog``, ``harness.elicitation``, ``harness.browser`` — not the
core (``pipeline``, ``session``, ``harness``), ``harness.declarative`` or any front end.
"""
