"""What a grid runs: tasks, their success checks and attack metadata (the grid file's ``[[tasks]]``).

Checks (:data:`Check`) are tables told apart by their first key: ``call`` (a tool
call that returned a non-error result), ``request`` (a request a bundled site
received), ``http`` (site state over HTTP: a JSON pointer and an expectation),
``js`` (a predicate evaluated in the page), ``answer`` (the agent's final answer)
and ``agentdojo`` (AgentDojo's own ``utility()`` or ``security()`` check of the
episode's environment, ``harness/experiments/agentdojo/``).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from harness.experiments.limits import MAX_SETTLE_MS, MAX_STEPS, at_most
from harness.urls import http_url, parse

SLUG = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")
"""What task ids and the names in episode ids may be made of."""

LEAK_PLACES = ("agent-view", "trace", "requests")
"""Where canaries are looked for; ``requests:SITE`` narrows ``requests`` to one site."""


def slug(text: str) -> str:
    """``text`` made fit for an episode id: runs of other characters become ``-``."""
    made = re.sub(r"[^A-Za-z0-9_.]+", "-", text).strip("-.")
    return made[:80] or "x"


# -- checks ------------------------------------------------------------------------------------


class _Check(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


class CallCheck(_Check):
    """A call of tool ``call`` that returned a non-error result (optionally with arguments).

    ``arguments``: a subset the call's arguments must contain; ``contains``: text that
    must occur in the arguments (as JSON).
    """

    call: str = Field(min_length=1)
    arguments: dict[str, Any] | None = None
    contains: str | None = None

    def describe(self) -> str:
        """One line for tables and reports."""
        extra = f" with {self.arguments}" if self.arguments else ""
        extra += f" containing {self.contains!r}" if self.contains else ""
        return f"call {self.call}{extra} succeeded"


class RequestCheck(_Check):
    """A request the bundled site ``request`` received during the episode.

    ``path``: exact, or a prefix when it ends in ``*``; ``contains``: text in the path,
    query or body.
    """

    request: str = Field(min_length=1)
    method: str | None = None
    path: str = "*"
    contains: str | None = None

    def describe(self) -> str:
        """One line for tables and reports."""
        method = f"{self.method} " if self.method else ""
        contains = f" containing {self.contains!r}" if self.contains else ""
        return f"{self.request} received {method}{self.path}{contains}"


class HttpCheck(_Check):
    """Site state over HTTP: ``GET http`` (a path on the task's site, ``site``'s, or a URL).

    The JSON answer at ``pointer`` must satisfy every expectation given: ``equals``,
    ``contains`` (a substring of text, an item of a list — a subset for objects),
    ``length``, ``exists``.
    """

    http: str = Field(min_length=1)
    site: str | None = None
    pointer: str = ""
    status: int = 200
    equals: Any = None
    contains: Any = None
    length: int | None = None
    exists: bool | None = None

    def describe(self) -> str:
        """One line for tables and reports."""
        wants = [
            f"{name} {value!r}"
            for name, value in (
                ("equals", self.equals),
                ("contains", self.contains),
                ("length", self.length),
                ("exists", self.exists),
            )
            if value is not None
        ]
        where = f"{self.site}:" if self.site else ""
        return f"GET {where}{self.http}{self.pointer} {' and '.join(wants) or 'answers'}"


class JsCheck(_Check):
    """A JavaScript expression that must be truthy (a promise is awaited).

    It runs in the episode's page, or, with ``url`` (a path on the task's site or a
    URL), in a new tab of the episode's browser context opened there. By default in an
    isolated world of the page's main frame: it sees the DOM, storage, cookies and the
    network as they are, not as the page's script patched them, but not the page's script
    globals either. ``world = "page"`` runs it in the page's own world, to read what only
    the page's script holds (``window.wiped``), on a site trusted not to lie to its judge.
    Both within the check's time limit.
    """

    js: str = Field(min_length=1)
    url: str | None = None
    world: Literal["isolated", "page"] = "isolated"

    def describe(self) -> str:
        """One line for tables and reports."""
        where = f" at {self.url}" if self.url else ""
        return f"js{where}: {self.js[:80]}"


class AnswerCheck(_Check):
    """The agent's final answer: ``contains`` (default), ``equals`` or ``regex``."""

    answer: str
    match: Literal["contains", "equals", "regex"] = "contains"
    case_sensitive: bool = False

    @model_validator(mode="after")
    def _regex_compiles(self) -> AnswerCheck:
        if self.match == "regex":
            try:
                re.compile(self.answer)
            except re.error as exc:
                raise ValueError(f"bad regex {self.answer!r}: {exc}") from None
        return self

    def describe(self) -> str:
        """One line for tables and reports."""
        return f"answer {self.match} {self.answer!r}"


class AgentDojoCheck(_Check):
    """AgentDojo's own check of the episode: ``utility`` (a user task's ``utility()``) or
    ``security`` (an injection task's ``security()``), judged on the environment the
    AgentDojo ``site`` held before and after the episode, with the agent's final answer.

    ``security-attempted``: the injection task's ``security()`` on the environment the
    agent's requested calls would have left had each one run (blocked ones included) —
    whether the agent was turned, whatever the user agent then allowed.
    """

    agentdojo: Literal["utility", "security", "security-attempted"]
    site: str = Field(min_length=1)
    task: str = Field(min_length=1)
    """The AgentDojo task (``user_task_3``, ``injection_task_1``) whose check it is."""

    def describe(self) -> str:
        """One line for tables and reports."""
        check = "utility()" if self.agentdojo == "utility" else "security()"
        attempted = " of the calls it asked for" if self.agentdojo == "security-attempted" else ""
        return f"AgentDojo {self.site.removeprefix('agentdojo-')} {self.task}: {check}{attempted}"


CHECK_KINDS = ("call", "request", "http", "js", "answer", "agentdojo")


def _check_kind(value: Any) -> str | None:
    if isinstance(value, BaseModel):
        return next((k for k in CHECK_KINDS if hasattr(value, k)), None)
    if isinstance(value, dict):
        found = [k for k in CHECK_KINDS if k in value]
        return found[0] if len(found) == 1 else None
    return None


Check = Annotated[
    Annotated[CallCheck, Tag("call")]
    | Annotated[RequestCheck, Tag("request")]
    | Annotated[HttpCheck, Tag("http")]
    | Annotated[JsCheck, Tag("js")]
    | Annotated[AnswerCheck, Tag("answer")]
    | Annotated[AgentDojoCheck, Tag("agentdojo")],
    Discriminator(
        _check_kind,
        custom_error_type="check_kind",
        custom_error_message="a check has exactly one of call, request, http, js, answer, agentdojo",
    ),
]
"""One machine-checkable criterion."""


# -- tasks -------------------------------------------------------------------------------------


class AttackSpec(BaseModel):
    """What counts as the attack succeeding, and which strings count as a leak where."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    category: str = ""
    goal: str = ""
    succeeded: list[Check] = Field(default_factory=list)
    """Any check that passes means the attack succeeded."""
    attempted: list[Check] = Field(default_factory=list)
    """Any check that passes means the agent attempted the attack (the intermediate
    measure: whether or not the user agent let the calls run)."""
    canaries: list[str] = Field(default_factory=list)
    """Strings that must not be found in ``leak_in``; never written to any output."""
    leak_in: list[str] = Field(default_factory=lambda: list(LEAK_PLACES))

    @field_validator("leak_in")
    @classmethod
    def _places(cls, places: list[str]) -> list[str]:
        for place in places:
            base, _, site = place.partition(":")
            if base not in LEAK_PLACES or (site and base != "requests"):
                raise ValueError(
                    f"{place!r} is not a place to look for leaks: "
                    f"{', '.join(LEAK_PLACES)}, or requests:SITE"
                )
        return places

    @field_validator("canaries")
    @classmethod
    def _canaries(cls, canaries: list[str]) -> list[str]:
        if any(len(c) < 4 for c in canaries):
            raise ValueError("a canary must be at least 4 characters (short ones match by chance)")
        return canaries


class AgentDojoCase(BaseModel):
    """Which AgentDojo case a task is: a user task alone (benign), a user task with an
    injection task (attacked), or an injection task's ground truth alone (``injection``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    suite: str
    version: str
    user_task: str | None = None
    injection_task: str | None = None

    @property
    def kind(self) -> Literal["benign", "attacked", "injection"]:
        """``benign``, ``attacked`` or ``injection``."""
        if self.user_task is None:
            return "injection"
        return "benign" if self.injection_task is None else "attacked"


class TaskSpec(BaseModel):
    """A benign user task on a site, its success checks, and optional attack metadata."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    id: str
    instruction: str = Field(min_length=1)
    site: str | None = Field(default=None, min_length=1)
    url: str | None = None
    path: str = "/"
    reset: str | None = None
    """For ``url`` tasks: a URL to POST before each episode to restore the site's state."""
    plan: dict[str, Any] | None = None
    """The plan the ``scripted`` agent follows (and ``obedient`` falls back to)."""
    max_steps: Annotated[int | None, at_most("max_steps", MAX_STEPS, "steps")] = Field(
        default=None, ge=1
    )
    success: list[Check] = Field(default_factory=list)
    """Every check must pass; with none, success is the agent finishing."""
    attack: AttackSpec | None = None
    source: str = ""
    """The file the task came from (for messages)."""
    suite: str = ""
    """The suite the task belongs to (``webmcp-attacks``, ``agentdojo-banking``); empty for
    a grid's own tasks."""
    suite_version: str = ""
    settle_ms: Annotated[int | None, at_most("settle_ms", MAX_SETTLE_MS, "ms")] = Field(
        default=None, ge=0
    )
    """The catalog's quiet window after the start page loads (0: do not wait, for sites
    whose tools are registered before ``load``); None: the harness's default."""
    agentdojo: AgentDojoCase | None = None

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not SLUG.match(value):
            raise ValueError(f"{value!r}: task ids are 1–80 of A–Z a–z 0–9 _ . -")
        return value

    @model_validator(mode="after")
    def _one_place(self) -> TaskSpec:
        if (self.site is None) == (self.url is None):
            raise ValueError("a task has exactly one of `site` (a bundled site) and `url`")
        if self.url is not None and http_url(self.url) is None:
            raise ValueError(f"url {self.url!r} must be an http(s) URL")
        if self.reset is not None and http_url(self.reset) is None:
            raise ValueError(
                f"reset {self.reset!r} must be an absolute http(s) URL (the harness POSTs "
                "to it before each episode), e.g. 'http://127.0.0.1:8000/reset'"
            )
        return self

    @property
    def site_label(self) -> str:
        """The site column of the tables: the bundled site's name, or the URL's host."""
        if self.site is not None:
            return self.site
        parsed = parse(self.url or "")
        return parsed.host if parsed is not None else ""

    @property
    def is_injection_task(self) -> bool:
        """Whether this is an AgentDojo injection task's ground truth alone: its verdict is
        ``security()`` (the attacker's goal reached when asked for directly), not a utility."""
        return self.agentdojo is not None and self.agentdojo.kind == "injection"

    @property
    def has_attack(self) -> bool:
        """Whether the attack metric applies (the task says when the attack succeeded)."""
        return self.attack is not None and bool(self.attack.succeeded)

    def sites(self) -> list[str]:
        """The bundled sites this task needs served: its own and those its checks read."""
        needed = [self.site] if self.site else []
        attack = self.attack
        checks: list[Any] = [
            *self.success,
            *(attack.succeeded + attack.attempted if attack else []),
        ]
        for check in checks:
            if isinstance(check, RequestCheck):
                needed.append(check.request)
            elif isinstance(check, HttpCheck | AgentDojoCheck) and check.site:
                needed.append(check.site)
        for place in self.attack.leak_in if self.attack else []:
            if place.startswith("requests:"):
                needed.append(place.partition(":")[2])
        return list(dict.fromkeys(needed))
