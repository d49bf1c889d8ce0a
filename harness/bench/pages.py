"""The pages the benchmark measures, generated and served on loopback.

- ``/echo.html``: one trivial script tool, ``echo``, whose ``execute`` is
  ``window.echoImpl`` — the function the floor (a bare ``page.evaluate``) runs too;
- ``/catalog.html?tools=N&forms=M``: N script tools and M ``<form toolname>`` tools;
- ``/declarative.html``: a spec-dialect form that answers with ``respondWith`` and a
  seed-dialect form that posts to ``/submit``, which answers JSON (fetch-first).
"""

from __future__ import annotations

from aiohttp import web

ECHO_PAGE = """<!doctype html><html><head><title>bench: echo</title></head><body>
<script>
window.echoImpl = (args) => ({content: [{type: "text", text: String(args.text)}]});
const mc = document.modelContext || navigator.modelContext;
mc.registerTool({
  name: "echo",
  description: "Returns its text.",
  inputSchema: {type: "object", properties: {text: {type: "string"}}, required: ["text"]},
  annotations: {readOnlyHint: true},
  execute: (args) => window.echoImpl(args),
});
</script></body></html>"""

DECLARATIVE_PAGE = """<!doctype html><html><head><title>bench: declarative</title></head><body>
<form id="spec" toolname="spec_form" tooldescription="Echoes q" toolautosubmit>
  <input name="q" toolparamdescription="the text"><button>Go</button>
</form>
<form action="/submit" method="post" tool-name="seed_form" tool-description="Posts q">
  <input name="q">
</form>
<script>
document.getElementById("spec").addEventListener("submit", (e) => {
  e.preventDefault();
  if (e.respondWith) e.respondWith(Promise.resolve("got " + e.target.q.value));
});
</script></body></html>"""


def catalog_page(tools: int, forms: int) -> str:
    """A page registering ``tools`` script tools and declaring ``forms`` forms."""
    form_html = "\n".join(
        f'<form toolname="form_{i}" tooldescription="Form {i}" toolautosubmit>'
        f'<input name="q" toolparamdescription="query {i}"><input type="number" name="n">'
        "</form>"
        for i in range(forms)
    )
    return f"""<!doctype html><html><head><title>bench: catalog</title></head><body>
{form_html}
<script>
const mc = document.modelContext || navigator.modelContext;
for (let i = 0; i < {tools}; i++) {{
  mc.registerTool({{
    name: "tool_" + i,
    description: "Tool number " + i,
    inputSchema: {{type: "object", properties: {{a: {{type: "string"}}, b: {{type: "integer"}}}}}},
    execute: (args) => ({{content: [{{type: "text", text: "ok"}}]}}),
  }});
}}
</script></body></html>"""


def _html(text: str) -> web.Response:
    return web.Response(text=text, content_type="text/html", headers={"Cache-Control": "no-store"})


class BenchSite:
    """The bench pages on a free loopback port, for the life of an ``async with``."""

    def __init__(self) -> None:
        self.port = 0
        self._runner: web.AppRunner | None = None

    def url(self, path: str) -> str:
        """The address of one page, e.g. ``url("echo.html")``."""
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"

    def _app(self) -> web.Application:
        async def echo(_request: web.Request) -> web.StreamResponse:
            return _html(ECHO_PAGE)

        async def declarative(_request: web.Request) -> web.StreamResponse:
            return _html(DECLARATIVE_PAGE)

        async def catalog(request: web.Request) -> web.StreamResponse:
            tools = min(int(request.query.get("tools", "500")), 5000)
            forms = min(int(request.query.get("forms", "100")), 1000)
            return _html(catalog_page(tools, forms))

        async def submit(request: web.Request) -> web.StreamResponse:
            form = await request.post()
            text = str(form.get("q", ""))
            return web.json_response({"content": [{"type": "text", "text": f"got {text}"}]})

        app = web.Application()
        app.router.add_get("/echo.html", echo)
        app.router.add_get("/declarative.html", declarative)
        app.router.add_get("/catalog.html", catalog)
        app.router.add_post("/submit", submit)
        return app

    async def __aenter__(self) -> BenchSite:
        runner = web.AppRunner(self._app(), shutdown_timeout=1.0)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()  # port 0: the system picks a free one
        self.port = int(runner.addresses[0][1])
        self._runner = runner
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
