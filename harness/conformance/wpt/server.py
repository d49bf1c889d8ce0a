"""Serves a web-platform-tests checkout from loopback the way ``wpt serve`` (wptserve) does,
for what the ``webmcp/`` tests use.

- Two ports (two origins). ``.sub.`` files (and ``?pipe=sub``) get ``{{host}}``,
  ``{{ports[http][N]}}`` and, for another origin, ``{{domains[…]}}``/``{{hosts[…]}}`` →
  ``localhost``.
- Headers from ``__dir__.headers`` beside the file and the file's own ``FILE.headers``
  (``.sub.headers``: substituted first), in that order; ``?pipe=header(Name,value)`` and
  ``?pipe=status(code)`` too.
- ``NAME.window.html``, ``NAME.any.html`` and ``NAME.any.window-module.html`` are generated
  from ``NAME.window.js``/``NAME.any.js`` as wptserve writes them: testharness.js, the
  report script, the ``// META: script=`` scripts, the title and the long-timeout meta, then
  the test script (its headers come from the ``.js`` file's).
- ``/resources/testharnessreport.js`` is the runner's own (:data:`REPORT_JS`).
- What it does not do is answered ``501`` with the reason, and noted (:attr:`WptServer.unserved`)
  so a test's result can say why it failed: Python handlers (``.py``), other pipes.
"""

from __future__ import annotations

import html
import mimetypes
import re
from pathlib import Path
from urllib.parse import unquote

from aiohttp import web
from multidict import CIMultiDict

from harness.conformance.wpt.manifest import any_scopes, js_metadata

# What every page's results are sent through: console messages with this prefix (the only
# channel that puts nothing into the page; a Playwright binding adds a global).
REPORT_PREFIX = "webmcp-harness-wpt:"

# Replaces the checkout's testharnessreport.js: every result leaves the page as it happens.
REPORT_JS = """(function () {
  if (window !== window.top) return;  // a frame's own testharness is not the test's
  const log = console.debug.bind(console);
  const send = (message) => { try { log("PREFIX" + JSON.stringify(message)); } catch (e) {} };
  if (typeof setup === "function") setup({explicit_timeout: true, output: false});
  if (typeof add_result_callback === "function") {
    add_result_callback((test) => send({kind: "result", name: String(test.name),
      status: test.status, message: test.message == null ? null : String(test.message)}));
  }
  if (typeof add_completion_callback === "function") {
    add_completion_callback((tests, status) => send({kind: "complete", status: status.status,
      message: status.message == null ? null : String(status.message),
      tests: tests.map((t) => ({name: String(t.name), status: t.status,
        message: t.message == null ? null : String(t.message)}))}));
  }
})();
""".replace("PREFIX", REPORT_PREFIX)

# wptserve's wrappers (tools/serve/serve.py): WindowHandler, AnyHtmlHandler,
# WindowModulesHandler.
_WINDOW = """<!doctype html>
<meta charset=utf-8>
{meta}
<script src="/resources/testharness.js"></script>
<script src="/resources/testharnessreport.js"></script>
{script}
<div id=log></div>
<script{module} src="{path}"></script>
"""
_GLOBAL = """<script>
self.GLOBAL = {
  isWindow: function() { return true; },
  isWorker: function() { return false; },
  isShadowRealm: function() { return false; },
};
</script>"""
# generated path suffix → (the .js it wraps, the scope it runs in, a module script?)
_WRAPPERS = {
    ".window.html": (".window.js", None, False),
    ".any.html": (".any.js", "window", False),
    ".any.window-module.html": (".any.js", "window-module", True),
}
_PIPE = re.compile(r"(\w+)(?:\((.*?)\))?(?:\||$)")


class WptServer:
    """Serves a checkout on two loopback ports, as wptserve would (see the module)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.ports: list[int] = []
        self._runners: list[web.AppRunner] = []
        self.unserved: list[str] = []
        """What was asked for and answered 501 since the list was last cleared."""

    def url(self, path: str) -> str:
        """The URL of ``path`` on the first port."""
        return f"http://127.0.0.1:{self.ports[0]}{path}"

    async def start(self) -> WptServer:
        """Listen on two ports the system picks."""
        for _ in range(2):
            app = web.Application()
            app.router.add_get("/{path:.*}", self._serve)
            runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
            await runner.setup()
            self._runners.append(runner)
            await web.TCPSite(runner, "127.0.0.1", 0).start()
            self.ports.append(int(runner.addresses[-1][1]))
        return self

    async def stop(self) -> None:
        """Stop listening."""
        for runner in self._runners:
            await runner.cleanup()
        self._runners.clear()

    # -- substitution and headers ---------------------------------------------------------

    def substitute(self, text: str) -> str:
        """wptserve's ``sub`` pipe, for the keys the tests use."""
        ports = {"http": self.ports, "https": self.ports, "ws": self.ports, "wss": self.ports}

        def replace(match: re.Match[str]) -> str:
            key = match.group(1).strip()
            if key == "host":
                return "127.0.0.1"
            if key.startswith(("domains[", "hosts[")):
                return "localhost"  # another origin on the same machine
            port = re.fullmatch(r"ports\[(\w+)\]\[(\d+)\]", key)
            if port and port.group(1) in ports:
                return str(ports[port.group(1)][min(int(port.group(2)), 1)])
            return ""

        return re.sub(r"\{\{([^}]*)\}\}", replace, text)

    def _headers_of(self, file: Path) -> list[tuple[str, str]]:
        """``__dir__.headers`` then ``FILE.headers`` (each ``.sub.headers`` first)."""
        found: list[tuple[str, str]] = []
        for base in (file.parent / "__dir__", file):
            for suffix, sub in ((".sub.headers", True), (".headers", False)):
                headers = base.with_name(base.name + suffix)
                if headers.is_file():
                    text = headers.read_text(encoding="ascii", errors="replace")
                    if sub:
                        text = self.substitute(text)
                    for line in text.splitlines():
                        name, colon, value = line.partition(":")
                        if colon and name.strip():
                            found.append((name.strip(), value.strip()))
                    break
        return found

    # -- serving --------------------------------------------------------------------------

    def _file(self, path: str) -> Path | None:
        file = (self.root / unquote(path)).resolve()
        if file != self.root and self.root not in file.parents:
            return None
        return file

    def _unserved(self, path: str, why: str) -> web.Response:
        self.unserved.append(f"/{path} ({why})")
        return web.Response(status=501, text=f"webmcp-harness's WPT runner: {why}\n")

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        path = request.match_info["path"]
        if path == "resources/testharnessreport.js":
            return web.Response(text=REPORT_JS, content_type="text/javascript")
        pipes = request.query.get("pipe")
        for suffix, (source, scope, module) in _WRAPPERS.items():
            if path.endswith(suffix):
                script = self._file(path[: -len(suffix)] + source)
                if script is not None and script.is_file():
                    return self._wrapper(script, scope, module, pipes, path)
        file = self._file(path)
        if file is None or not file.is_file():
            raise web.HTTPNotFound()
        if file.suffix == ".py":
            return self._unserved(path, "wptserve's Python handlers are not run")
        headers = CIMultiDict(self._headers_of(file))
        sub = ".sub." in file.name
        status = 200
        for name, argument in _PIPE.findall(pipes or ""):
            if name == "sub":
                sub = True
            elif name == "header" and "," in argument:
                key, _, value = argument.partition(",")
                headers.add(key.strip(), value.split(",")[0].strip())
            elif name == "status" and argument.strip().isdigit():
                status = int(argument.strip())
            else:
                return self._unserved(path, f"the {name!r} pipe is not supported")
        if not (sub or headers or status != 200):
            return web.FileResponse(file)
        if sub:
            body = self.substitute(file.read_text(encoding="utf-8", errors="replace")).encode()
        else:
            body = file.read_bytes()
        response = web.Response(body=body, status=status, headers=headers)
        if "Content-Type" not in headers:
            response.content_type = _content_type(file)
            if sub:
                response.charset = "utf-8"
        return response

    def _wrapper(
        self, script: Path, scope: str | None, module: bool, pipes: str | None, path: str
    ) -> web.Response:
        meta = js_metadata(script.read_text(encoding="utf-8", errors="replace"))
        if scope is not None:
            scopes = any_scopes(next((v for k, v in meta if k == "global"), ""))
            if scope not in scopes:
                raise web.HTTPNotFound(text=f"This test cannot be loaded in {scope} mode")
        if pipes:
            return self._unserved(path, "pipes on a generated test page are not supported")
        head = []
        for key, value in meta:
            if key == "timeout" and value == "long":
                head.append('<meta name="timeout" content="long">')
            elif key == "title":
                head.append(f"<title>{html.escape(value, quote=False)}</title>")
        if scope is not None:
            head.append(_GLOBAL)
        scripts = [
            f'<script src="{html.escape(value, quote=True)}"></script>'
            for key, value in meta
            if key == "script"
        ]
        text = _WINDOW.format(
            meta="\n".join(head),
            script="\n".join(scripts),
            module=" type=module" if module else "",
            path=html.escape("/" + script.relative_to(self.root).as_posix(), quote=True),
        )
        headers = CIMultiDict(self._headers_of(script))
        headers["Content-Type"] = "text/html; charset=utf-8"
        return web.Response(text=text, headers=headers)


def _content_type(file: Path) -> str:
    kind, _ = mimetypes.guess_type(file.name)
    return kind or "application/octet-stream"
