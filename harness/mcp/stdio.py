"""The stdio transport: the SDK's ``stdio_server``, with a stdin that Ctrl-C can stop and
an answer for every request, malformed ones too.

The SDK reads stdin in an AnyIO worker thread, and a thread blocked in ``read()`` cannot be
cancelled: on Ctrl-C (``asyncio.run`` cancels the command's task) its task group waited for
the next line the client sent, and the interpreter then waited for the (non-daemon) worker
thread — the server ignored Ctrl-C until a line arrived. Here stdin is read by a daemon
thread of our own that hands each line to the event loop: the loop's side of the hand-off
is cancellable, so the server stops at once (its browser closed on the way out), and the
thread, still blocked in ``read()``, ends with the process.

The SDK's transport hands a line it cannot read as a message (not JSON, or not a valid
JSON-RPC request) to the server as an exception, which the server's session drops, and a
request whose id MCP does not take (null, 1.5, true) as a notification, which nothing
answers: either way the client waiting on that id would wait for ever.
:class:`AnsweredReadStream` answers each such line as JSON-RPC 2.0 says, in its turn among
the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import threading
from collections import deque
from collections.abc import AsyncIterator
from typing import Any, cast

import anyio
import mcp.types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

log = logging.getLogger("harness.mcp.stdio")

LINES_AHEAD = 16
"""Lines the reader takes from stdin before the server asks for them (back-pressure, as the
SDK's own reader has)."""

_CHUNK = 65536


@contextlib.asynccontextmanager
async def stdio_streams() -> AsyncIterator[tuple[Any, Any]]:
    """The read and write streams of an MCP connection on this process's stdin and stdout.

    As with the SDK's ``stdio_server``: while they are open, fd 0 reads the null device and
    fd 1 writes to stderr (a handler's or child's stray output misses the wire), and both
    are restored on exit.
    """
    wire = _claim_stdin()
    try:
        lines = StdinLines(0 if wire is None else wire)
        # The SDK only iterates the stdin it is given (`async for line in stdin`).
        async with stdio_server(stdin=cast("anyio.AsyncFile[str]", lines)) as (read, write):
            yield AnsweredReadStream(read, write, lines.given), write
    finally:
        # The wire descriptor stays open: the reader thread may still be blocked on it.
        if wire is not None:
            with contextlib.suppress(OSError):
                os.dup2(wire, 0)


def _claim_stdin() -> int | None:
    """A private descriptor on the client's end of stdin, fd 0 now reading the null device;
    None when fd 0 cannot be moved (it is then read in place, as the SDK does)."""
    try:
        wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)  # above 0–2: never a std stream
    except OSError:
        return None
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
    except OSError:
        os.close(wire)
        return None
    return wire


class StdinLines:
    """The lines read from ``fd`` (newline included, undecodable bytes replaced), as an
    async iterator whose ``__anext__`` a cancellation stops at once.

    A daemon thread reads; at most :data:`LINES_AHEAD` lines wait for the loop.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()
        self._room = threading.Semaphore(LINES_AHEAD)
        self._done = False
        # Each line given out, until the message the SDK read from it is taken
        # (AnsweredReadStream): the line a message the SDK could not read came from.
        self.given: deque[str] = deque()

    def __aiter__(self) -> StdinLines:
        return self

    async def __anext__(self) -> str:
        if self._done:
            raise StopAsyncIteration
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            threading.Thread(target=self._read, name="mcp stdin", daemon=True).start()
        line = await self._lines.get()
        if line is None:
            self._done = True
            raise StopAsyncIteration
        self._room.release()
        self.given.append(line)
        return line

    def _read(self) -> None:
        # Raw os.read, no buffered file object: a daemon thread left blocked in a buffered
        # read holds that object's lock, which interpreter shutdown may then wait for.
        # A line's chunks are kept apart and joined once it ends: each byte is looked at
        # once however long the line (a client may send megabytes of arguments).
        pending: list[bytes] = []
        while True:
            try:
                chunk = os.read(self._fd, _CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                break
            *complete, rest = chunk.split(b"\n")
            for part in complete:
                pending.append(part)
                self._room.acquire()
                if not self._hand(b"".join(pending) + b"\n"):
                    return
                pending.clear()
            if rest:
                pending.append(rest)
        if pending:
            self._room.acquire()
            self._hand(b"".join(pending))
        self._hand(None)

    def _hand(self, line: bytes | None) -> bool:
        """Give the loop one line (None: end of input); False once the loop is gone."""
        assert self._loop is not None
        text = None if line is None else line.decode("utf-8", errors="replace")
        try:
            self._loop.call_soon_threadsafe(self._lines.put_nowait, text)
        except RuntimeError:  # the loop closed: the server stopped
            return False
        return True


class AnsweredReadStream:
    """The SDK's stdio read stream, less the lines it could not read: each is answered
    (:func:`answer_for`) on the write stream when the server would have read it, so in
    its turn among the other replies; a notification's only trace is a line on stderr.

    The SDK's transport reads one message or one exception from each line, in order:
    ``lines`` holds the lines it was given, so an exception's line is the oldest one.
    """

    def __init__(self, inner: Any, write_stream: Any, lines: deque[str]) -> None:
        self._inner = inner
        self._write = write_stream
        self._lines = lines

    @property
    def last_context(self) -> Any:
        """The sender's context of the last message (the SDK's serving loop reads it)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        while True:
            item = await self._inner.receive()
            line = self._lines.popleft() if self._lines else ""
            if isinstance(item, Exception):
                answer = answer_for(line, item)
            elif _with_an_id(item, line):
                answer = _error(None, types.INVALID_REQUEST, BAD_ID)
            else:
                return item
            if answer is not None:
                # A client that left takes no answer.
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await self._write.send(SessionMessage(answer))

    def __aiter__(self) -> AnsweredReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> AnsweredReadStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def answer_for(line: str, error: Exception) -> types.JSONRPCError | None:
    """The JSON-RPC 2.0 error that answers ``line``, which the SDK could not read as a
    message (``error``); None when nothing may answer it — a blank line, a notification
    (logged instead), or a response to one of the server's requests."""
    if not line.strip():
        return None
    try:
        message = json.loads(line)
    except ValueError as exc:
        return _error(None, types.PARSE_ERROR, f"Parse error: the line is not JSON ({exc}).")
    if isinstance(error, ValidationError) and error.errors()[0]["type"] == "json_invalid":
        # JSON to Python's parser, not to the SDK's (NaN, say).
        return _error(None, types.PARSE_ERROR, "Parse error: the line is not JSON.")
    if not isinstance(message, dict):
        return _error(
            None,
            types.INVALID_REQUEST,
            "Invalid Request: a message is one JSON object (batches are not supported).",
        )
    if "method" not in message and ("result" in message or "error" in message):
        log.warning("ignored a malformed response from the client: %s", _first(error))
        return None
    code, problem = _problem(message, error)
    if "id" not in message:  # a notification: JSON-RPC answers none
        log.warning("ignored a malformed notification from the client: %s", problem)
        return None
    request_id = message["id"]
    return _error(request_id if is_request_id(request_id) else None, code, problem)


def _with_an_id(item: Any, line: str) -> bool:
    """Whether the SDK read a request whose id MCP does not take (null, 1.5, true, a list)
    as a notification: its client waits for an answer, which a notification never gets."""
    if not isinstance(getattr(item, "message", None), types.JSONRPCNotification):
        return False
    try:
        message = json.loads(line)
    except ValueError:
        return False
    return isinstance(message, dict) and "id" in message


BAD_ID = 'Invalid Request: "id" must be a string or an integer.'


def _problem(message: dict[str, Any], error: Exception) -> tuple[int, str]:
    """What is wrong with a request or notification, and the JSON-RPC code that says it."""
    if message.get("jsonrpc") != "2.0":
        return types.INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0".'
    if not isinstance(message.get("method"), str):
        return types.INVALID_REQUEST, 'Invalid Request: "method" must be a string.'
    if "id" in message and not is_request_id(message["id"]):
        return types.INVALID_REQUEST, BAD_ID
    if message.get("params") is not None and not isinstance(message["params"], dict):
        return types.INVALID_PARAMS, 'Invalid params: "params" must be an object.'
    return types.INVALID_REQUEST, f"Invalid Request: {_first(error)}."


def is_request_id(value: object) -> bool:
    """Whether ``value`` is a request id MCP takes (a string or an integer)."""
    return isinstance(value, str | int) and not isinstance(value, bool)


def _first(error: Exception) -> str:
    """The first thing the SDK's validation found wrong, in one line."""
    if isinstance(error, ValidationError) and error.errors():
        return str(error.errors()[0]["msg"])
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def _error(request_id: str | int | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )
