"""A reader of wptreport JSON that applies the checks of wpt.fyi's results processor
(``results-processor/wptreport.py`` in web-platform-tests/wpt.fyi), written here from its
behaviour: what makes it refuse a report, or crash on one.

- the file is UTF-8 JSON with a ``results`` list;
- each result has a ``test`` that, stripped, starts with ``/`` (results are stored at that
  path: a URL crashes the processor), a ``status`` and a ``subtests`` list whose items have a
  ``status``; no test appears twice (``ConflictingDataError``);
- ``run_info`` has ``product``, ``browser_version``, ``os`` and ``revision`` (a missing one is
  ``MissingMetadataError``; ``revision[:10]`` must be a string: the WPT commit, 40 hex
  digits) and, after its normalisation of a few product names, ``product`` is a browser
  wpt.fyi knows;
- chunks of one run merge only when their ``run_info`` agree (``ConflictingDataError``), so two
  configurations are two runs, told apart by their ``run_info``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# wpt.fyi's shared/browsers.go: the default browsers and the extra known ones.
KNOWN_BROWSERS = frozenset(
    {
        "chrome",
        "edge",
        "firefox",
        "safari",
        "android_webview",
        "chrome_android",
        "chrome_ios",
        "chromium",
        "deno",
        "epiphany",
        "firefox_android",
        "flow",
        "ladybird",
        "node.js",
        "servo",
        "uc",
        "wktr",
        "webkitgtk",
        "wpewebkit",
    }
)
NORMALISED = {
    "edge_webdriver": "edge",
    "edgechromium": "edge",
    "webkitgtk_minibrowser": "webkitgtk",
}
REQUIRED_METADATA = ("product", "browser_version", "os", "revision")
REVISION = re.compile(r"^[0-9a-f]{40}$")


class Refused(Exception):
    """What wpt.fyi's processor would refuse the report with (or crash on)."""


@dataclass
class Run:
    """A report as wpt.fyi would take it in."""

    run_info: dict[str, Any]
    summary: dict[str, list[int]] = field(default_factory=dict)
    """Per test: [passing subtests (and an OK/PASS harness status), total]."""

    @property
    def product_id(self) -> str:
        """``product-browser_version-os``, URL-safe, as the processor names the run."""
        info = self.run_info
        name = "-".join([info["product"], info["browser_version"], info["os"]])
        return re.sub("[^A-Za-z0-9._-]", "_", name)


def read(*paths: Path) -> Run:
    """One run from one or more chunks; raises :class:`Refused` as wpt.fyi would."""
    run_info: dict[str, Any] = {}
    results: list[Any] = []
    for path in paths:
        try:
            data = json.loads(path.read_bytes().decode("utf-8"), strict=False)
        except (UnicodeDecodeError, ValueError) as exc:
            raise Refused(f"{path}: invalid JSON ({exc})") from exc
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            raise Refused(f"{path}: missing 'results' field")
        results += data["results"]
        for key, value in (data.get("run_info") or {}).items():
            if key in run_info and run_info[key] != value:
                raise Refused(f"conflicting {key!r} found in the merged report")
            run_info[key] = value
        for key in ("time_start", "time_end"):
            if key in data and not isinstance(data[key], (int, float)):
                raise Refused(f"{path}: {key} is not a number")
    for key in REQUIRED_METADATA:
        if key not in run_info:
            raise Refused(f"missing required metadata {key!r}")
    if not isinstance(run_info["revision"], str) or not REVISION.match(run_info["revision"]):
        raise Refused(f"revision {run_info['revision']!r} is not a full commit hash")
    product = NORMALISED.get(run_info["product"], run_info["product"])
    if product not in KNOWN_BROWSERS:
        raise Refused(f"product {run_info['product']!r} is no browser wpt.fyi knows")
    run = Run(run_info=run_info)
    for result in results:
        try:
            test = result["test"].strip()
            passed = 1 if result["status"] in ("OK", "PASS") else 0
            counts = [passed, 1]
            for subtest in result["subtests"]:
                counts[0] += subtest["status"] == "PASS"
                counts[1] += 1
        except (KeyError, TypeError, AttributeError) as exc:
            raise Refused(f"a result lacks {exc}: {str(result)[:200]}") from exc
        if not test.startswith("/"):
            raise Refused(f"test {test!r} is not a path starting with '/'")
        if test in run.summary:
            raise Refused(f"conflicting {test!r} found in the merged report")
        run.summary[test] = counts
    return run
