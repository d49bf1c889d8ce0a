"""The bundled sites over plain HTTP: the todo JSON API, reset, the request log, origins.

No browser here; the pages and their tools are exercised by the browser tests.
"""

from __future__ import annotations

import asyncio
import signal
import socket
import sys
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from harness.sites import server, todo_app
from harness.sites.server import RunningSites, SiteSpec, serve_sites

SEED = [
    {"id": 1, "text": "Buy oat milk", "done": False},
    {"id": 2, "text": "Send the quarterly report to Dana", "done": False},
    {"id": 3, "text": "Renew the library card", "done": True},
]


@pytest.fixture
async def sites() -> AsyncIterator[RunningSites]:
    async with serve_sites(["todo"]) as running:
        yield running


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def call(
    http: aiohttp.ClientSession, sites: RunningSites, method: str, path: str, **kwargs: Any
) -> tuple[int, Any]:
    """Send one request to the todo site; the status and the decoded JSON answer."""
    async with http.request(method, sites.url("todo", path), **kwargs) as response:
        assert response.content_type == "application/json", await response.text()
        return response.status, await response.json()


# -- the JSON API -------------------------------------------------------------------------


async def test_lists_the_seed_todos(sites: RunningSites, http: aiohttp.ClientSession) -> None:
    assert await call(http, sites, "GET", "/api/todos") == (200, {"todos": SEED})
    assert await call(http, sites, "GET", "/api/todos?status=open") == (200, {"todos": SEED[:2]})
    assert await call(http, sites, "GET", "/api/todos?status=done") == (200, {"todos": SEED[2:]})
    assert await call(http, sites, "GET", "/api/todos/2") == (200, {"todo": SEED[1]})


async def test_add_returns_the_new_todo_and_lists_it(
    sites: RunningSites, http: aiohttp.ClientSession
) -> None:
    status, body = await call(http, sites, "POST", "/api/todos", json={"text": "Water plants"})
    assert (status, body) == (201, {"todo": {"id": 4, "text": "Water plants", "done": False}})
    _, listed = await call(http, sites, "GET", "/api/todos")
    assert listed["todos"][-1] == body["todo"]


async def test_complete_is_idempotent(sites: RunningSites, http: aiohttp.ClientSession) -> None:
    done = {"todo": {**SEED[0], "done": True}}
    assert await call(http, sites, "POST", "/api/todos/1/complete") == (200, done)
    assert await call(http, sites, "POST", "/api/todos/1/complete") == (200, done)
    _, open_todos = await call(http, sites, "GET", "/api/todos?status=open")
    assert [todo["id"] for todo in open_todos["todos"]] == [2]


async def test_delete_removes_the_todo_for_good(
    sites: RunningSites, http: aiohttp.ClientSession
) -> None:
    assert await call(http, sites, "DELETE", "/api/todos/3") == (
        200,
        {"todo": SEED[2], "deleted": True},
    )
    assert await call(http, sites, "DELETE", "/api/todos/3") == (
        404,
        {"error": "No todo with id 3"},
    )
    # A deleted id is never reused, so the error above stays true after an add.
    _, added = await call(http, sites, "POST", "/api/todos", json={"text": "New"})
    assert added["todo"]["id"] == 4


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/todos/7"),
        ("POST", "/api/todos/7/complete"),
        ("DELETE", "/api/todos/7"),
    ],
)
async def test_unknown_id_is_a_404_with_a_json_error(
    sites: RunningSites, http: aiohttp.ClientSession, method: str, path: str
) -> None:
    assert await call(http, sites, method, path) == (404, {"error": "No todo with id 7"})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"json": {}}, "text is required"),
        ({"json": {"text": 5}}, "must be a string"),
        ({"json": {"text": ""}}, "must not be empty"),
        ({"json": {"text": "   "}}, "must not be empty or blank"),
        ({"json": {"text": "x" * 201}}, "at most 200"),
        ({"json": {"text": "ok", "due": "today"}}, "unknown field(s): due"),
        ({"json": ["text"]}, "must be a JSON object"),
        ({"data": "text=hi"}, "not valid JSON"),
        ({"data": b"\xff\xfe"}, "not valid JSON"),
    ],
)
async def test_bad_new_todo_is_a_400_with_a_message(
    sites: RunningSites, http: aiohttp.ClientSession, kwargs: dict[str, Any], message: str
) -> None:
    status, body = await call(http, sites, "POST", "/api/todos", **kwargs)
    assert status == 400
    assert message in body["error"]
    assert await call(http, sites, "GET", "/api/todos") == (200, {"todos": SEED})


async def test_longest_allowed_text_is_accepted(
    sites: RunningSites, http: aiohttp.ClientSession
) -> None:
    text = "x" * todo_app.MAX_TEXT_LENGTH
    status, body = await call(http, sites, "POST", "/api/todos", json={"text": text})
    assert status == 201
    assert body["todo"]["text"] == text


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/api/todos?status=closed", "status must be one of all, open, done"),
        ("/api/todos/abc", "id must be a positive integer"),
        ("/api/todos/-1", "id must be a positive integer"),
        ("/api/todos/%2B1", "id must be a positive integer"),
    ],
)
async def test_bad_query_or_id_is_a_400(
    sites: RunningSites, http: aiohttp.ClientSession, path: str, message: str
) -> None:
    status, body = await call(http, sites, "GET", path)
    assert status == 400
    assert message in body["error"]


async def test_too_large_a_body_is_a_json_413_and_logged(
    sites: RunningSites, http: aiohttp.ClientSession
) -> None:
    status, body = await call(http, sites, "POST", "/api/todos", data=b"x" * (2 * 1024 * 1024))
    assert status == 413
    assert body["error"].startswith("Request Entity Too Large: POST /api/todos: Maximum request")
    assert [(e.method, e.path, e.body) for e in sites.requests("todo")] == [
        ("POST", "/api/todos", "")
    ]


async def test_unknown_route_and_wrong_method_answer_in_json(
    sites: RunningSites, http: aiohttp.ClientSession
) -> None:
    assert await call(http, sites, "GET", "/nowhere") == (
        404,
        {"error": "Not Found: GET /nowhere"},
    )
    async with http.put(sites.url("todo", "/api/todos")) as response:
        assert response.status == 405
        assert "POST" in response.headers["Allow"]
        assert await response.json() == {"error": "Method Not Allowed: PUT /api/todos"}


async def test_a_crash_is_a_json_500_without_a_traceback(
    sites: RunningSites, http: aiohttp.ClientSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(status: str = "all") -> list[todo_app.Todo]:
        raise RuntimeError("secret internals")

    site = sites["todo"].site
    assert isinstance(site, todo_app.TodoSite)
    monkeypatch.setattr(site.store, "todos", broken)
    status, body = await call(http, sites, "GET", "/api/todos")
    assert status == 500
    assert body == {
        "error": "internal server error in GET /api/todos; the server log has the details"
    }


# -- pages --------------------------------------------------------------------------------


async def test_pages_and_scripts_are_served(
    sites: RunningSites, http: aiohttp.ClientSession
) -> None:
    async with http.get(sites.url("todo")) as response:
        assert response.status == 200
        assert response.content_type == "text/html"
        assert response.headers["Cache-Control"] == "no-store"
        assert '<script type="module" src="/app.js">' in await response.text()
    for script in ("app.js", "api.js", "webmcp.js", "archive.js"):
        async with http.get(sites.url("todo", script)) as response:
            assert response.status == 200, script
            assert "javascript" in response.content_type
            assert "registerTool" in await response.text() or script == "api.js"


async def test_archive_lists_done_todos_escaped(
    sites: RunningSites, http: aiohttp.ClientSession
) -> None:
    _, added = await call(http, sites, "POST", "/api/todos", json={"text": "<b>bold</b> & co"})
    await call(http, sites, "POST", f"/api/todos/{added['todo']['id']}/complete")
    async with http.get(sites.url("todo", "/archive")) as response:
        page = await response.text()
    assert '<li data-id="3">Renew the library card</li>' in page
    assert '<li data-id="4">&lt;b&gt;bold&lt;/b&gt; &amp; co</li>' in page
    assert "Buy oat milk" not in page
    assert '<script type="module" src="/archive.js">' in page


async def test_files_outside_the_site_folder_are_not_served(
    sites: RunningSites, http: aiohttp.ClientSession
) -> None:
    for path in ("/server.py", "/todo_app.py", "/..%2Fserver.py", "/missing.js"):
        async with http.get(sites.url("todo", path)) as response:
            assert response.status == 404, path


# -- reset and the request log ------------------------------------------------------------


async def test_reset_restores_the_seed_data(
    sites: RunningSites, http: aiohttp.ClientSession
) -> None:
    await call(http, sites, "POST", "/api/todos", json={"text": "Temporary"})
    await call(http, sites, "DELETE", "/api/todos/1")
    await call(http, sites, "POST", "/api/todos/2/complete")
    assert await call(http, sites, "POST", "/__reset") == (200, {"reset": True})
    assert await call(http, sites, "GET", "/api/todos") == (200, {"todos": SEED})
    # Ids start over too, so a test after a reset sees the same ids as a fresh site.
    _, added = await call(http, sites, "POST", "/api/todos", json={"text": "Again"})
    assert added["todo"]["id"] == 4


async def test_reset_from_python(sites: RunningSites, http: aiohttp.ClientSession) -> None:
    await call(http, sites, "DELETE", "/api/todos/1")
    await sites.reset("todo")
    assert await call(http, sites, "GET", "/api/todos") == (200, {"todos": SEED})
    await call(http, sites, "DELETE", "/api/todos/2")
    await sites.reset()
    assert await call(http, sites, "GET", "/api/todos") == (200, {"todos": SEED})


async def test_request_log_records_what_the_server_received(
    sites: RunningSites, http: aiohttp.ClientSession
) -> None:
    await call(http, sites, "GET", "/api/todos?status=open&status=done")
    await call(
        http,
        sites,
        "POST",
        "/api/todos",
        json={"text": "Call Mum"},
        headers={"Accept": "application/json", "Cookie": "session=s3cret"},
    )
    await call(http, sites, "DELETE", "/api/todos/99")
    await call(http, sites, "POST", "/__reset")

    log = sites.requests("todo")
    assert [(entry.method, entry.path) for entry in log] == [
        ("GET", "/api/todos"),
        ("POST", "/api/todos"),
        ("DELETE", "/api/todos/99"),  # failed requests are logged too
    ]
    assert log[0].query == {"status": ["open", "done"]}
    assert log[1].body == '{"text": "Call Mum"}'
    assert log[1].headers["accept"] == "application/json"
    assert log[1].headers["content-type"] == "application/json"
    assert "cookie" not in log[1].headers

    # The HTTP view is the same list, and reading it is not itself logged.
    assert await call(http, sites, "GET", "/__log") == (200, [e.to_json() for e in log])
    assert len(sites.requests("todo")) == 3


async def test_request_log_can_be_cleared(sites: RunningSites, http: aiohttp.ClientSession) -> None:
    await call(http, sites, "GET", "/api/todos")
    sites["todo"].clear_log()
    assert sites.requests("todo") == []
    await call(http, sites, "GET", "/api/todos/1")
    assert await call(http, sites, "DELETE", "/__log") == (200, {"cleared": True})
    assert await call(http, sites, "GET", "/__log") == (200, [])


# -- origins, ports and binding ------------------------------------------------------------


async def test_each_site_gets_its_own_port_and_origin(
    monkeypatch: pytest.MonkeyPatch, http: aiohttp.ClientSession
) -> None:
    # A second site made from the todo site stands in for a second bundled site.
    monkeypatch.setitem(server.SITES, "todo2", SiteSpec("todo2", "a copy", todo_app.TodoSite))
    async with serve_sites(["todo", "todo2"]) as sites:
        assert set(sites.urls) == {"todo", "todo2"}
        assert sites["todo"].port != sites["todo2"].port
        assert sites.origin("todo") != sites.origin("todo2")
        for name in ("todo", "todo2"):
            assert sites.urls[name] == f"http://127.0.0.1:{sites[name].port}/"
            assert sites.origin(name) == f"http://127.0.0.1:{sites[name].port}"
        # Separate data and separate logs.
        async with http.delete(sites.url("todo", "/api/todos/1")) as response:
            assert response.status == 200
        async with http.get(sites.url("todo2", "/api/todos/1")) as response:
            assert response.status == 200
        assert [e.method for e in sites.requests("todo")] == ["DELETE"]
        assert [e.method for e in sites.requests("todo2")] == ["GET"]


async def test_binds_loopback_only(sites: RunningSites) -> None:
    site = sites["todo"]
    assert site.host == "127.0.0.1"
    assert site.addresses == [("127.0.0.1", site.port)]


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.com", "localhost"])
async def test_refuses_a_non_loopback_host(host: str) -> None:
    with pytest.raises(ValueError, match="loopback"):
        await serve_sites(["todo"], host=host)


async def test_unknown_site_name_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"unknown site.*nope.*bundled sites: todo"):
        await serve_sites(["nope"])
    with pytest.raises(ValueError, match=r"unknown site.*nope"):
        await serve_sites(["todo"], ports={"nope": 8000})


async def test_a_fixed_port_is_used(http: aiohttp.ClientSession) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    sites = await serve_sites(["todo"], ports={"todo": port})
    try:
        assert sites.urls == {"todo": f"http://127.0.0.1:{port}/"}
        async with http.get(sites.url("todo", "/api/todos")) as response:
            assert response.status == 200
    finally:
        await sites.stop()


async def test_a_taken_port_is_an_oserror() -> None:
    async with serve_sites(["todo"]) as first:
        with pytest.raises(OSError):
            await serve_sites(["todo"], ports={"todo": first["todo"].port})


async def test_stop_closes_the_port(http: aiohttp.ClientSession) -> None:
    sites = await serve_sites()
    assert set(sites.urls) == set(server.default_sites())
    url = sites.url("todo", "/api/todos")
    await sites.stop()
    await sites.stop()  # a second stop is harmless
    assert sites["todo"].addresses == []
    with pytest.raises(aiohttp.ClientConnectionError):
        async with http.get(url):
            pass


async def test_instances_do_not_share_data(http: aiohttp.ClientSession) -> None:
    async with serve_sites(["todo"]) as first, serve_sites(["todo"]) as second:
        async with http.delete(first.url("todo", "/api/todos/1")) as response:
            assert response.status == 200
        async with http.get(second.url("todo", "/api/todos/1")) as response:
            assert response.status == 200


# `python -m MODULE ARGS` with Ctrl-C's default handler: a shell without job control starts
# a background job (`make test &`, nohup) with SIGINT ignored, which its children inherit,
# and the SIGINT this test sends would then never arrive.
INTERRUPTIBLE_MODULE = """
import runpy, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
module = sys.argv.pop(1)
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


async def test_module_entry_serves_until_interrupted(http: aiohttp.ClientSession) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        INTERRUPTIBLE_MODULE,
        "harness.sites.server",
        "todo",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 20)).decode()
        name, url = line.split()
        assert name == "todo"
        assert url.startswith("http://127.0.0.1:")
        async with http.get(url + "api/todos") as response:
            assert (await response.json()) == {"todos": SEED}
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGINT)
        _, stderr = await asyncio.wait_for(process.communicate(), 20)
    assert process.returncode == 0, stderr.decode()
    assert b"Traceback" not in stderr
