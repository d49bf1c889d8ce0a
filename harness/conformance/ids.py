"""Test ids: paths every reader of the reports can store a result at.

wpt.fyi's results processor stores each result of a wptreport as a file at
``<run directory> + <test id>`` (``write_result_directory``: ``os.makedirs`` of the parent,
then ``open(path, 'wb')``), and WPT's own ids are such files (``/webmcp/foo.https.html``,
with a variant ``?1-10``). A test id is therefore a file path, and must be one:

- it never ends in ``/`` (a directory: ``IsADirectoryError``), and has no empty segment
  (``/a//b`` is stored over ``/a/b``);
- no segment is ``.`` or ``..`` (a result stored over another, or outside the run's
  directory), holds a NUL, a control character or a lone surrogate (no file name can);
- no segment is longer than a file name may be (255 bytes), nor the id longer than a
  storage object's name may be;
- no id of a run is the directory of another (``/a`` and ``/a/b``: one of the two cannot be
  written).

:func:`storable` repairs one id and leaves every id that already is such a path as it is
(WPT's own, the user-agent suite's); :func:`apart` repairs the ids of one run that meet as
file and directory; :func:`page_id` makes the id of an audited page from its URL. A repair
writes a name no URL path and no WPT file gives — a ``{…}`` segment, or ``%XX`` for a
character a browser would percent-encode — so that it never takes another page's id, and
depends on the id alone, so that every run gives it the same id.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

SEGMENT_BYTES = 255
"""The longest segment (in UTF-8 bytes): the longest file name Linux and macOS allow."""
ID_BYTES = 768
"""The longest id: wpt.fyi stores results as ``<revision>/<run>/<id>`` in Cloud Storage,
whose object names are at most 1024 bytes."""
INDEX = "{index}"
"""The last segment of a page whose URL path ends in ``/`` (a directory's page)."""
EMPTY = "{}"
"""A segment that was empty (``//`` in a URL path)."""
PAGE = "{page}"
"""Where a page's result goes when its id is the directory of another page's."""

_UNFIT = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")
# What a browser percent-encodes in a URL path (the URL standard's path percent-encode set),
# a backslash (read as '/'), braces (the repairs' own names), and a '%' that starts no escape;
# in a query, '/' too (a query names a page, not a directory).
_URL_UNFIT = re.compile('[\x00-\x20\x7f"#<>?`{}\\\\\ud800-\udfff]|%(?![0-9A-Fa-f]{2})')
_QUERY_UNFIT = re.compile('[\x00-\x20\x7f"#<>`{}/\\\\\ud800-\udfff]|%(?![0-9A-Fa-f]{2})')
_DOTS = {".": "%2E", "..": "%2E%2E"}
_DOT_SEGMENTS = {".", "%2e"}
_DOUBLE_DOT_SEGMENTS = {"..", ".%2e", "%2e.", "%2e%2e"}


def _percent(match: re.Match[str]) -> str:
    return "".join(f"%{byte:02X}" for byte in match.group(0).encode("utf-8", "surrogatepass"))


def _digest(text: str, size: int = 16) -> str:
    data = text.encode("utf-8", "surrogatepass")
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()[:size]


def _head(text: str, size: int) -> str:
    """The start of ``text`` that fits in ``size`` UTF-8 bytes, never cut inside an escape."""
    head = text.encode("utf-8", "surrogatepass")[:size].decode("utf-8", "ignore")
    return re.sub("%[0-9A-Fa-f]?$", "", head)


def _segment(segment: str, last: bool) -> str:
    if not segment:
        return INDEX if last else EMPTY
    fit = _DOTS.get(segment) or _UNFIT.sub(_percent, segment)
    if len(fit.encode("utf-8")) > SEGMENT_BYTES:
        # Cut, and told apart from every other cut by a digest of the whole segment.
        fit = _head(fit, SEGMENT_BYTES - 18) + "{" + _digest(segment) + "}"
    return fit


def storable(test: str) -> str:
    """``test`` as a path a reader can store a result at (see the module's rules);
    unchanged when it already is one."""
    segments = test.removeprefix("/").split("/")
    fit = "/" + "/".join(_segment(s, i == len(segments) - 1) for i, s in enumerate(segments))
    if len(fit.encode("utf-8")) > ID_BYTES:
        # Keep the whole segments that fit, and end in one named by a digest of the id.
        keep = fit[: len(_head(fit, ID_BYTES - 19))].rsplit("/", 1)[0]
        fit = f"{keep}/{{{_digest(test)}}}"
    return fit


def apart(tests: Iterable[str]) -> dict[str, str]:
    """The id of each of one run's ``tests``: itself, or ``<id>/{page}`` when it is the
    directory of another test's id (``/site/docs`` beside ``/site/docs/intro``), so that each
    result is a file of its own."""
    tests = list(tests)
    directories = {t[:i] for t in tests for i, c in enumerate(t) if c == "/" and i > 0}
    return {t: f"{t}/{PAGE}" if t in directories else t for t in tests}


def _resolved(path: str) -> str:
    """A URL path with its ``.`` and ``..`` segments resolved, as a browser resolves them
    (``%2e`` is a dot too) before it asks for the page."""
    segments: list[str] = []
    parts = path.replace("\\", "/").split("/")[1:]
    for i, segment in enumerate(parts):
        last = i == len(parts) - 1
        if segment.lower() in _DOUBLE_DOT_SEGMENTS:
            if segments:
                segments.pop()
            if last:
                segments.append("")
        elif segment.lower() in _DOT_SEGMENTS:
            if last:
                segments.append("")
        else:
            segments.append(segment)
    return "/" + "/".join(segments)


def url_path(path: str) -> str:
    """The path a browser asks for when given ``path``: dot segments resolved, a backslash
    read as ``/``."""
    return _resolved(path or "/")


def page_id(prefix: str, relative: str, query: str) -> str:
    """The id of a page: ``prefix`` (``/<site>``) and the page's URL path ``relative`` to
    it, its segments as :func:`storable` makes them and with what a browser would
    percent-encode percent-encoded (so ``/a b`` and ``/a%20b``, one page, are one id); the
    page of a directory is ``{index}``; a query stays, after a ``?``, with its ``/`` as
    ``%2F`` (it names the page, not a directory)."""
    path = "/".join(_URL_UNFIT.sub(_percent, s) for s in relative.split("/"))
    test = storable(f"{prefix}/{path}")
    if query:
        test += "?" + _QUERY_UNFIT.sub(_percent, query)
    return storable(test)
