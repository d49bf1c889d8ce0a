"""Which tests a checkout's ``webmcp/`` holds, by web-platform-tests' own rules.

The rules are those of WPT's manifest (``tools/manifest/sourcefile.py``), for the test types
this runner meets:

- ``.html``/``.htm``/``.xhtml``/``.xht``/``.svg`` files that load ``/resources/testharness.js``
  are testharness tests; ``<meta name="timeout" content="long">`` makes them long, each
  ``<meta name="variant" content="?…">`` (or ``#…``) is a test of its own;
- ``NAME.window.js`` is the test ``NAME.window.html``; ``NAME.any.js`` is one test per
  global scope its ``// META: global=`` names (default: window and dedicated worker), e.g.
  ``NAME.any.html`` and ``NAME.any.worker.html``; ``NAME.worker.js`` is
  ``NAME.worker.html``. Their ``// META:`` lines (at the top of the file) give ``script=``,
  ``timeout=long``, ``title=`` and ``variant=``;
- files in ``resources/``, ``support/``, ``tools/`` directories (``common/`` at the top),
  reference files (``-ref``, ``-notref``, ``/reference/``), manual tests (``-manual``),
  ``.headers``/``.ini`` files and ``META.yml`` are not tests.

What the runner cannot run is listed all the same, with the reason (:attr:`WptTest.skip`):
worker and shadow-realm scopes (it runs window scopes only), reftests, crashtests,
print and visual tests, tests that need ``testdriver.js`` (WebDriver actions) and the
``.h2.``/``.www.`` flags (HTTP/2, the ``www`` subdomain). They are reported ``SKIP``, never
as passes.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from harness.conformance.ids import apart, storable
from harness.errors import ConfigError

DEFAULT_TIMEOUT_S = 10.0
LONG_TIMEOUT_S = 60.0
NON_TEST_DIRS = {"resources", "support", "tools"}
TESTHARNESS_JS = "resources/testharness.js"
"""The checkout's file every testharness.js test page loads."""
MARKUP = (".html", ".htm", ".xhtml", ".xht", ".svg")

# `// META: key=value` lines, read from the top of a .js test until the first other line.
_JS_META = re.compile(r"//\s*META:\s*(\w*)=(.*)$")
_REFERENCE = re.compile(r"(^|[\-_])(not)?ref[0-9]*([\-_]|$)")
_TESTHARNESS = re.compile(r"""<script[^>]*\ssrc\s*=\s*["']?/resources/testharness\.js""", re.I)
_TESTDRIVER = re.compile(r"""<script[^>]*\ssrc\s*=\s*["']?/resources/testdriver\.js""", re.I)
_REFTEST = re.compile(r"""<link[^>]*\srel\s*=\s*["']?(?:mis)?match["'\s>]""", re.I)


def _meta_tags(text: str, name: str) -> list[str]:
    """The ``content`` of every ``<meta name=NAME content=…>`` of an HTML text."""
    found = []
    for tag in re.finditer(r"<meta\b[^>]*>", text, re.I):
        attributes = dict(
            (key.lower(), value)
            for key, _, value in re.findall(
                r"""([\w-]+)\s*=\s*(["']?)((?:(?!\2)[^>])*)\2""", tag.group(0)
            )
        )
        if attributes.get("name", "").lower() == name and "content" in attributes:
            found.append(attributes["content"])
    return found


# The global scopes of `.any.js` tests: each scope's test URL suffix; `worker` stands for
# three scopes. Only window scopes run here (a worker has no `document.modelContext`).
ANY_SCOPES: dict[str, str | None] = {
    "window": ".any.html",
    "window-module": ".any.window-module.html",
    "dedicatedworker": ".any.worker.html",
    "dedicatedworker-module": ".any.worker-module.html",
    "sharedworker": ".any.sharedworker.html",
    "sharedworker-module": ".any.sharedworker-module.html",
    "serviceworker": ".any.serviceworker.html",
    "serviceworker-module": ".any.serviceworker-module.html",
    "shadowrealm": ".any.shadowrealm.html",
    "jsshell": None,  # a JavaScript shell, not a browser: no test here
}
_SCOPE_LONGHANDS = {"worker": ("dedicatedworker", "sharedworker", "serviceworker")}
WINDOW_SCOPES = {"window", "window-module"}


def any_scopes(value: str) -> set[str]:
    """The scopes a ``// META: global=`` value names (WPT's ``parse_variants``); unknown
    names are ignored, as WPT ignores them."""
    if value.strip() == "":
        return {"window", "dedicatedworker"}
    scopes: set[str] = set()
    for item in value.split(","):
        item = item.strip()
        if item in _SCOPE_LONGHANDS:
            scopes.update(_SCOPE_LONGHANDS[item])
        elif item in ANY_SCOPES:
            scopes.add(item)
    return scopes


def js_metadata(text: str) -> list[tuple[str, str]]:
    """The ``// META: key=value`` pairs at the top of a .js test, in order."""
    pairs = []
    for line in text.splitlines():
        match = _JS_META.match(line)
        if not match:
            break
        pairs.append((match.group(1), match.group(2).strip()))
    return pairs


@dataclass(frozen=True)
class WptTest:
    """One test: its URL path (with its variant), its timeout, and why it is not run
    (``skip``; None when it runs)."""

    path: str
    timeout: float = DEFAULT_TIMEOUT_S
    skip: str | None = None
    test: str = ""
    """Its id in the reports: ``path`` itself, unless that is no file path wpt.fyi can store
    a result at (a variant's ``..``, a trailing ``/``: :mod:`harness.conformance.ids`).
    Set by :func:`discover`."""


_WINDOW_ONLY = "this runner runs window scopes only"
_TESTDRIVER_SKIP = (
    "needs testdriver.js (WebDriver actions), which this runner does not provide; "
    "run it with ./wpt run"
)


def _variants(found: list[str], where: str) -> list[str]:
    """The variants of a test (``[""]`` when it has none), checked as WPT checks them."""
    for variant in found:
        if variant and (variant[0] not in "?#" or len(variant) == 1 or variant[:2] == "?#"):
            raise ConfigError(
                f"{where}: variant {variant!r} must start with ? or # and not be empty "
                "(WPT's rule); fix the test or leave it out with --tests."
            )
    return found or [""]


def _markup_tests(url: str, text: str) -> list[WptTest]:
    timeout = DEFAULT_TIMEOUT_S
    if _REFTEST.search(text):
        return [WptTest(url, timeout, "a reftest: this runner compares no screenshots")]
    if not _TESTHARNESS.search(text):
        return []  # a support page, a reference, a manual test
    if any(value.strip().lower() == "long" for value in _meta_tags(text, "timeout")):
        timeout = LONG_TIMEOUT_S
    skip = _TESTDRIVER_SKIP if _TESTDRIVER.search(text) else None
    return [WptTest(url + v, timeout, skip) for v in _variants(_meta_tags(text, "variant"), url)]


def _script_tests(url_js: str, kind: str, text: str) -> list[WptTest]:
    """The tests of a ``.any.js``/``.window.js``/``.worker.js`` file (``url_js``: its path)."""
    meta = js_metadata(text)
    timeout = LONG_TIMEOUT_S if ("timeout", "long") in meta else DEFAULT_TIMEOUT_S
    variants = _variants([value for key, value in meta if key == "variant"], url_js)
    needs_driver = any(
        key == "script" and value.split("?")[0].endswith("/resources/testdriver.js")
        for key, value in meta
    )
    urls: dict[str, str | None]  # each test URL, and why it is not run
    if kind == "window":
        urls = {url_js[: -len(".js")] + ".html": None}
    elif kind == "worker":
        urls = {url_js[: -len(".js")] + ".html": f"a worker scope: {_WINDOW_ONLY}"}
    else:
        scopes = next((value for key, value in meta if key == "global"), "")
        urls = {}
        for scope in sorted(any_scopes(scopes)):
            suffix = ANY_SCOPES[scope]
            if suffix is None:
                continue
            reason = None if scope in WINDOW_SCOPES else f"the {scope} scope: {_WINDOW_ONLY}"
            urls[url_js.replace(".any.", ".")[: -len(".js")] + suffix] = reason
    tests = []
    for url, reason in urls.items():
        skip = reason or (_TESTDRIVER_SKIP if needs_driver else None)
        tests += [WptTest(url + v, timeout, skip) for v in variants]
    return tests


def _flag_skip(name: str) -> str | None:
    flags = name.split(".")[1:]
    if "h2" in flags:
        return "the .h2. flag: the test needs HTTP/2, which this runner does not serve"
    if "www" in flags:
        return "the .www. flag: the test needs the www subdomain, which this runner does not serve"
    return None


def _type_skip(name: str, relative: Path) -> str | None:
    stem = name.split(".")[0]
    kind = stem.rsplit("-", 1)[1] if "-" in stem else None
    if kind == "crash" or "crashtests" in relative.parts[:-1]:
        return "a crashtest: this runner runs testharness tests only"
    if kind == "print" or "print" in relative.parts[:-1]:
        return "a print reftest: this runner compares no screenshots"
    if kind == "visual":
        return "a visual test: this runner compares no screenshots"
    return None


def tests_of_file(root: Path, path: Path) -> list[WptTest]:
    """The tests one file of the checkout holds (none for a support file)."""
    relative = path.relative_to(root)
    name = path.name
    if (
        NON_TEST_DIRS & set(relative.parts[:-1])
        or relative.parts[0] == "common"
        or name.startswith(".")
        or name.endswith((".headers", ".ini"))
        or name == "META.yml"
        or name.startswith("MANIFEST")
    ):
        return []
    stem = name.split(".")[0]
    url = "/" + relative.as_posix()
    if stem.endswith("-manual") or "/reference/" in url or _REFERENCE.search(stem):
        return []  # manual tests and references: not tests WPT's runner runs either
    flags = name.split(".")[1:]
    if name.endswith(".js") and {"any", "window", "worker"} & set(flags[:-1]):
        kind = "any" if "any" in flags else "window" if "window" in flags else "worker"
        tests = _script_tests(url, kind, path.read_text(encoding="utf-8", errors="replace"))
    elif name.endswith(MARKUP):
        kind_skip = _type_skip(name, relative)
        if kind_skip is not None:  # crashtests and the like load no testharness.js
            return [WptTest(url, DEFAULT_TIMEOUT_S, kind_skip)]
        tests = _markup_tests(url, path.read_text(encoding="utf-8", errors="replace"))
    else:
        return []
    reason = _flag_skip(name)
    if reason is not None:
        tests = [WptTest(t.path, t.timeout, t.skip or reason) for t in tests]
    return tests


def discover(root: Path, include: list[str] | None = None) -> list[WptTest]:
    """The tests under ``root/webmcp`` (``include``: path prefixes like ``/webmcp/imperative``),
    those the runner cannot run among them (with :attr:`WptTest.skip`).

    Raises :class:`~harness.errors.ConfigError` when ``root`` has no ``webmcp/`` directory,
    or when a part of the checkout the run reads cannot be read (see :func:`_reading`).
    """
    with _reading(root):
        return _discover(root, include)


@contextlib.contextmanager
def _reading(root: Path) -> Iterator[None]:
    """What cannot be read of the checkout — the top, a directory of ``webmcp/``, a test
    file, ``resources/testharness.js`` — is the command line's mistake, said before any
    browser starts: a :class:`~harness.errors.ConfigError` naming the path, not an
    ``OSError`` ("could not run"), nor the silence of a directory skipped with its tests."""
    try:
        yield
    except OSError as exc:
        where = exc.filename or root
        raise ConfigError(
            f"--wpt-root {root}: cannot read {where} ({exc.strerror or exc}); make the "
            f"checkout readable to this user (chmod -R a+rX {root}), or pass --wpt-root a "
            "copy that is."
        ) from None


def _files(base: Path) -> list[Path]:
    """Every file under ``base``, sorted; a directory that cannot be listed raises its
    ``OSError`` (``Path.rglob`` skips it, and every test in it, without a word)."""

    def refuse(exc: OSError) -> None:
        raise exc

    found = []
    for directory, _, names in os.walk(base, onerror=refuse):
        found += [Path(directory, name) for name in names]
    return sorted(path for path in found if path.is_file())


def _discover(root: Path, include: list[str] | None) -> list[WptTest]:
    base = root / "webmcp"
    if not base.is_dir():
        raise ConfigError(
            f"{root} has no webmcp/ directory; pass --wpt-root the top of a web-platform-tests "
            "checkout. A cheap one (a few MB: webmcp/ and the resources it uses): git clone "
            "--depth 1 --filter=blob:none --sparse https://github.com/web-platform-tests/wpt "
            "&& git -C wpt sparse-checkout set webmcp resources common"
        )
    harness_js = root / TESTHARNESS_JS
    if harness_js.exists():  # every test page loads it: one it cannot have times out
        harness_js.open("rb").close()
    tests: list[WptTest] = []
    for path in _files(base):
        # Every test of a file starts with its directory and the name's first part: a file
        # outside `include` is not read (a broken test there is no concern of this run).
        common = "/" + path.relative_to(root).parent.as_posix() + "/" + path.name.split(".")[0]
        if include and not any(p.startswith(common) or common.startswith(p) for p in include):
            continue
        for test in tests_of_file(root, path):
            test = replace(test, test=storable(test.path))
            if not include or any(
                test.path.startswith(prefix) or test.test.startswith(prefix) for prefix in include
            ):
                tests.append(test)
    ids = apart(test.test for test in tests)
    seen: dict[str, str] = {}
    for test in tests:
        other = seen.setdefault(ids[test.test], test.path)
        if other != test.path:
            raise ConfigError(
                f"{other} and {test.path} both become the test {ids[test.test]!r} (a path "
                "wpt.fyi can store); rename a variant, or leave one out with --tests."
            )
    return [replace(test, test=ids[test.test]) for test in tests]
