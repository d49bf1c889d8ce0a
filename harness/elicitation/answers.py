"""Answers files: scripted answers to the user's questions, for tests and CI.

An answers file (YAML or JSON) is a list of entries; the first entry whose match keys
(``tool``, ``field``, ``rule``, ``message``) all match a request answers it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic import ValidationError as ModelError

from harness.elicitation.base import Action, ElicitationRequest, ElicitationResult
from harness.errors import ConfigError, parse_problem, read_input_file


class ScriptedAnswer(BaseModel):
    """One entry of an answers file: match keys (all optional), then the answer.

    ``tool`` and ``rule`` match exactly, ``field`` matches a request that asks for
    that field, ``message`` matches a substring of the request's message.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str | None = None
    field: str | None = None
    rule: str | None = None
    message: str | None = None
    action: Action
    values: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _values_only_with_accept(self) -> ScriptedAnswer:
        if self.values and self.action != "accept":
            raise ValueError(f"values only go with action: accept, not {self.action}")
        return self

    def matches(self, request: ElicitationRequest) -> bool:
        """Whether every key this entry names matches ``request``."""
        return (
            (self.tool is None or self.tool == request.tool)
            and (self.field is None or self.field in request.fields)
            and (self.rule is None or self.rule == request.rule)
            and (self.message is None or self.message in request.message)
        )


class AnswersFile(BaseModel):
    """The whole answers file: ``answers:``, a list of :class:`ScriptedAnswer`."""

    model_config = ConfigDict(extra="forbid")

    answers: list[ScriptedAnswer]


def load_answers(path: str | Path) -> list[ScriptedAnswer]:
    """Read an answers file (YAML or JSON); :class:`ConfigError` says what is wrong."""
    path = Path(path)
    text = read_input_file(path, "the answers file")
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise ConfigError(
            f"The answers file {path} is not valid YAML/JSON: {parse_problem(exc)}"
        ) from exc
    try:
        return AnswersFile.model_validate(data).answers
    except ModelError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(
            f"The answers file {path} does not fit the format "
            f"(answers: [{{tool, field, rule, message, action, values}}]): {problems}"
        ) from exc


class ScriptedHandler:
    """Answers from a list (an answers file): the first entry whose keys all match.

    An ``accept`` answers the form as shown (defaults, the agent's values) with
    the entry's ``values`` on top — the user's answer wins. A request no entry
    matches is ``cancel``, with the reason; :attr:`misses` keeps those requests.
    """

    def __init__(self, answers: list[ScriptedAnswer]) -> None:
        self.answers = list(answers)
        self.misses: list[ElicitationRequest] = []

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedHandler:
        """A handler reading ``path`` (see :func:`load_answers`)."""
        return cls(load_answers(path))

    @classmethod
    def from_data(cls, data: Any) -> ScriptedHandler:
        """A handler from the file's content already parsed (``{"answers": [...]}``)."""
        try:
            return cls(AnswersFile.model_validate(data).answers)
        except ModelError as exc:
            raise ConfigError(f"Scripted answers do not fit the format: {exc}") from exc

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        """The first matching entry's answer, or ``cancel`` with the reason."""
        for index, entry in enumerate(self.answers):
            if not entry.matches(request):
                continue
            reason = f"scripted answer #{index + 1}"
            if entry.action != "accept":
                return ElicitationResult(action=entry.action, reason=reason)
            values = request.starting_values()
            values.update({k: v for k, v in entry.values.items() if k in request.fields})
            return ElicitationResult(action="accept", content=values, reason=reason)
        self.misses.append(request)
        asked = ", ".join(request.fields) or "none"
        return ElicitationResult(
            action="cancel",
            reason=(
                f"no scripted answer matches (tool={request.tool!r}, rule={request.rule!r}, "
                f"fields: {asked}, message {request.message[:80]!r})"
            ),
        )
