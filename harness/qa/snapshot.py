"""A page's catalog as a stable, reviewable file: what agents can do there, to review in a
pull request and to compare after a deploy (:mod:`harness.qa.drift`).

The file is JSON with sorted keys, two-space indents and a trailing newline, so that the
same catalog always gives the same bytes and a change gives a small text diff::

    {
      "format": "webmcp-harness catalog/1",
      "tools": [
        {"annotations": {...}, "description": "...", "fingerprint": "sha256:…", "frame": "main",
         "inputSchema": {...}, "name": "add_todo", "origin": "self", "outputSchema": null,
         "source": "script", "title": null}
      ],
      "url": "http://127.0.0.1:8101/"
    }

A tool of the page's own origin has the origin ``"self"`` and a tool of the main frame the
frame ``"main"``; a frame of the page's own origin is named by its path (``"/inner.html"``),
another origin's frame by its origin and path: the same site served on another host or port
(staging, a test's free port) gives the same tools, and a frame loaded with a query new on every
load (``widget.html?cb=<Date.now()>``, to bust a cache) the same name. Two frames at one path
share the name; their tools stay apart by their names, which a page's catalog offers once each
(the second definition is refused), and a file that lists one tool twice is refused. The
fingerprint covers what an agent is shown (name, title, description, schemas, annotations,
source): one changed character changes it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.elicitation.wording import plain_json
from harness.errors import ConfigError, read_input_file
from harness.inputs import InputSyntaxError, parse_input
from harness.models import Tool
from harness.urls import origin_of, parse

CATALOG_FORMAT = "webmcp-harness catalog/1"
SELF_ORIGIN = "self"
MAIN_FRAME = "main"
# URL schemes whose URLs name a place (a host and a path) that a query does not change.
_PLACED = frozenset({"http:", "https:", "file:"})


class CatalogEntry(BaseModel):
    """One tool as the catalog file holds it."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    origin: str
    frame: str
    source: str
    name: str
    title: str | None = None
    description: str
    input_schema: dict[str, Any] = Field(alias="inputSchema")
    output_schema: dict[str, Any] | None = Field(default=None, alias="outputSchema")
    annotations: dict[str, Any] = Field(default_factory=dict)
    fingerprint: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        """What identifies the tool from one snapshot to the next: where it lives, its name."""
        return (self.origin, self.frame, self.name)

    def label(self) -> str:
        """The tool's name, with where it lives when that is not the page itself."""
        where = [p for p in (self.origin, self.frame) if p not in (SELF_ORIGIN, MAIN_FRAME)]
        return self.name + (f" ({', '.join(where)})" if where else "")


class CatalogSnapshot(BaseModel):
    """A catalog file: the page it was taken from and its tools, in a stable order."""

    model_config = ConfigDict(frozen=True)

    format: str = CATALOG_FORMAT
    url: str = ""
    tools: list[CatalogEntry] = Field(default_factory=list)

    def to_json(self) -> str:
        """The file's text: the same catalog always gives the same bytes, and no page text
        in it can drive a terminal (it is printed when no ``--output`` is given)."""
        data = self.model_dump(by_alias=True, mode="json")
        return plain_json(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False)) + "\n"

    def for_comparison(self) -> dict[str, Any]:
        """The tools alone (no URL, whose port a test picks), for a pytest snapshot."""
        data: dict[str, Any] = self.model_dump(by_alias=True, mode="json", exclude={"url"})
        return data


def fingerprint(tool: Tool) -> str:
    """``sha256:`` of what an agent is shown of ``tool`` (where it lives aside), as
    canonical JSON."""
    shown = {k: v for k, v in tool.public().items() if k not in ("origin", "frame")}
    text = json.dumps(shown, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def frame_name(frame_url: str, page_origin: str) -> str:
    """How the file names a frame: by its path when it is of the page's own (http) origin,
    so that the site on another host or port names it the same; another origin's (or a
    ``file:`` URL's) by its scheme, host and path; one that names no such place
    (``about:srcdoc``, ``data:``, ``blob:``) by its URL. Never with a query or fragment,
    which a page may make new on every load (``widget.html?cb=<Date.now()>``)."""
    if frame_url.startswith("/"):
        # A file written when the frame's query and fragment were kept.
        return frame_url.split("?", 1)[0].split("#", 1)[0]
    parsed = parse(frame_url)
    if parsed is None or parsed.protocol not in _PLACED:
        return frame_url
    if page_origin != "null" and origin_of(frame_url) == page_origin:
        return parsed.pathname
    return f"{parsed.protocol}//{parsed.host}{parsed.pathname}"


def _entry(tool: Tool, page_origin: str) -> CatalogEntry:
    frame = MAIN_FRAME if tool.frame == MAIN_FRAME else (tool.frame_url or tool.frame)
    return CatalogEntry(
        origin=SELF_ORIGIN if tool.origin == page_origin else tool.origin,
        frame=frame if frame == MAIN_FRAME else frame_name(frame, page_origin),
        source=tool.source,
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
        annotations=tool.annotations,
        fingerprint=fingerprint(tool),
    )


def snapshot_of(tools: Iterable[Tool], page_url: str) -> CatalogSnapshot:
    """The snapshot of a catalog read at ``page_url``."""
    page_origin = origin_of(page_url)
    entries = sorted((_entry(t, page_origin) for t in tools), key=lambda e: e.key)
    return CatalogSnapshot(url=page_url, tools=entries)


def read_snapshot(path: str | Path) -> CatalogSnapshot:
    """A catalog file, or a :class:`ConfigError` that says what is wrong with it."""
    text = read_input_file(path, "the catalog file")
    try:
        data = parse_input(text, "json", f"the catalog file {path}")
    except InputSyntaxError as exc:
        raise ConfigError(
            f"{path} is not JSON ({exc.detail}); give a file `webmcp-harness snapshot` wrote."
        ) from None
    if not isinstance(data, dict) or data.get("format") != CATALOG_FORMAT:
        raise ConfigError(
            f'{path} is not a catalog file (no "format": "{CATALOG_FORMAT}"); give a file '
            "`webmcp-harness snapshot URL --output FILE` wrote."
        )
    if not isinstance(data.get("tools"), list):
        # Every file snapshot writes lists its tools (an empty list for none): one without
        # them was cut short or edited, and would read as a catalog that lost every tool.
        raise ConfigError(
            f'{path} has no "tools" list; was it cut short or edited by hand? Take it again '
            "with `webmcp-harness snapshot URL --output FILE`."
        )
    try:
        snapshot = CatalogSnapshot.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = "/".join(str(p) for p in first["loc"])
        raise ConfigError(f"{path}: {where}: {first['msg']}; was it edited by hand?") from None
    snapshot = _frames_by_path(snapshot)
    seen: set[tuple[str, str, str]] = set()
    for tool in snapshot.tools:
        if tool.key in seen:
            # A diff matches tools by origin, frame and name: one would hide the other.
            raise ConfigError(
                f"{path} lists {tool.label()} twice (a frame named by its path, without its "
                "query); a page's catalog offers a name once. Was it edited by hand? Take it "
                "again with `webmcp-harness snapshot URL --output FILE`."
            )
        seen.add(tool.key)
    return snapshot


def _frames_by_path(snapshot: CatalogSnapshot) -> CatalogSnapshot:
    """A file written when a frame was named by its whole URL (port, query or fragment
    included), read as one written now: the page's own frame named by its path, another
    origin's by its origin and path."""
    page_origin = origin_of(snapshot.url)
    tools = [
        t.model_copy(update={"frame": frame_name(t.frame, page_origin)})
        if t.frame != MAIN_FRAME
        else t
        for t in snapshot.tools
    ]
    return snapshot.model_copy(update={"tools": sorted(tools, key=lambda e: e.key)})
