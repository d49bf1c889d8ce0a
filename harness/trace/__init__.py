"""Traces: what one run did, as typed events written from the agent view.

- ``events``: the event models, reading ``trace.jsonl``, events made from outcomes
  and records;
- ``recorder``: the run directory, the writer and its artifacts;
- ``view``: ``trace show`` and the live lines of ``agent``.

May import: the core and everything below it (``harness.session``, ``harness.stages``, …);
not ``harness.agents`` or a front end.
"""
