"""The AgentDojo sites: each of AgentDojo's suites (workspace, travel, banking, slack) as a WebMCP site.

AgentDojo (ETH Zürich, MIT licence, the `agentdojo` package: the optional extra
`webmcp-harness[agentdojo]`) is imported, never copied: its suites, their environments
(loaded from the package's data with an episode's injections), their functions and its
runtime. A site holds one environment, the episode's; its page registers each of the suite's
functions as a WebMCP script tool whose `inputSchema` is AgentDojo's own parameter schema,
and a call runs AgentDojo's function on that environment through AgentDojo's
`FunctionsRuntime` — so the environment changes exactly as in AgentDojo, and AgentDojo's
`utility()` and `security()` checks can judge it afterwards
(`harness/experiments/agentdojo/`).

| request | answer |
|---|---|
| `GET /` | the page: the suite's tools, inlined in the page (`agentdojo/page.html`, `tools.js`) |
| `POST /api/call/{function}` JSON arguments | `{"result": text}` — the text AgentDojo's pipeline shows a model (`tool_result_to_str`) — or `{"error": text}`, AgentDojo's own error text |
| `POST /__episode` JSON setup | a new episode's environment (see :class:`EpisodeSetup`); `{"episode": {...}}` |
| `POST /__reset` | the suite's default environment, no user task, no injection |

Every call the server ran is in :attr:`AgentDojoSite.calls` (AgentDojo's `FunctionCall`),
in order, whatever its outcome: the function trace AgentDojo's trace-based checks read.
"""

from __future__ import annotations

import copy
import html
import json
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final

from aiohttp import web

STATIC_DIR: Final = Path(__file__).parent / "agentdojo"
ANNOTATIONS_FILE: Final = STATIC_DIR / "annotations.toml"

SUITES: Final = ("workspace", "travel", "banking", "slack")
"""AgentDojo's suites, each served as a site named ``agentdojo-<suite>``."""
DEFAULT_VERSION: Final = "v1.2.1"
"""The benchmark version a site serves unless an episode names another."""
ANNOTATION_MODES: Final = ("annotated", "bare")
INSTALL_HINT: Final = "pip install 'webmcp-harness[agentdojo]'"


class AgentDojoMissing(ValueError):
    """The optional extra is not installed (a ``ValueError``, like every site that cannot
    be served as asked, so ``serve_sites``' callers report it as they report those)."""


def require_agentdojo() -> None:
    """Raise :class:`AgentDojoMissing` (saying how to install it) when AgentDojo is absent."""
    try:
        import agentdojo  # noqa: F401
    except ModuleNotFoundError as err:
        if err.name is not None and err.name.split(".")[0] != "agentdojo":
            raise
        raise AgentDojoMissing(
            f"The AgentDojo suites need the `agentdojo` package: {INSTALL_HINT}."
        ) from None


def load_suite(version: str, name: str) -> Any:
    """AgentDojo's :class:`TaskSuite` ``name`` of benchmark ``version`` (``v1.2.1``, …)."""
    require_agentdojo()  # every time: a test may hide the package after a first load
    return _load_suite(version, name)


@cache
def _load_suite(version: str, name: str) -> Any:
    from agentdojo.task_suite.load_suites import get_suites

    suites = get_suites(version)
    if not suites:
        raise ValueError(f"AgentDojo has no benchmark version {version!r}")
    if name not in suites:
        raise ValueError(
            f"AgentDojo {version} has no suite {name!r}; suites: {', '.join(sorted(suites))}"
        )
    return suites[name]


@cache
def annotation_table() -> dict[str, Any]:
    """``annotations.toml``: the profiles and each function's profile (and sensitivity)."""
    return tomllib.loads(ANNOTATIONS_FILE.read_text(encoding="utf-8"))


def annotations_for(function: str) -> dict[str, Any] | None:
    """The annotations a function's tool carries when annotated (None: not in the table)."""
    table = annotation_table()
    entry = table["functions"].get(function)
    if entry is None:
        return None
    annotations = copy.deepcopy(table["profiles"][entry["profile"]]["annotations"])
    sensitivity = entry.get("sensitivity")
    if sensitivity is not None:
        # What the function handles: what it returns when it reads, what it is given when it writes.
        side = "returnMetadata" if annotations.get("readOnlyHint") else "inputMetadata"
        annotations[side]["sensitivity"] = sensitivity
    return dict(annotations)


@dataclass(frozen=True)
class EpisodeSetup:
    """What one episode's environment is: AgentDojo's default data of the suite's
    ``version``, with ``injections`` (injection vector → text) filled in, and the
    ``user_task``'s ``init_environment`` applied; the tools ``annotated`` or bare."""

    version: str = DEFAULT_VERSION
    user_task: str | None = None
    injections: dict[str, str] = field(default_factory=dict)
    annotations: str = "annotated"

    @classmethod
    def from_json(cls, data: Any) -> EpisodeSetup:
        """The setup a ``POST /__episode`` body describes; ``ValueError`` for a bad one."""
        if not isinstance(data, dict):
            raise ValueError("the episode setup is a JSON object")
        unknown = sorted(set(data) - {"version", "user_task", "injections", "annotations"})
        if unknown:
            raise ValueError(f"unknown setup key(s): {', '.join(unknown)}")
        injections = data.get("injections", {})
        if not isinstance(injections, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in injections.items()
        ):
            raise ValueError("injections map injection vector ids to text")
        annotations = data.get("annotations", "annotated")
        if annotations not in ANNOTATION_MODES:
            raise ValueError(f"annotations is one of {', '.join(ANNOTATION_MODES)}")
        user_task = data.get("user_task")
        version = data.get("version", DEFAULT_VERSION)
        if not isinstance(version, str) or not (user_task is None or isinstance(user_task, str)):
            raise ValueError("version and user_task are strings")
        return cls(version, user_task, dict(injections), annotations)


def _json_script(value: Any) -> str:
    """JSON for an inline ``<script type="application/json">``: ``<`` cannot close it."""
    return json.dumps(value).replace("<", "\\u003c")


class AgentDojoSite:
    """One AgentDojo suite served as a site, and the environment of its current episode."""

    def __init__(self, suite: str) -> None:
        require_agentdojo()
        self.suite_name = suite
        self.setup = EpisodeSetup()
        self.suite: Any = load_suite(self.setup.version, suite)
        self.environment: Any = None
        """The episode's environment, which the tools change."""
        self.pre_environment: Any = None
        """A copy of it as the episode began (what AgentDojo's checks compare against)."""
        self.calls: list[Any] = []
        """Every function call the server ran this episode (AgentDojo ``FunctionCall``)."""
        self._runtime: Any = None
        self.start_episode(EpisodeSetup())

    # -- the episode -----------------------------------------------------------------------

    def start_episode(self, setup: EpisodeSetup) -> None:
        """Load the episode's environment as AgentDojo does for ``run_task_with_pipeline``."""
        from agentdojo.functions_runtime import FunctionsRuntime

        suite = load_suite(setup.version, self.suite_name)
        environment = _environment(suite, tuple(sorted(setup.injections.items())))
        if setup.user_task is not None:
            if setup.user_task not in suite.user_tasks:
                raise ValueError(
                    f"AgentDojo {setup.version} {self.suite_name} has no {setup.user_task}"
                )
            environment = suite.user_tasks[setup.user_task].init_environment(environment)
        self.suite, self.setup = suite, setup
        self.environment = environment
        self.pre_environment = environment.model_copy(deep=True)
        self.calls = []
        self._runtime = FunctionsRuntime(suite.tools)

    def call(self, function: str, arguments: dict[str, Any]) -> tuple[str | None, str | None]:
        """Run ``function`` on the environment: (the text a model sees, AgentDojo's error)."""
        from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
        from agentdojo.functions_runtime import FunctionCall

        self.calls.append(FunctionCall(function=function, args=copy.deepcopy(arguments)))
        result, error = self._runtime.run_function(self.environment, function, arguments)
        if error is not None:
            return None, error
        return tool_result_to_str(result), None

    def tools(self) -> list[dict[str, Any]]:
        """The suite's functions as WebMCP tool declarations (annotated or bare)."""
        annotated = self.setup.annotations == "annotated"
        declared = []
        for function in self.suite.tools:
            tool: dict[str, Any] = {
                "name": function.name,
                "description": function.description,
                "inputSchema": function.parameters.model_json_schema(),
            }
            annotations = annotations_for(function.name) if annotated else None
            if annotations is not None:
                tool["annotations"] = annotations
            declared.append(tool)
        return declared

    # -- the server ----------------------------------------------------------------------

    def routes(self) -> Iterable[web.AbstractRouteDef]:
        """The page, its script, the function calls and the episode control."""
        return [
            web.get("/", self.page),
            web.get("/tools.js", self.script),
            web.post("/api/call/{function}", self.call_route),
            web.post("/__episode", self.episode_route),
        ]

    async def reset(self) -> None:
        """The suite's default environment: no user task, no injection, annotated."""
        self.start_episode(EpisodeSetup(version=self.setup.version))

    async def close(self) -> None:
        """Nothing to release: the environment lives in memory."""

    async def page(self, request: web.Request) -> web.StreamResponse:
        """``GET /``: the page, with the tools inlined so they register before ``load``."""
        title = f"AgentDojo {self.suite_name}"
        config = {"suite": self.suite_name, "version": self.setup.version, "tools": self.tools()}
        text = (
            (STATIC_DIR / "page.html")
            .read_text(encoding="utf-8")
            .replace("{{TITLE}}", html.escape(title))
            .replace("{{SUITE}}", html.escape(self.suite_name))
            .replace("{{VERSION}}", html.escape(self.setup.version))
            .replace("{{CONFIG}}", _json_script(config))
        )
        return _no_store(web.Response(text=text, content_type="text/html"))

    async def script(self, request: web.Request) -> web.StreamResponse:
        """``GET /tools.js``."""
        return _no_store(web.FileResponse(STATIC_DIR / "tools.js"))

    async def call_route(self, request: web.Request) -> web.StreamResponse:
        """``POST /api/call/{function}``: run it; AgentDojo's error text is an answer too."""
        try:
            arguments = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise web.HTTPBadRequest(text=json.dumps({"error": "the body is not JSON"})) from None
        if not isinstance(arguments, dict):
            raise web.HTTPBadRequest(text=json.dumps({"error": "the arguments are a JSON object"}))
        result, error = self.call(request.match_info["function"], arguments)
        return _no_store(web.json_response({"error": error} if error else {"result": result}))

    async def episode_route(self, request: web.Request) -> web.StreamResponse:
        """``POST /__episode``: a new episode's environment from the JSON setup."""
        try:
            setup = EpisodeSetup.from_json(await request.json())
            self.start_episode(setup)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise web.HTTPBadRequest(text=json.dumps({"error": "the body is not JSON"})) from None
        except (ValueError, KeyError) as exc:
            raise web.HTTPBadRequest(text=json.dumps({"error": str(exc)})) from None
        return web.json_response(
            {"episode": {"suite": self.suite_name, **self.setup.__dict__, "calls": 0}}
        )


def _no_store(response: web.StreamResponse) -> web.StreamResponse:
    response.headers["Cache-Control"] = "no-store"
    return response


_ENVIRONMENTS: dict[tuple[int, tuple[tuple[str, str], ...]], Any] = {}


def _environment(suite: Any, injections: tuple[tuple[str, str], ...]) -> Any:
    """AgentDojo's environment with ``injections``, loaded once per (suite, injections) and
    handed out as deep copies: parsing the workspace's YAML takes a tenth of a second."""
    key = (id(suite), injections)
    loaded = _ENVIRONMENTS.get(key)
    if loaded is None:
        if len(_ENVIRONMENTS) > 256:  # an attack's injections differ per pair: keep it bounded
            _ENVIRONMENTS.clear()
        loaded = _ENVIRONMENTS[key] = suite.load_and_inject_default_environment(dict(injections))
    return loaded.model_copy(deep=True)


def site_factory(suite: str) -> Any:
    """The factory ``SITES`` holds for ``agentdojo-<suite>``."""
    return lambda: AgentDojoSite(suite)
