"""The `todo` site: a todo list in SQLite, its JSON API, and the pages that register its tools.

The pages (`todo/index.html`, `todo/archive.html`) register WebMCP tools from script; every
tool calls the JSON API below, so a test can check both what the agent saw (the tool result)
and what the server received (the request log kept by `server.py`).

JSON API (every error is `{"error": message}` with a 4xx status):

| method and path                | body               | answer                            |
|--------------------------------|--------------------|-----------------------------------|
| `GET /api/todos?status=…`      |                    | `{"todos": [todo, …]}`            |
| `POST /api/todos`              | `{"text": "…"}`    | 201 `{"todo": todo}`              |
| `GET /api/todos/{id}`          |                    | `{"todo": todo}`                  |
| `POST /api/todos/{id}/complete`|                    | `{"todo": todo}` (idempotent)     |
| `DELETE /api/todos/{id}`       |                    | `{"todo": todo, "deleted": true}` |

A todo is `{"id": int, "text": str, "done": bool}`; `status` is `all` (default), `open` or `done`.

Seed 002's declarative dialect lives on `/declarative`: a page without script whose actions
are HTML forms, links and buttons with `tool-name` attributes (a link tool, a form with a
fieldset, one button tool per open todo, and a form that removes itself and redirects).
Their targets answer JSON to `Accept: application/json` (an MCP `CallToolResult`) and
redirect people (`303 See Other` back to the page) otherwise:

| method and path                  | form fields                                       | JSON answer                                  |
|----------------------------------|---------------------------------------------------|----------------------------------------------|
| `GET /todos?status=…`            |                                                   | `{"todos": [todo, …]}`                       |
| `POST /todos`                    | `text`, `priority`, `date`, `time` (the `reminder` fieldset), `list` | 201, the todo and the details |
| `POST /todos/{id}/complete`      |                                                   | the todo; HTTP `Location: /declarative`      |
| `POST /todos/clear-done`         |                                                   | the deleted todos; `_meta.uiRedirect`        |
"""

from __future__ import annotations

import html
import json
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final, Literal, TypedDict, cast

from aiohttp import web

STATIC_DIR: Final = Path(__file__).parent / "todo"

MAX_TEXT_LENGTH: Final = 200
STATUSES: Final = ("all", "open", "done")
Status = Literal["all", "open", "done"]

# Three todos, one of them done, so both the list and the archive have something to show.
# The ids they get (1, 2, 3) are part of the contract: tests and examples refer to them.
SEED_TODOS: Final[tuple[tuple[str, bool], ...]] = (
    ("Buy oat milk", False),
    ("Send the quarterly report to Dana", False),
    ("Renew the library card", True),
)

# AUTOINCREMENT so a deleted id is never handed out again: "No todo with id 3" stays true
# after todo 3 is deleted and a new one is added.
_SCHEMA: Final = """
DROP TABLE IF EXISTS todos;
CREATE TABLE todos (
    id   INTEGER PRIMARY KEY AUTOINCREMENT,
    text TEXT    NOT NULL,
    done INTEGER NOT NULL DEFAULT 0
);
DELETE FROM sqlite_sequence WHERE name = 'todos';
"""


class Todo(TypedDict):
    """One todo as the API returns it."""

    id: int
    text: str
    done: bool


class TodoNotFound(LookupError):
    """No todo has the requested id."""

    def __init__(self, todo_id: int) -> None:
        super().__init__(f"No todo with id {todo_id}")
        self.todo_id = todo_id


class TodoStore:
    """The todo list of one running site, in an in-memory SQLite database it owns."""

    def __init__(self) -> None:
        # One connection holds the `:memory:` database; it is only used from the event loop
        # thread, but the loop may not be the thread that created the store.
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        self.reset()

    def reset(self) -> None:
        """Drop every change: the seed todos again, with ids 1, 2, 3."""
        with self._db:
            self._db.executescript(_SCHEMA)
            self._db.executemany(
                "INSERT INTO todos (text, done) VALUES (?, ?)",
                [(text, int(done)) for text, done in SEED_TODOS],
            )

    def close(self) -> None:
        """Close the database; the store is unusable afterwards."""
        self._db.close()

    def todos(self, status: Status = "all") -> list[Todo]:
        """The todos with that status, oldest first."""
        where = {"all": "", "open": "WHERE done = 0", "done": "WHERE done = 1"}[status]
        rows = self._db.execute(f"SELECT id, text, done FROM todos {where} ORDER BY id")
        return [_todo(row) for row in rows]

    def get(self, todo_id: int) -> Todo:
        """The todo with that id; raises `TodoNotFound`."""
        row = self._db.execute(
            "SELECT id, text, done FROM todos WHERE id = ?", (todo_id,)
        ).fetchone()
        if row is None:
            raise TodoNotFound(todo_id)
        return _todo(row)

    def add(self, text: str) -> Todo:
        """Add an open todo and return it."""
        with self._db:
            cursor = self._db.execute("INSERT INTO todos (text) VALUES (?)", (text,))
        assert cursor.lastrowid is not None  # an INSERT into a rowid table always sets it
        return self.get(cursor.lastrowid)

    def complete(self, todo_id: int) -> Todo:
        """Mark the todo done (again, if it already is) and return it."""
        with self._db:
            cursor = self._db.execute("UPDATE todos SET done = 1 WHERE id = ?", (todo_id,))
        if cursor.rowcount == 0:
            raise TodoNotFound(todo_id)
        return self.get(todo_id)

    def delete(self, todo_id: int) -> Todo:
        """Delete the todo and return what it was."""
        todo = self.get(todo_id)
        with self._db:
            self._db.execute("DELETE FROM todos WHERE id = ?", (todo_id,))
        return todo

    def clear_done(self) -> list[Todo]:
        """Delete every done todo and return what they were."""
        done = self.todos("done")
        with self._db:
            self._db.execute("DELETE FROM todos WHERE done = 1")
        return done


def _todo(row: sqlite3.Row) -> Todo:
    return Todo(id=int(row["id"]), text=str(row["text"]), done=bool(row["done"]))


def _error(exc_type: type[web.HTTPException], message: str) -> web.HTTPException:
    """An HTTP error whose body is `{"error": message}`."""
    return exc_type(text=json.dumps({"error": message}), content_type="application/json")


def _todo_id(request: web.Request) -> int:
    raw = request.match_info["id"]
    # isdecimal, not int(): int() would also take "+3", " 3" and "3_0".
    if not (raw.isascii() and raw.isdecimal()):
        raise _error(web.HTTPBadRequest, f"id must be a positive integer, got {raw!r}")
    return int(raw)


def _new_todo_text(body: Any) -> str:
    """The `text` of a `POST /api/todos` body, checked against the `add_todo` input schema."""
    if not isinstance(body, dict):
        raise _error(web.HTTPBadRequest, 'body must be a JSON object like {"text": "Buy milk"}')
    unknown = sorted(set(body) - {"text"})
    if unknown:
        raise _error(web.HTTPBadRequest, f"unknown field(s): {', '.join(unknown)}; only text")
    text = body.get("text")
    if not isinstance(text, str):
        raise _error(web.HTTPBadRequest, "text is required and must be a string")
    if not text.strip():
        raise _error(web.HTTPBadRequest, "text must not be empty or blank")
    if len(text) > MAX_TEXT_LENGTH:
        raise _error(
            web.HTTPBadRequest,
            f"text is {len(text)} characters long; at most {MAX_TEXT_LENGTH} are allowed",
        )
    return text


def _no_store(response: web.StreamResponse) -> web.StreamResponse:
    # Tests reset the data between runs; a cached page or answer would show stale todos.
    response.headers["Cache-Control"] = "no-store"
    return response


class TodoSite:
    """One running instance of the todo site: its store, its routes, reset and close."""

    def __init__(self) -> None:
        self.store = TodoStore()

    def routes(self) -> Iterable[web.AbstractRouteDef]:
        """The pages, their scripts, and the JSON API."""
        return [
            web.get("/", self.index_page),
            web.get("/archive", self.archive_page),
            web.get(r"/{file:[a-z_]+\.(?:js|css)}", self.static_file),
            web.get("/api/todos", self.list_todos),
            web.post("/api/todos", self.add_todo),
            web.get("/api/todos/{id}", self.get_todo),
            web.post("/api/todos/{id}/complete", self.complete_todo),
            web.delete("/api/todos/{id}", self.delete_todo),
            # Seed 002's declarative dialect: the page, and the targets of its tools.
            web.get("/declarative", self.declarative_page),
            web.get("/todos", self.form_list_todos),
            web.post("/todos", self.form_add_todo),
            web.post("/todos/clear-done", self.form_clear_done),
            web.post("/todos/{id}/complete", self.form_complete_todo),
        ]

    async def reset(self) -> None:
        """Restore the seed todos."""
        self.store.reset()

    async def close(self) -> None:
        """Release the database."""
        self.store.close()

    # -- pages -------------------------------------------------------------------------

    async def index_page(self, request: web.Request) -> web.StreamResponse:
        """The todo list; `app.js` renders it and registers the tools."""
        return _no_store(web.FileResponse(STATIC_DIR / "index.html"))

    async def archive_page(self, request: web.Request) -> web.StreamResponse:
        """The done todos, rendered on the server so the page reads right without script."""
        done = self.store.todos("done")
        items = "\n".join(
            f'      <li data-id="{todo["id"]}">{html.escape(todo["text"])}</li>' for todo in done
        )
        if not done:
            items = '      <li class="empty">Nothing done yet.</li>'
        template = (STATIC_DIR / "archive.html").read_text(encoding="utf-8")
        page = template.replace("<!-- archived todos -->", items.strip())
        return _no_store(web.Response(text=page, content_type="text/html"))

    async def static_file(self, request: web.Request) -> web.StreamResponse:
        """A script or style sheet from `todo/` (the route pattern allows no paths)."""
        path = STATIC_DIR / request.match_info["file"]
        if not path.is_file():
            raise _error(web.HTTPNotFound, f"no such file: {request.path}")
        return _no_store(web.FileResponse(path))

    # -- JSON API ----------------------------------------------------------------------

    async def list_todos(self, request: web.Request) -> web.StreamResponse:
        """`GET /api/todos?status=all|open|done`."""
        status = request.query.get("status", "all")
        if status not in STATUSES:
            raise _error(
                web.HTTPBadRequest, f"status must be one of {', '.join(STATUSES)}; got {status!r}"
            )
        todos = self.store.todos(cast(Status, status))
        return _no_store(web.json_response({"todos": todos}))

    async def add_todo(self, request: web.Request) -> web.StreamResponse:
        """`POST /api/todos` with `{"text": …}`."""
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise _error(web.HTTPBadRequest, f"body is not valid JSON: {exc}") from None
        todo = self.store.add(_new_todo_text(body))
        return _no_store(web.json_response({"todo": todo}, status=201))

    async def get_todo(self, request: web.Request) -> web.StreamResponse:
        """`GET /api/todos/{id}`."""
        return _no_store(web.json_response({"todo": self._call(self.store.get, request)}))

    async def complete_todo(self, request: web.Request) -> web.StreamResponse:
        """`POST /api/todos/{id}/complete`."""
        return _no_store(web.json_response({"todo": self._call(self.store.complete, request)}))

    async def delete_todo(self, request: web.Request) -> web.StreamResponse:
        """`DELETE /api/todos/{id}`."""
        todo = self._call(self.store.delete, request)
        return _no_store(web.json_response({"todo": todo, "deleted": True}))

    @staticmethod
    def _call(operation: Callable[[int], Todo], request: web.Request) -> Todo:
        """Run a store operation on the request's id; an unknown id is a 404."""
        try:
            return operation(_todo_id(request))
        except TodoNotFound as exc:
            raise _error(web.HTTPNotFound, str(exc)) from None

    # -- seed 002's declarative dialect (`/declarative`) -------------------------------

    async def declarative_page(self, request: web.Request) -> web.StreamResponse:
        """The forms page: the open todos, each with its button tool, and the form tools."""
        todos = self.store.todos("open")
        items = "\n".join(_declarative_item(todo) for todo in todos)
        if not todos:
            items = '<li class="empty">Nothing to do.</li>'
        done = len(self.store.todos("done"))
        clear = _CLEAR_DONE_FORM.format(done=done) if done else ""
        template = (STATIC_DIR / "declarative.html").read_text(encoding="utf-8")
        page = template.replace("<!-- open todos -->", items).replace("<!-- clear done -->", clear)
        return _no_store(web.Response(text=page, content_type="text/html"))

    async def form_list_todos(self, request: web.Request) -> web.StreamResponse:
        """`GET /todos?status=…`, the link tool's target."""
        status = request.query.get("status", "all")
        if status not in STATUSES:
            raise _error(
                web.HTTPBadRequest, f"status must be one of {', '.join(STATUSES)}; got {status!r}"
            )
        if not _wants_json(request):
            raise web.HTTPSeeOther("/declarative")
        return _no_store(web.json_response({"todos": self.store.todos(cast(Status, status))}))

    async def form_add_todo(self, request: web.Request) -> web.StreamResponse:
        """`POST /todos` from the form with the `reminder` fieldset."""
        form = await request.post()
        text = _new_todo_text({"text": form.get("text")})
        priority = form.get("priority", "medium")
        if priority not in PRIORITIES:
            raise _error(web.HTTPBadRequest, f"priority must be one of {', '.join(PRIORITIES)}")
        # What the HTML form sends: a fieldset's name is no part of its controls' names.
        reminder = {key: str(form[key]) for key in ("date", "time") if form.get(key)}
        todo = self.store.add(text)
        if not _wants_json(request):
            raise web.HTTPSeeOther("/declarative")
        when = " ".join(reminder.values())
        summary = f"Added todo {todo['id']}: {text} (priority {priority}"
        summary += f", reminder {when})" if when else ")"
        details = {"todo": todo, "priority": priority, "reminder": reminder}
        details["list"] = str(form.get("list", ""))
        return _no_store(web.json_response(_tool_result(summary, details), status=201))

    async def form_complete_todo(self, request: web.Request) -> web.StreamResponse:
        """`POST /todos/{id}/complete`, a todo's button tool; the answer sends the page back."""
        todo = self._call(self.store.complete, request)
        if not _wants_json(request):
            raise web.HTTPSeeOther("/declarative")
        result = _tool_result(f"Completed todo {todo['id']}: {todo['text']}", {"todo": todo})
        response = web.json_response(result, headers={"Location": "/declarative"})
        return _no_store(response)

    async def form_clear_done(self, request: web.Request) -> web.StreamResponse:
        """`POST /todos/clear-done`: the form that removes itself (no done todos, no form)."""
        deleted = self.store.clear_done()
        if not _wants_json(request):
            raise web.HTTPSeeOther("/declarative")
        result = _tool_result(f"Deleted {len(deleted)} done todos.", {"deleted": deleted})
        result["_meta"] = {"uiRedirect": "/declarative"}
        return _no_store(web.json_response(result))


PRIORITIES: Final = ("low", "medium", "high")

_CLEAR_DONE_FORM: Final = """<form action="/todos/clear-done" method="post" class="clear"
            tool-name="clear_done_todos" tool-title="Clear done todos"
            tool-description="Delete every done todo for good. The form is gone until a todo is done again."
            tool-destructive>
        <span>{done} done.</span> <button>Clear done todos</button>
      </form>"""


def _wants_json(request: web.Request) -> bool:
    """Seed 002 §8.2: JSON for `Accept: application/json` (agents), HTML for people."""
    return "application/json" in request.headers.get("Accept", "")


def _tool_result(text: str, structured: dict[str, Any]) -> dict[str, Any]:
    """An MCP `CallToolResult` as JSON: a line for the agent and the data."""
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured}


def _declarative_item(todo: Todo) -> str:
    text = html.escape(todo["text"])
    quoted = html.escape(f"“{todo['text']}”")
    return (
        f'<li data-id="{todo["id"]}"><span class="text">{text}</span>\n'
        f'        <form method="post" action="/todos/{todo["id"]}/complete">'
        f'<button tool-name="complete_todo_{todo["id"]}" tool-title="Complete {quoted}" '
        f'tool-description="Mark todo {todo["id"]} ({quoted}) as done." tool-idempotent>'
        "Done</button></form></li>"
    )
