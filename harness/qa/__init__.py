"""The QA tools: property tests of a site's tools from their schemas, catalog snapshots and
their drift, and the doctor that says why WebMCP is (not) in a page.

- :mod:`~harness.qa.snapshot`: a catalog as a stable, reviewable file (and a fingerprint
  per tool);
- :mod:`~harness.qa.drift`: what changed between two snapshots, each change with a
  severity CI can gate on (:mod:`~harness.qa.schema_change`: which way a schema changed);
- :mod:`~harness.qa.strategies`, :mod:`~harness.qa.observe`, :mod:`~harness.qa.properties`,
  :mod:`~harness.qa.fuzz`: inputs generated from each ``inputSchema`` (Hypothesis and
  hypothesis-jsonschema), what a call did to the page, the named properties, and the run
  that shrinks a failure to a minimal input with a reproduction (its options and report:
  :mod:`~harness.qa.fuzz_report`; a schema in hypothesis-jsonschema's Draft 7 words:
  :mod:`~harness.qa.draft7`; values of the formats the harness checks and it does not draw:
  :mod:`~harness.qa.formats`);
- :mod:`~harness.qa.doctor`: the checks of ``webmcp-harness doctor``.

A library the front ends share, as ``agents`` is: the CLI's commands, the pytest plugin's
``webmcp.fuzz()`` / ``webmcp.catalog_snapshot()`` and the site audit's options all use it.
May import the core and everything below it, never a front end.
"""

from pathlib import Path

# What the commands' parsers show in --help: here, so that a parser (and --help) imports
# none of the fuzzer's stack (Hypothesis, pydantic); harness.qa.fuzz and .properties use
# them (a test checks PROPERTY_NAMES against PROPERTIES).
DEFAULT_EXAMPLES = 25
"""Inputs tried per tool, property set and kind of input, by default."""
DEFAULT_DATABASE = Path(".hypothesis") / "examples"
"""Where found failures are kept and replayed first, by default (Hypothesis's own)."""
PROPERTY_NAMES = (
    "no-throw",
    "output-schema",
    "sensitive-marked",
    "read-only",
    "idempotent",
    "no-navigation",
    "invalid-refused",
    "form-constraints",
)
"""The fuzzer's named properties (:data:`harness.qa.properties.PROPERTIES`), in order."""


class FuzzUnchecked(UserWarning):
    """The pytest plugin's ``webmcp.fuzz()`` found no failure, but some properties of the
    tools it called could not be checked (no inputs could be made from a schema, a tool
    went away during the run): the warning's text is the report, each with why."""
