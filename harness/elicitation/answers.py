"""Answers files: scripted answers to the user's questions, for tests and CI.

An answers file (YAML or JSON) is a list of entries; the first entry whose match keys
all match a question answers it. The keys match what the harness decided, never what a
page wrote: ``source`` (which kind of question), ``tool`` (the tool called), ``rule``
(the policy rule that asks), ``field`` (a field the question asks for), ``origin`` (the
origin that asks), ``destination`` (where a navigation goes), and ``message``, which
matches part of the harness's own sentence (:data:`~harness.elicitation.wording.WORDING`)
— never the page's text a question quotes (a tool's title, the page's own question, the
URLs of the data involved). An entry whose ``message`` is part of no sentence the harness
asks with could only ever match a page's words: the file is refused when it is loaded,
saying how to write the entry instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic import ValidationError as ModelError

from harness.elicitation.base import (
    SCRIPTED_ANSWER,
    Action,
    ElicitationRequest,
    ElicitationResult,
    Source,
)
from harness.elicitation.wording import WORDING
from harness.errors import ConfigError
from harness.inputs import load_input
from harness.urls import origin_of

SOURCES: tuple[Source, ...] = get_args(Source)
SOURCE_NAMES: dict[str, Source] = {**{s: s for s in SOURCES}, "tool": "tool-question"}
"""What ``source`` may say: each source, and ``tool`` for a tool's own question."""

FORMAT = "answers: [{source, tool, rule, field, origin, destination, message, action, values}]"
HOW_TO_MATCH = (
    "match on what the harness decided instead: source (policy, navigation, form-review, "
    "tool-elicit, tool), tool, rule, field, origin or destination — e.g. "
    "{source: policy, tool: delete_all_todos, rule: confirm-destructive, action: decline}, "
    "or for a tool's own question {source: tool, tool: pick_list, field: list, "
    "action: accept, values: {list: groceries}}"
)


class ScriptedAnswer(BaseModel):
    """One entry of an answers file: match keys (all optional), then the answer.

    ``source``, ``tool``, ``origin`` and ``destination`` match exactly, ``rule`` matches
    one of the rules that ask, ``field`` a question that asks for that field, and
    ``message`` part of the harness's own sentence. See the module docstring.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: Source | None = None
    tool: str | None = None
    field: str | None = None
    rule: str | None = None
    origin: str | None = None
    destination: str | None = None
    message: str | None = None
    action: Action
    values: dict[str, Any] = Field(default_factory=dict)

    @field_validator("source", mode="before")
    @classmethod
    def _source_name(cls, value: Any) -> Any:
        if isinstance(value, str) and value in SOURCE_NAMES:
            return SOURCE_NAMES[value]
        if value is not None:
            raise ValueError(f"source must be one of {', '.join(SOURCE_NAMES)}, not {value!r}")
        return value

    @model_validator(mode="after")
    def _checked(self) -> ScriptedAnswer:
        if self.values and self.action != "accept":
            raise ValueError(f"values only go with action: accept, not {self.action}")
        for key in ("origin", "destination"):
            problem = _origin_problem(key, getattr(self, key))
            if problem:
                raise ValueError(problem)
        if self.message is not None and not self.message.strip():
            raise ValueError("message is empty; leave it out to match any question")
        if self.message is not None and not self.wording():
            asked = f"source {self.source}" if self.source else "any source"
            raise ValueError(
                f"message {self.message!r} is part of no question the harness asks ({asked}): "
                "it could only match page text a question quotes, which is never matched; "
                + HOW_TO_MATCH
            )
        return self

    def wording(self) -> list[str]:
        """The harness's sentences this entry's ``message`` is part of (every sentence of
        the sources it can match when it has no ``message``)."""
        sources = [self.source] if self.source else list(SOURCES)
        return [
            sentence
            for source in sources
            for sentence in WORDING[source]
            if self.message is None or self.message in sentence
        ]

    def matches(self, request: ElicitationRequest) -> bool:
        """Whether every key this entry names matches ``request``."""
        return (
            (self.source is None or self.source == request.source)
            and (self.tool is None or self.tool == request.tool)
            and (self.field is None or self.field in request.fields)
            and (self.rule is None or self.rule in (request.rule or "").split(", "))
            and (self.origin is None or self.origin == request.origin)
            and (self.destination is None or self.destination == request.destination)
            and (self.message is None or self.message in request.message)
        )


class AnswersFile(BaseModel):
    """The whole answers file: ``answers:``, a list of :class:`ScriptedAnswer`."""

    model_config = ConfigDict(extra="forbid")

    answers: list[ScriptedAnswer]


def _origin_problem(key: str, value: str | None) -> str | None:
    """Why ``value`` can match no question's ``origin``/``destination`` (None: it can). A
    question names an origin as the browser serializes it (``http://127.0.0.1:8101``: no
    path, no trailing slash, lower case, default port left out), compared exactly."""
    if value is None or value == "null" or origin_of(value) == value:
        return None
    meant = origin_of(value)
    if meant == "null" and "://" not in value:
        meant = origin_of(f"http://{value}")
    hint = f"; write {meant!r}" if meant != "null" else " (e.g. 'https://example.org')"
    return (
        f"{key} {value!r} is not an origin as a question names it — scheme://host[:port], "
        f"no path, no trailing slash, lower case — so it would match no question{hint}"
    )


def answers_from_data(data: Any, source: str) -> list[ScriptedAnswer]:
    """The entries of an answers file's parsed content (``source`` names it in messages)."""
    try:
        return AnswersFile.model_validate(data).answers
    except ModelError as exc:
        problems = "; ".join(_problem(e) for e in exc.errors())
        raise ConfigError(f"{source} does not fit the format ({FORMAT}): {problems}") from None


def _problem(error: Any) -> str:
    where = ".".join(str(p) for p in error["loc"]) or "(top)"
    return f"{where}: {str(error['msg']).removeprefix('Value error, ')}"


def load_answers(path: str | Path) -> list[ScriptedAnswer]:
    """Read an answers file (YAML or JSON); :class:`ConfigError` says what is wrong."""
    path = Path(path)
    data = load_input(path, "the answers file", default="yaml")
    return answers_from_data(data, f"The answers file {path}")


class ScriptedHandler:
    """Answers from a list (an answers file): the first entry whose keys all match.

    An ``accept`` answers the form as shown (defaults, the agent's values) with
    the entry's ``values`` on top — the user's answer wins. A request no entry
    matches is ``cancel``, with the reason; :attr:`misses` keeps those requests.

    ``origins`` maps an origin a question names to the origin the entries name it by: an
    experiment's worker serves each bundled site on a port of its own, and an answers file
    names the site by its fixed origin (``http://127.0.0.1:8107``, the store's), as
    ``webmcp-harness sites`` serves it. The question itself keeps the origin it has.
    """

    def __init__(
        self, answers: list[ScriptedAnswer], origins: Mapping[str, str] | None = None
    ) -> None:
        self.answers = list(answers)
        self.origins = dict(origins or {})
        self.misses: list[ElicitationRequest] = []

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedHandler:
        """A handler reading ``path`` (see :func:`load_answers`)."""
        return cls(load_answers(path))

    @classmethod
    def from_data(cls, data: Any, origins: Mapping[str, str] | None = None) -> ScriptedHandler:
        """A handler from the file's content already parsed (``{"answers": [...]}``)."""
        return cls(answers_from_data(data, "The scripted answers"), origins)

    def _as_named(self, request: ElicitationRequest) -> ElicitationRequest:
        """``request`` with its origins as the entries name them (see :attr:`origins`)."""
        if not self.origins:
            return request
        destination = request.destination
        return request.model_copy(
            update={
                "origin": self.origins.get(request.origin, request.origin),
                "destination": self.origins.get(destination, destination) if destination else None,
            }
        )

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        """The first matching entry's answer, or ``cancel`` with the reason."""
        named = self._as_named(request)
        for index, entry in enumerate(self.answers):
            if not entry.matches(named):
                continue
            reason = f"{SCRIPTED_ANSWER}{index + 1}"
            if entry.action != "accept":
                return ElicitationResult(action=entry.action, reason=reason)
            values = request.starting_values()
            values.update({k: v for k, v in entry.values.items() if k in request.fields})
            return ElicitationResult(action="accept", content=values, reason=reason)
        self.misses.append(request)
        asked = ", ".join(request.fields) or "none"
        origin = repr(request.origin)
        if named.origin != request.origin:
            origin += f" (named {named.origin!r})"
        return ElicitationResult(
            action="cancel",
            reason=(
                f"no scripted answer matches (source={request.source}, tool={request.tool!r}, "
                f"rule={request.rule!r}, origin={origin}, fields: {asked})"
            ),
        )
