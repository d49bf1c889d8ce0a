"""The stdio transport answers every request, malformed ones too, as JSON-RPC 2.0 says:
-32700 for a line that is not JSON (id null), -32600 for a request object that is not
valid (its id when one can be read, else null), -32602 for params that are not an object.
A request whose id MCP does not take (null, 1.5, true, a list) is answered -32600 (id null).
A malformed notification is answered by nothing, and told on stderr in one line.

The bug: the SDK's stdio transport hands such lines to the server as exceptions, which its
session drops: no reply, nothing on stderr, and a client waiting on that id waits for ever
(the HTTP transport answers the same bodies with HTTP 400 and a JSON-RPC error).
"""

from __future__ import annotations

import asyncio
import json
import signal
from typing import Any

import pytest

from tests.conftest import PageServer
from tests.console_script import SCRIPT
from tests.interrupts import restore_sigint

pytestmark = pytest.mark.timeout(120)

ANSWER_TIMEOUT_S = 60.0  # a busy 2-core machine: Chromium's start and the page's settle

INITIALIZE = (
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    '"capabilities":{},"clientInfo":{"name":"test","version":"1"}}}'
)

# line → the error code and id of its answer (None: no answer)
MALFORMED: list[tuple[str, tuple[int, Any] | None]] = [
    ('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":"notanobject"}', (-32602, 9)),
    ('{"jsonrpc":"1.0","id":"ten","method":"tools/list"}', (-32600, "ten")),
    ('{"jsonrpc":"2.0","id":11}', (-32600, 11)),
    ('{"jsonrpc":"2.0","id":12,"method":7}', (-32600, 12)),
    ('{"jsonrpc":"2.0","id":[13],"method":"tools/list","params":1}', (-32600, None)),
    # The SDK reads these as notifications (nothing would answer them); MCP's ids are
    # strings and integers, never null.
    ('{"jsonrpc":"2.0","id":null,"method":"tools/list"}', (-32600, None)),
    ('{"jsonrpc":"2.0","id":1.5,"method":"ping"}', (-32600, None)),
    ('{"jsonrpc":"2.0","id":true,"method":"ping"}', (-32600, None)),
    ('{"jsonrpc":"2.0","id":[14],"method":"ping"}', (-32600, None)),
    ("{garbage", (-32700, None)),
    ("[1, 2]", (-32600, None)),
    ('{"jsonrpc":"2.0","method":"notifications/initialized","params":"x"}', None),
]


async def test_every_malformed_request_is_answered_in_order(page_server: PageServer) -> None:
    process = await asyncio.create_subprocess_exec(
        SCRIPT,
        "mcp",
        page_server.url("cli_contract.html"),
        "--settle",
        "100",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=restore_sigint,
    )
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None
    try:
        lines = [
            INITIALIZE,
            '{"jsonrpc":"2.0","method":"notifications/initialized"}',
            *(line for line, _ in MALFORMED),
            '{"jsonrpc":"2.0","id":99,"method":"ping"}',  # valid, after them all
        ]
        process.stdin.write("".join(line + "\n" for line in lines).encode())
        await process.stdin.drain()
        answers: list[dict[str, Any]] = []
        async with asyncio.timeout(ANSWER_TIMEOUT_S):
            while not answers or answers[-1].get("id") != 99:
                line = await process.stdout.readline()
                if not line:
                    await process.wait()
                    told = (await process.stderr.read()).decode()
                    pytest.fail(f"the server closed stdout, exit {process.returncode}: {told}")
                answers.append(json.loads(line))
        process.send_signal(signal.SIGINT)
        await asyncio.wait_for(process.wait(), 30)
        stderr = (await process.stderr.read()).decode()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()

    assert answers[0]["id"] == 1 and "result" in answers[0]  # the handshake: first
    errors = [(a["error"]["code"], a["id"]) for a in answers[1:-1]]
    assert errors == [expected for _, expected in MALFORMED if expected is not None]
    assert answers[-1] == {"jsonrpc": "2.0", "id": 99, "result": {}}
    told = [line for line in stderr.splitlines() if "malformed notification" in line]
    assert len(told) == 1 and '"params" must be an object' in told[0], stderr
    assert "Traceback" not in stderr, stderr
