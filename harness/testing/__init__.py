"""Testing a site from pytest.

- ``plugin``: the pytest plugin (fixtures ``webmcp``, ``webmcp_harness``, ``webmcp_async``;
  loaded through the ``harness.pytest_plugin`` entry point);
- ``expect``: expect-style assertions (also importable as ``harness.expect``);
- ``page``: a synchronous session on pytest-playwright's ``page``.

A front end: may import the core, ``harness.agents``, ``harness.trace`` and everything
below them; never another front end.
"""
