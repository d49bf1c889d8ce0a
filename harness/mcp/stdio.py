"""The stdio transport: the SDK's ``stdio_server``, with a stdin that Ctrl-C can stop.

The SDK reads stdin in an AnyIO worker thread, and a thread blocked in ``read()`` cannot be
cancelled: on Ctrl-C (``asyncio.run`` cancels the command's task) its task group waited for
the next line the client sent, and the interpreter then waited for the (non-daemon) worker
thread — the server ignored Ctrl-C until a line arrived. Here stdin is read by a daemon
thread of our own that hands each line to the event loop: the loop's side of the hand-off
is cancellable, so the server stops at once (its browser closed on the way out), and the
thread, still blocked in ``read()``, ends with the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import threading
from collections.abc import AsyncIterator
from typing import Any, cast

import anyio
from mcp.server.stdio import stdio_server

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
        async with stdio_server(stdin=cast("anyio.AsyncFile[str]", lines)) as streams:
            yield streams
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
