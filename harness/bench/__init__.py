"""The benchmark against the anchors: ``webmcp-harness bench``.

Every figure is measured next to its anchor in the same run, the variants interleaved
round by round (A, B, C, A, B, C, …), so a busy machine slows all of them alike:

- :mod:`harness.bench.pages` — the pages measured (a trivial tool, a large catalog, both
  declarative dialects), served on loopback;
- :mod:`harness.bench.timing` — interleaved rounds, medians with min–max;
- :mod:`harness.bench.suite` — the items: call overhead, discovery, declarative calls,
  throughput, redaction;
- :mod:`harness.bench.peers` — the MCP bridge against Playwright MCP, over stdio and HTTP,
  and its cold start step by step (:mod:`harness.browser.marks`);
- :mod:`harness.bench.cli_start` — ``tools``, ``call`` and ``--help`` from spawn to exit,
  against a bare Playwright script;
- :mod:`harness.bench.report` — the report model, its targets (PASS/MISS), JSON and Markdown.

A front end: it may import the core, the stages, the browser layer and the models, never
another front end (the CLI dispatches to it; it runs ``webmcp-harness mcp`` as a process).
"""

ITEMS = (
    "call",
    "discovery",
    "declarative",
    "throughput",
    "mcp",
    "cold_start",
    "cli_start",
    "redaction",
    "episodes",
)
"""Every item, by key, in the order a run measures them (``bench --only`` picks among them).
Here, not in the runner: the CLI's parser names them without loading the bench's stack."""
