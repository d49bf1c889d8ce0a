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
  configurations are two runs, told apart by their ``run_info``;
- then it stores the run for upload (``populate_upload_directory``): each result, gzipped
  JSON, at ``<directory>/<revision>/<product_id>`` + its ``test``, unstripped
  (``write_result_directory``: ``os.makedirs`` of the parent, then ``open(path, 'wb')``), and
  the directory goes to Cloud Storage (object names at most 1024 bytes). :func:`read` does it
  in a temporary directory: a test the file system refuses (a path ending in ``/``: a
  directory; a test that is another's directory; a NUL, a lone surrogate, a name too long)
  is refused as the processor would fail on it, and so is one it would store without a word
  where it loses a result or writes outside the run (``/a//b`` over ``/a/b``, ``..``).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import tempfile
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
OBJECT_NAME_BYTES = 1024
"""Cloud Storage's longest object name."""


class Refused(Exception):
    """What wpt.fyi's processor would refuse the report with (or crash on)."""


@dataclass
class Run:
    """A report as wpt.fyi would take it in."""

    run_info: dict[str, Any]
    summary: dict[str, list[int]] = field(default_factory=dict)
    """Per test: [passing subtests (and an OK/PASS harness status), total]."""
    hashsum: str = ""
    """SHA-1 of the chunks' bytes, one after the other."""
    stored: list[str] = field(default_factory=list)
    """Each result's file, relative to the run's directory, in the order it was written."""

    @property
    def product_id(self) -> str:
        """``product-browser_version-os[-os_version]-<hashsum[:10]>``, URL-safe, as the
        processor names the run."""
        info = self.run_info
        name = "-".join([info["product"], info["browser_version"], info["os"]])
        if info.get("os_version"):
            name += "-" + info["os_version"]
        name += "-" + self.hashsum[:10]
        return re.sub("[^A-Za-z0-9._-]", "_", name)


def read(*paths: Path) -> Run:
    """One run from one or more chunks; raises :class:`Refused` as wpt.fyi would."""
    run_info: dict[str, Any] = {}
    results: list[Any] = []
    hashsum = hashlib.sha1(usedforsecurity=False)
    for path in paths:
        hashsum.update(path.read_bytes())
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
    run = Run(run_info=run_info, hashsum=hashsum.hexdigest())
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
    with tempfile.TemporaryDirectory() as upload:
        _write_result_directory(run, results, Path(upload))
    return run


def read_tests(tests: list[str]) -> Run:
    """:func:`read` of a report whose results are ``tests`` (each ``OK``, no subtests)."""
    report = {
        "run_info": {
            "product": "chromium",
            "browser_version": "156",
            "os": "linux",
            "revision": "a" * 40,
        },
        "results": [{"test": test, "status": "OK", "subtests": []} for test in tests],
    }
    with tempfile.TemporaryDirectory() as where:
        path = Path(where) / "wptreport.json"
        path.write_text(json.dumps(report), encoding="utf-8")
        return read(path)


def _write_result_directory(run: Run, results: list[Any], upload: Path) -> None:
    """Store each result as the processor does, refusing what it would fail on, or store
    where a result is lost or outside the run."""
    name = f"{run.run_info['revision']}/{run.product_id}"
    directory = str(upload / name)
    written: dict[str, str] = {}
    for result in results:
        test = result["test"]
        path = directory + test
        # Where the file lands, read before anything is written (nothing outside the
        # temporary directory is touched): the processor would write there without a word.
        real = os.path.normpath(path)
        if os.path.commonpath([real, directory]) != directory or real == directory:
            raise Refused(f"test {test!r} is stored outside the run's directory")
        if real in written:
            raise Refused(f"test {test!r} is stored over the result of {written[real]!r}")
        try:
            if os.path.dirname(path):
                os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as handle, gzip.GzipFile(fileobj=handle, mode="wb") as gz:
                gz.write(json.dumps(result).encode("ascii"))
        except (OSError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
            raise Refused(f"test {test!r} cannot be stored: {type(exc).__name__}: {exc}") from exc
        written[real] = test
        relative = os.path.relpath(real, directory)
        if len(f"{name}/{relative}".encode()) > OBJECT_NAME_BYTES:
            raise Refused(f"test {test!r} is too long a name for Cloud Storage")
        run.stored.append(relative)
