"""AgentDojo's suites as experiment suites: its tasks, attacks and checks over WebMCP.

AgentDojo (the ``agentdojo`` package, extra ``webmcp-harness[agentdojo]``) is imported,
never copied. Its four suites are served as sites of their own origin
(``sites/agentdojo_app.py``: the environment held by the site's server, AgentDojo's
functions as WebMCP tools); this package makes them tasks of a grid and judges them:

- ``suites``: ``suites = ["agentdojo:banking"]`` in a grid and the ``[agentdojo]`` table
  (version, cases, attacks, annotations) → one task per benign user task, per
  (user task, injection task) pair, or per injection task's ground truth;
- ``attacks``: the injections of an attacked episode — AgentDojo's attacks by name
  (its registry), and ``explicit_calls``, which states the injection task's
  ground-truth calls in the words the obedient agent obeys;
- ``judge``: the episode's start (environment, injections, the ground-truth plan the
  scripted agent follows) and AgentDojo's own ``utility()`` / ``security()`` checks
  on the environment before and after it, never re-implemented.

A part of the experiments front end: it may import what ``harness.experiments`` may.
"""

from __future__ import annotations
