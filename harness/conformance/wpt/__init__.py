"""The web-platform-tests runner: a checkout's ``webmcp/`` tests, in Chromium, in three
configurations (``native``: Chromium's own WebMCP with nothing injected; ``native+layer``:
with the harness's layer; ``polyfill``).

- :mod:`~harness.conformance.wpt.manifest` — which tests the checkout holds, by WPT's rules
  (file names, ``// META:`` lines, variants), and which of them the runner cannot run;
- :mod:`~harness.conformance.wpt.server` — serves the checkout as wptserve does (generated
  ``.any.html``/``.window.html`` pages, ``.headers`` files, ``.sub.`` substitution);
- :mod:`~harness.conformance.wpt.runner` — the configurations, and running them into a
  wptreport.

Part of the conformance front end: it may import what :mod:`harness.conformance` may (the
core, the stages, the models), never another front end.
"""

from harness.conformance.wpt.manifest import WptTest, discover
from harness.conformance.wpt.runner import CONFIGURATIONS, Configuration, configuration, run_wpt

__all__ = ["CONFIGURATIONS", "Configuration", "WptTest", "configuration", "discover", "run_wpt"]
