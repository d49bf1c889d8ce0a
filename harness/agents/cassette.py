"""Cassettes: record an LLM agent's HTTP exchanges with its provider, and replay them.

A cassette sits under the official client library as its HTTP transport, so the
client builds and parses the same bytes in both modes. In ``record`` mode every
exchange goes to the provider and is appended to the cassette file (rewritten
after each exchange, so a crashed run keeps what it did). In ``replay`` mode
nothing leaves the machine: the n-th request must equal the n-th recorded one
(method, path and JSON body), and gets the recorded response; any other request
is a :class:`~harness.errors.CassetteError` that says where they differ. A
replayed run therefore repeats the recorded run exactly, usage included.

The file is JSON::

    {"cassette": "webmcp-harness", "version": 1, "interactions": [
      {"request":  {"method": "POST", "path": "/v1/chat/completions", "json": {...}},
       "response": {"status": 200, "headers": {"content-type": "application/json"},
                    "json": {...}}}]}

Request headers are never written (they carry the API key), nor the host (so a
cassette recorded against one port replays against any), nor the query string.
Of the response headers only those that change how the client behaves are kept.
Pages on loopback (the bundled sites, served on free ports) appear in the bodies
under new ports on every run: requests are compared with each loopback origin
numbered by its first appearance, so the same conversation with another run's
sites still matches, and one that mixes up two sites does not. Vault handles
(``wmh-secret-…``) are random per session and are compared the same way, by role
(:class:`~harness.agents.matching.HandleNumbering`). A replayed response may quote a
handle the recorded model was shown (a tool call that passes it on): each such
handle is replaced by the live session's handle that the matching request showed
in the same place, so the replayed run acts on handles that exist in it.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Final, Literal

import httpx2
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.agents.matching import HandleNumbering, differences, substitute_handles
from harness.errors import CassetteError

CassetteMode = Literal["record", "replay", "auto"]
FORMAT: Final = "webmcp-harness"
VERSION: Final = 1

# Response headers the client libraries act on (parsing, retries, request ids in errors).
KEPT_RESPONSE_HEADERS = (
    "content-type",
    "retry-after",
    "retry-after-ms",
    "x-should-retry",
    "x-request-id",
    "request-id",
)


class RecordedRequest(BaseModel):
    """What the agent sent: no headers, no host."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    method: str
    path: str
    json_body: Any = Field(default=None, alias="json")
    text: str | None = None


class RecordedResponse(BaseModel):
    """What the provider answered."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    status: int
    headers: dict[str, str] = Field(default_factory=dict)
    json_body: Any = Field(default=None, alias="json")
    text: str | None = None

    def content(self) -> bytes:
        """The body bytes to hand back to the client."""
        if self.text is not None:
            return self.text.encode("utf-8")
        return json.dumps(self.json_body, ensure_ascii=False).encode("utf-8")


class Interaction(BaseModel):
    """One request and its response."""

    model_config = ConfigDict(frozen=True)

    request: RecordedRequest
    response: RecordedResponse


class CassetteFile(BaseModel):
    """The on-disk shape of a cassette."""

    model_config = ConfigDict(frozen=True)

    cassette: Literal["webmcp-harness"] = FORMAT
    version: Literal[1] = VERSION
    interactions: list[Interaction] = Field(default_factory=list)


class Cassette:
    """A cassette file and the position of the run in it.

    ``mode="auto"`` replays when the file exists and records otherwise. One
    cassette serves one agent run; make a new :class:`Cassette` per run.
    """

    def __init__(self, path: str | Path, mode: CassetteMode = "auto") -> None:
        self.path = Path(path)
        if mode == "auto":
            mode = "replay" if self.path.exists() else "record"
        self.mode: Literal["record", "replay"] = mode
        self.interactions: list[Interaction] = []
        self.position = 0
        # Replaying: each recorded handle a matched request showed → the live one in its place.
        self.live_handles: dict[str, str] = {}
        if self.mode == "replay":
            self.interactions = list(_load(self.path).interactions)

    @property
    def replaying(self) -> bool:
        """True when no request leaves the machine."""
        return self.mode == "replay"

    @property
    def unused(self) -> int:
        """Recorded interactions the run has not (yet) asked for."""
        return len(self.interactions) - self.position if self.replaying else 0

    def transport(self, upstream: httpx2.AsyncClient | None = None) -> CassetteTransport:
        """An httpx2 transport for the client library; ``upstream`` sends when recording."""
        return CassetteTransport(self, upstream)

    def replay(self, request: RecordedRequest) -> RecordedResponse:
        """The recorded response to ``request``, which must be the next recorded one."""
        if self.position >= len(self.interactions):
            raise CassetteError(
                f"Cassette {self.path} holds {len(self.interactions)} requests, but the run "
                f"made a request #{self.position + 1} ({request.method} {request.path}). The run "
                "differs from the recorded one: record the cassette again (mode 'record')."
            )
        recorded = self.interactions[self.position]
        recorded_handles, sent_handles = HandleNumbering(), HandleNumbering()
        difference = _first_difference(recorded.request, request, recorded_handles, sent_handles)
        if difference is not None:
            raise CassetteError(
                f"Cassette {self.path}: request #{self.position + 1} does not match the "
                f"recording: {difference}. The run differs from the recorded one: record the "
                "cassette again (mode 'record')."
            )
        self.position += 1
        self.live_handles.update(recorded_handles.correspondence(sent_handles))
        response = recorded.response
        return response.model_copy(
            update={
                "json_body": substitute_handles(response.json_body, self.live_handles),
                "text": substitute_handles(response.text, self.live_handles),
            }
        )

    def record(self, interaction: Interaction) -> None:
        """Append one exchange and rewrite the file."""
        self.interactions.append(interaction)
        self.position = len(self.interactions)
        _save(self.path, CassetteFile(interactions=self.interactions))


class CassetteTransport(httpx2.AsyncBaseTransport):
    """The transport the client library sends through: it records or replays."""

    def __init__(self, cassette: Cassette, upstream: httpx2.AsyncClient | None) -> None:
        self.cassette = cassette
        self._upstream = upstream
        if not cassette.replaying and upstream is None:
            self._upstream = httpx2.AsyncClient()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        recorded_request = _recorded_request(request, await request.aread())
        if self.cassette.replaying:
            answer = self.cassette.replay(recorded_request)
            return httpx2.Response(
                answer.status, headers=answer.headers, content=answer.content(), request=request
            )
        assert self._upstream is not None  # set in __init__ whenever recording
        live = await self._upstream.send(request)
        body = live.content
        self.cassette.record(
            Interaction(request=recorded_request, response=_recorded_response(live, body))
        )
        headers = [(k, v) for k, v in live.headers.multi_items() if not _is_framing(k)]
        return httpx2.Response(live.status_code, headers=headers, content=body, request=request)

    async def aclose(self) -> None:
        if self._upstream is not None:
            await self._upstream.aclose()


def _is_framing(header: str) -> bool:
    # The body is handed over decoded and whole; these would describe the wire copy.
    return header.lower() in ("content-encoding", "content-length", "transfer-encoding")


def _recorded_request(request: httpx2.Request, body: bytes) -> RecordedRequest:
    parsed = _parse_json(body)
    return RecordedRequest(
        method=request.method,
        path=request.url.path,
        json_body=parsed,
        text=None if parsed is not None or not body else body.decode("utf-8", "replace"),
    )


def _recorded_response(response: httpx2.Response, body: bytes) -> RecordedResponse:
    parsed = _parse_json(body)
    headers = {k: response.headers[k] for k in KEPT_RESPONSE_HEADERS if k in response.headers}
    return RecordedResponse(
        status=response.status_code,
        headers=headers,
        json_body=parsed,
        text=None if parsed is not None else body.decode("utf-8", "replace"),
    )


def _parse_json(body: bytes) -> Any:
    if not body:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return None


_LOOPBACK_ORIGIN = re.compile(r"https?://(?:127\.\d+\.\d+\.\d+|localhost|\[::1\]):\d+")


def _numbered_origins(value: Any) -> Any:
    """``value`` with each loopback origin replaced by ``loopback-N`` (N: first appearance)."""
    seen: dict[str, str] = {}

    def name(match: re.Match[str]) -> str:
        return seen.setdefault(match.group(0), f"loopback-{len(seen) + 1}")

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return _LOOPBACK_ORIGIN.sub(name, item)
        if isinstance(item, dict):
            return {key: walk(member) for key, member in item.items()}
        if isinstance(item, list):
            return [walk(member) for member in item]
        return item

    return walk(value)


def _first_difference(
    recorded: RecordedRequest,
    sent: RecordedRequest,
    recorded_handles: HandleNumbering,
    sent_handles: HandleNumbering,
) -> str | None:
    """Where ``sent`` departs from ``recorded``, in words; ``None`` when equal.

    Loopback origins are numbered, and each side's handles read through its numbering.
    """
    if (recorded.method, recorded.path) != (sent.method, sent.path):
        return f"recorded {recorded.method} {recorded.path}, the run sent {sent.method} {sent.path}"

    def comparable(value: Any, handles: HandleNumbering) -> Any:
        return handles.read(_numbered_origins(value))

    if comparable(recorded.text, recorded_handles) != comparable(sent.text, sent_handles):
        return "the request bodies differ"
    found = differences(
        comparable(recorded.json_body, recorded_handles),
        comparable(sent.json_body, sent_handles),
    )
    if not found:
        return None
    shown = "; ".join(m.describe("recorded", "the run sent") for m in found[:3])
    more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
    return f"in the JSON body, {shown}{more}"


def _load(path: Path) -> CassetteFile:
    if not path.exists():
        raise CassetteError(
            f"No cassette at {path} to replay. Record one first (mode 'record' or 'auto')."
        )
    try:
        return CassetteFile.model_validate_json(path.read_bytes())
    except (OSError, ValidationError) as err:
        raise CassetteError(f"Cannot read the cassette {path}: {err}") from None


def _save(path: Path, cassette: CassetteFile) -> None:
    # Written to a temporary file and renamed, so a reader never sees half a cassette.
    path.parent.mkdir(parents=True, exist_ok=True)
    text = cassette.model_dump_json(by_alias=True, exclude_none=True, indent=2)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
