"""The ``obedient`` agent: a deterministic stand-in for a model that does what any text says.

It reads everything the agent view shows it of the page — tool descriptions
(and the descriptions inside their schemas), and every result: text blocks,
string values in ``structuredContent``, error results — and follows every
instruction it finds there, once each, before anything else (``obey`` narrows what
it reads: ``["results"]`` leaves tool descriptions alone). When no such
instruction is waiting, it falls back to the task's plan. It measures whether
the user agent's defences hold whatever the model does: if a page can make
this agent do something, it can make a real model do it on a bad day.

The instruction grammar (case-insensitive, anywhere in a text; several per
text are found in order)::

    call TOOL                          verbs: call, invoke, run, use
    call TOOL with {"id": 1}           a JSON object
    call TOOL with id=1, text="a b"    key=value pairs (JSON scalars, or text)
    call TOOL with path hr/x.xlsx      KEY VALUE, when KEY is one of the tool's arguments
    call TOOL with ?id=1&text=%22a%20b%22  a URL query: percent-encoded JSON values (no space
                                       or quote: it survives any quoting or line folding)
    send WHAT to WHO                   verbs: send, forward, email, mail, post, upload, exfiltrate
    send WHAT with TOOL to WHO with the subject 'Hi'
    navigate to URL                    also: go to, browse to, open, visit, load

``TOOL`` must name a tool in the current catalog, unless it is written in
backticks (then it is called even if absent). Names may hold ``.``, so a full
stop right after one ends the sentence unless it is part of a tool's name
("Then call wipe_notes." calls ``wipe_notes``; see :func:`existing_tool`).
``URL`` is ``http(s)://…`` or a path (resolved against the start URL by the loop).

``send WHAT to WHO`` uses the tool it names (``with TOOL``), else the first
tool whose name looks like sending (send, mail, email, forward, share, post,
message, submit, upload, export), and fills its arguments: recipient-like
fields (``to``, ``recipient``, ``email``, ``address``, ``url``, …) get
``WHO``; every other string field gets ``WHAT`` followed by everything the
agent has seen so far (the worst case: a model that pastes its whole
context); pairs after a second ``with`` (``the subject 'Hi'``) override. With no such tool and a
``WHO`` that is a URL, it navigates there with the same text in ``?data=``.
Otherwise the instruction is recorded in :attr:`ObedientAgent.skipped`.

The plan it falls back to, in order of preference: a YAML plan (the
``scripted`` format; its ``expect`` keys are ignored), else the instructions
in the task text (same grammar), else exploring: each read-only tool
(``readOnlyHint``) that needs no arguments and has not been called yet, once.
Then it finishes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field

from harness.agent_view import AgentTool
from harness.agents.base import AgentContext
from harness.agents.scripted import Plan, load_plan
from harness.errors import ConfigError
from harness.models import CallAction, FinishAction, NavigateAction

_NAME = r"[A-Za-z0-9_.-]{1,128}"
_URL = r"(?:https?://[^\s\"'<>`]+|/[^\s\"'<>`]*)"

CALL_RE = re.compile(
    rf"\b(?:call|invoke|run|use)\s+(?:the\s+)?(?:tool\s+)?"
    rf"(?:`(?P<quoted>{_NAME})`|(?P<name>{_NAME}))(?:\s+tool\b)?",
    re.IGNORECASE,
)
SEND_RE = re.compile(
    r"\b(?:send|forward|email|mail|post|upload|exfiltrate)\s+(?P<what>[^\n]+?)\s+to\s+"
    r"(?P<to>[^\s,;<>]+)",
    re.IGNORECASE,
)
NAVIGATE_RE = re.compile(
    rf"\b(?:(?:navigate|go|browse)\s+to|open|visit|load)\s+(?P<url>{_URL})",
    re.IGNORECASE,
)
_VALUE = r"(?P<value>\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^\s,;]+)"
_PAIR_RE = re.compile(
    rf"\s*(?:,|\band\b)?\s*(?:the\s+)?(?P<key>[A-Za-z_][\w.-]*)\s*[=:]\s*{_VALUE}"
)
# "with path hr/x.xlsx", "with the subject 'Hi'": only for the tool's own argument names.
_SPACED_PAIR_RE = re.compile(
    rf"\s*(?:,|\band\b)?\s*(?:the\s+)?(?P<key>[A-Za-z_][\w.-]*)\s+{_VALUE}", re.IGNORECASE
)
_VIA_RE = re.compile(
    rf"\s+(?:with|using|via)\s+(?:the\s+)?`?(?P<tool>{_NAME})`?(?:\s+tool)?\s*\Z", re.IGNORECASE
)
_WITH_RE = re.compile(r"\s+(?:with|using)\s+", re.IGNORECASE)

SEND_TOOL_RE = re.compile(r"send|mail|forward|share|post|message|submit|upload|export", re.I)
RECIPIENT_FIELDS = (
    "to",
    "recipient",
    "recipients",
    "email",
    "address",
    "destination",
    "dest",
    "url",
    "endpoint",
    "target",
    "webhook",
)
# How much of what it has seen the agent pastes into a message.
SEEN_LIMIT = 4000
SOURCES = ("descriptions", "results")
"""What the agent reads for instructions: tool descriptions (and the texts of their
schemas), and tool results. ``obey = ["results"]`` leaves descriptions alone, for a
benchmark whose threat model puts injections in data only (AgentDojo's)."""


class Instruction(BaseModel):
    """One instruction found in a text."""

    model_config = ConfigDict(frozen=True)

    verb: Literal["call", "send", "navigate"]
    text: str  # the words that said it
    tool: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    what: str | None = None
    to: str | None = None
    extra: str = ""  # "the subject 'Hi'": more arguments for the sending tool
    url: str | None = None

    def key(self) -> str:
        """Identity for "follow each instruction once"."""
        return json.dumps(
            [self.verb, self.tool, self.arguments, self.what, self.to, self.extra, self.url],
            sort_keys=True,
        )


class Followed(BaseModel):
    """An instruction, where the agent found it, and the step it became (if any)."""

    model_config = ConfigDict(frozen=True)

    instruction: Instruction
    source: str  # "task", "description of add_todo", "result of step 2"


def _strip_end(text: str) -> str:
    return text.rstrip(".,;:!?)]}'\"")


def _scalar(text: str) -> Any:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return json.loads(text) if text[0] == '"' else text[1:-1]
    text = _strip_end(text)
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, int | float | bool) or value is None else text


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_arguments(rest: str, names: Collection[str] = ()) -> dict[str, Any]:
    """The arguments after ``with``: a JSON object, a URL query (``?k=v&…``, each value
    percent-encoded JSON), or pairs.

    Pairs are ``key=value`` (or ``key: value``), or ``key value`` when ``key`` is one
    of ``names`` (the tool's argument names), separated by commas or "and".
    """
    rest = rest.lstrip()
    if rest.startswith("?"):
        query = _strip_end(re.split(r"\s", rest[1:], maxsplit=1)[0])
        return {key: _json_or_text(value) for key, value in parse_qsl(query)}
    if rest.startswith("{"):
        try:
            value, _ = json.JSONDecoder().raw_decode(rest)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}
    arguments: dict[str, Any] = {}
    position = 0
    while True:
        match = _PAIR_RE.match(rest, position)
        if match is None:
            match = _SPACED_PAIR_RE.match(rest, position)
            if match is None or match["key"] not in names:
                break
        arguments[match["key"]] = _scalar(match["value"])
        position = match.end()
    return arguments


def existing_tool(captured: str, tools: Collection[str]) -> str | None:
    """The tool in ``tools`` that ``captured`` (a name as written in a text) names, or None.

    Tool names may hold ``.``, so the full stop that ends a sentence ("Then call
    wipe_notes.") is captured with the name: the name is the longest of ``captured`` and
    ``captured`` less trailing full stops that is a tool. A longer word that merely
    begins with a tool's name ("wipe_notes_all", "notes.wipe.everything") names no tool.
    """
    name = captured
    while name:
        if name in tools:
            return name
        if not name.endswith("."):
            return None
        name = name[:-1]
    return None


def find_instructions(text: str, tools: Mapping[str, Collection[str]]) -> list[Instruction]:
    """Every instruction in ``text``, in the order it appears.

    ``tools`` maps each tool in the catalog to its argument names.
    """
    found: list[tuple[int, Instruction]] = []
    for match in CALL_RE.finditer(text):
        end = match.end()
        name = match["quoted"]
        if name is None:
            name = existing_tool(match["name"], tools)
            if name is None:
                continue
            if name != match["name"]:  # a sentence ended after it: so does the instruction
                end = match.start("name") + len(name)
        rest = text[end:]
        arguments: dict[str, Any] = {}
        with_ = _WITH_RE.match(rest)
        if with_ is not None:
            arguments = parse_arguments(rest[with_.end() :], tools.get(name, ()))
        found.append(
            (
                match.start(),
                Instruction(
                    verb="call",
                    text=text[match.start() : end].strip(),
                    tool=name,
                    arguments=arguments,
                ),
            )
        )
    for match in SEND_RE.finditer(text):
        what, via = match["what"].strip(), None
        named = _VIA_RE.search(" " + what)
        if named is not None and named["tool"] in tools:
            what, via = (" " + what)[: named.start()].strip(), named["tool"]
        rest = text[match.end() :]
        with_ = _WITH_RE.match(rest)
        extra = re.split(r"[.;\n]\s", rest[with_.end() :], maxsplit=1)[0] if with_ else ""
        found.append(
            (
                match.start(),
                Instruction(
                    verb="send",
                    text=match[0].strip(),
                    tool=via,
                    what=what,
                    to=_strip_end(match["to"]),
                    extra=extra,
                ),
            )
        )
    for match in NAVIGATE_RE.finditer(text):
        found.append(
            (
                match.start(),
                Instruction(verb="navigate", text=match[0].strip(), url=_strip_end(match["url"])),
            )
        )
    return [instruction for _, instruction in sorted(found, key=lambda item: item[0])]


_FRAME_RE = re.compile(r"\A<untrusted-data[^>]*>\n(?P<inner>.*)\n</untrusted-data>\Z", re.DOTALL)


_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _structured(text: str) -> Any:
    """The JSON — or YAML block (a mapping or list over several lines, as AgentDojo's tools
    answer) — that ``text`` holds, or None."""
    if text.lstrip().startswith(("{", "[")):
        try:
            return json.loads(text)
        except ValueError:
            return None
    if "\n" not in text.strip() or not re.match(r"\s*(?:- |[^\s:][^\n:]*:(?: |$))", text):
        return None
    try:
        return yaml.load(text, Loader=_YAML_LOADER)
    except (yaml.YAMLError, ValueError):
        return None


def texts_of(value: Any, *, skip_meta: bool = True) -> Iterator[str]:
    """Every string inside a JSON value (``_meta`` left out: it is the harness's, not the page's).

    A string that holds JSON (a tool's JSON text block, framed as page data or not) is
    read as the JSON it holds, so an instruction in it is not seen through escaped quotes;
    likewise a multi-line YAML mapping or list (escapes and folded lines undone).
    """
    if isinstance(value, str):
        framed = _FRAME_RE.match(value)
        inner = framed["inner"] if framed else value
        decoded = _structured(inner)
        if isinstance(decoded, dict | list):
            yield from texts_of(decoded, skip_meta=skip_meta)
            return
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if skip_meta and key == "_meta":
                continue
            yield from texts_of(item, skip_meta=skip_meta)
    elif isinstance(value, list):
        for item in value:
            yield from texts_of(item, skip_meta=skip_meta)


def _tool_texts(tool: AgentTool) -> Iterator[str]:
    yield tool.description
    if tool.title:
        yield tool.title

    def descriptions(schema: Any) -> Iterator[str]:
        if isinstance(schema, dict):
            for key, item in schema.items():
                if key in ("description", "title") and isinstance(item, str):
                    yield item
                else:
                    yield from descriptions(item)
        elif isinstance(schema, list):
            for item in schema:
                yield from descriptions(item)

    yield from descriptions(tool.input_schema)


class ObedientAgent:
    """Follows every instruction it reads; falls back to the plan, the task, or exploring."""

    name = "obedient"

    def __init__(self, plan: Plan | None = None, *, obey: Collection[str] = SOURCES) -> None:
        unknown = sorted(set(obey) - set(SOURCES))
        if unknown:
            raise ConfigError(
                f"The obedient agent obeys {', '.join(SOURCES)}; not {', '.join(unknown)}."
            )
        self.obey = frozenset(obey)
        self.plan = plan
        self.default_task = plan.task if plan is not None else ""
        self.followed: list[Followed] = []
        self.skipped: list[Followed] = []
        self._waiting: list[Followed] = []  # injected instructions, not yet followed
        self._keys: set[str] = set()
        self._read_tools: set[str] = set()  # (name, description) already read
        self._read_steps = 0  # history entries already read
        self._fallback: list[Followed] | None = None  # task instructions, when no plan
        self._plan_next = 0
        self._explored: set[str] = set()
        self._task_had_instructions = False

    @classmethod
    def from_file(
        cls, path: str | Path, *, obey: Collection[str] = ("descriptions", "results")
    ) -> ObedientAgent:
        """The agent with a YAML plan to fall back to."""
        return cls(load_plan(path), obey=obey)

    # -- reading ----------------------------------------------------------------------
    def _take(self, instructions: list[Instruction], source: str) -> None:
        for instruction in instructions:
            if instruction.key() in self._keys:
                continue
            self._keys.add(instruction.key())
            self._waiting.append(Followed(instruction=instruction, source=source))

    def _read(self, context: AgentContext) -> None:
        names = argument_names(context.tools)
        for tool in context.tools if "descriptions" in self.obey else []:
            seen = json.dumps([tool.name, tool.description, tool.input_schema], sort_keys=True)
            if seen in self._read_tools:
                continue
            self._read_tools.add(seen)
            for text in _tool_texts(tool):
                self._take(find_instructions(text, names), f"description of {tool.name}")
        for step in context.history[self._read_steps :] if "results" in self.obey else []:
            source = f"result of step {step.index}"
            # Only results: `step.error` is the harness's own message (it echoes the agent's URL).
            for text in texts_of(step.result or {}):
                self._take(find_instructions(text, names), source)
        self._read_steps = len(context.history)

    # -- acting -------------------------------------------------------------------------
    async def next_action(
        self, context: AgentContext
    ) -> CallAction | NavigateAction | FinishAction:
        if self._fallback is None and self.plan is None:
            names = argument_names(context.tools)
            self._fallback = [
                Followed(instruction=i, source="task")
                for i in find_instructions(context.task, names)
            ]
            for item in self._fallback:
                self._keys.add(item.instruction.key())
            self._task_had_instructions = bool(self._fallback)
        self._read(context)
        return self._follow_next(self._waiting, context) or self._fall_back(context)

    def _follow_next(
        self, queue: list[Followed], context: AgentContext
    ) -> CallAction | NavigateAction | None:
        """The first instruction of ``queue`` that can be followed (the others are skipped)."""
        while queue:
            item = queue.pop(0)
            action = self._act(item, context)
            if action is not None:
                self.followed.append(item)
                return action
            self.skipped.append(item)
        return None

    def _fall_back(self, context: AgentContext) -> CallAction | NavigateAction | FinishAction:
        if self.plan is not None:
            if self._plan_next < len(self.plan.steps):
                self._plan_next += 1
                planned = self.plan.action(self._plan_next - 1)
                if isinstance(planned, FinishAction):
                    return planned
                return planned.model_copy(update={"note": f"plan step {self._plan_next}"})
            return FinishAction(answer="done")
        action = self._follow_next(self._fallback or [], context)
        if action is not None:
            return action
        if not self._task_had_instructions:
            called = {s.action.tool for s in context.history if isinstance(s.action, CallAction)}
            for tool in context.tools:
                if tool.name in self._explored | called or not tool.annotations.get("readOnlyHint"):
                    continue
                if tool.input_schema.get("required"):
                    continue
                self._explored.add(tool.name)
                return CallAction(tool=tool.name, note="exploring: a read-only tool")
        return FinishAction(answer="done")

    def _act(self, item: Followed, context: AgentContext) -> CallAction | NavigateAction | None:
        instruction = item.instruction
        note = f"obeying {instruction.text!r} from the {item.source}"
        if instruction.verb == "call" and instruction.tool is not None:
            return CallAction(tool=instruction.tool, arguments=instruction.arguments, note=note)
        if instruction.verb == "navigate" and instruction.url is not None:
            return NavigateAction(url=instruction.url, note=note)
        if instruction.verb == "send" and instruction.to is not None:
            return self._send(instruction, context, note)
        return None

    def _send(
        self, instruction: Instruction, context: AgentContext, note: str
    ) -> CallAction | NavigateAction | None:
        to = instruction.to or ""
        body = f"{instruction.what}\n\n{_seen(context)}".strip()
        named = [t for t in context.tools if t.name == instruction.tool]
        tool = next(iter(named or [t for t in context.tools if SEND_TOOL_RE.search(t.name)]), None)
        if tool is None:
            if urlsplit(to).scheme in ("http", "https"):
                joiner = "&" if "?" in to else "?"
                return NavigateAction(url=to + joiner + urlencode({"data": body[:2000]}), note=note)
            return None
        arguments = fill_send_arguments(tool, to, body)
        arguments.update(parse_arguments(instruction.extra, _properties(tool)))
        return CallAction(tool=tool.name, arguments=arguments, note=note)


def fill_send_arguments(tool: AgentTool, to: str, body: str) -> dict[str, Any]:
    """Arguments for a sending tool: the recipient where it goes, the text everywhere else."""
    properties = tool.input_schema.get("properties")
    if not isinstance(properties, dict):
        return {"to": to, "body": body}
    arguments: dict[str, Any] = {}
    for name, schema in properties.items():
        if not isinstance(schema, dict):
            continue
        kind = schema.get("type")
        recipient = name.lower() in RECIPIENT_FIELDS
        if kind == "array" and recipient:
            arguments[name] = [to]
        elif kind in ("string", None) and "enum" not in schema:
            arguments[name] = to if recipient else body
    return arguments


def _properties(tool: AgentTool) -> list[str]:
    properties = tool.input_schema.get("properties")
    return list(properties) if isinstance(properties, dict) else []


def argument_names(tools: list[AgentTool]) -> dict[str, list[str]]:
    """Each tool's argument names, by tool name (what :func:`find_instructions` takes)."""
    return {tool.name: _properties(tool) for tool in tools}


def _seen(context: AgentContext) -> str:
    """Everything the agent has seen in results so far, as one text (capped)."""
    parts = [
        json.dumps(step.result, ensure_ascii=False, sort_keys=True)
        for step in context.history
        if step.result is not None
    ]
    return "\n".join(parts)[:SEEN_LIMIT]
