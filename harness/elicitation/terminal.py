"""The terminal elicitation handler: a person answers at the keyboard.

Each request is shown as a panel (who asks: origin, tool, rule and facts; the
message), then each field is prompted with its label, description, rules and
the value already in it (the agent's, or the default). Answers are checked by
the same rules as every other handler (:func:`harness.elicitation.form.field_problem`);
an invalid answer is asked again. Page-provided text is shown as plain text,
with control characters shown as escapes (:func:`~harness.elicitation.wording.plain`),
and what the question quotes of a page stays on one line, marked as the page's, so a
page cannot restyle the prompt or write a line in the harness's voice.

Input conventions: Enter keeps the value shown in brackets; ``!clear`` empties an
optional field; ``!decline`` or ``!cancel`` ends the elicitation at any prompt.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import json
import sys
import threading
from collections.abc import Mapping
from typing import Any, TextIO

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from harness.elicitation.base import SOURCE_TITLES, Action, ElicitationRequest, ElicitationResult
from harness.elicitation.form import (
    describe_field,
    enum_choices,
    field_kind,
    field_problem,
    field_title,
    is_sensitive,
    item_choices,
    value_from_text,
)
from harness.elicitation.wording import one_line, plain, question_lines, quote

__all__ = ["TerminalHandler", "plain"]

_ENDINGS: dict[str, Action] = {"!decline": "decline", "!cancel": "cancel"}


class _LineReader:
    """Reads one line at a time without blocking the event loop.

    The read runs in a daemon thread (a blocked read cannot be interrupted). If
    the question is cancelled meanwhile, the read stays pending and the next
    prompt takes its line, so no line is lost or read twice.
    """

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream
        self._pending: asyncio.Future[str] | None = None

    def hides_input(self, secret: bool) -> bool:
        """Whether a secret is read without echo (a real terminal, via ``getpass``)."""
        return secret and self.stream is None and sys.stdin.isatty()

    async def read(self, *, secret: bool, prompt: str = "") -> str:
        """The next line; ``prompt`` is only used (and written by ``getpass``) for hidden input."""
        loop = asyncio.get_running_loop()
        if self._pending is None or self._pending.get_loop() is not loop:
            self._pending = loop.create_future()
            threading.Thread(
                target=self._read_into,
                args=(loop, self._pending, self.hides_input(secret), prompt),
                name="elicitation-input",
                daemon=True,
            ).start()
        line = await asyncio.shield(self._pending)
        self._pending = None
        if line == "":
            raise EOFError
        return line.rstrip("\r\n")

    def _read_into(
        self, loop: asyncio.AbstractEventLoop, into: asyncio.Future[str], hidden: bool, prompt: str
    ) -> None:
        try:
            if hidden:
                # getpass turns echo off (dropping anything typed before), then writes the
                # prompt, so nothing typed after the prompt appears is echoed or lost.
                line = getpass.getpass(prompt) + "\n"
            else:
                line = (self.stream or sys.stdin).readline()
        except EOFError:
            line = ""
        except Exception:  # a closed stream reads as the end of input
            line = ""
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
            loop.call_soon_threadsafe(_settle, into, line)


def _settle(future: asyncio.Future[str], line: str) -> None:
    if not future.done():
        future.set_result(line)


class _Ended(Exception):
    def __init__(self, action: Action) -> None:
        self.action: Action = action


class TerminalHandler:
    """Asks a person at the terminal; questions are asked one at a time.

    ``console`` is where prompts go (default: standard error, so ``--json``
    output stays clean); ``stream`` is where answers come from (default:
    standard input, with no echo for password fields on a real terminal).
    """

    def __init__(self, *, console: Console | None = None, stream: TextIO | None = None) -> None:
        self.console = console or Console(stderr=True, highlight=False)
        self._reader = _LineReader(stream)
        self._lock = asyncio.Lock()

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        """Show the request, prompt for every field, then ask to accept, decline or cancel."""
        async with self._lock:
            self.console.print(self.panel(request))
            try:
                return await self._answer(request)
            except EOFError:
                self.console.print("End of input: cancelled.")
                return ElicitationResult(action="cancel", reason="end of input at the terminal")
            except _Ended as ended:
                return ElicitationResult(action=ended.action)
            except asyncio.CancelledError:
                self.console.print("\nNo answer in time: cancelled.")
                raise

    @staticmethod
    def panel(request: ElicitationRequest) -> Panel:
        """The request as a panel: the harness's question, then who asks and what it is
        about, each text a page or the agent wrote quoted on one line as theirs."""
        rows = Table.grid(padding=(0, 2))
        rows.add_column(style="bold")
        rows.add_column()
        for line in question_lines(request):
            value = Text(line.value)
            if line.by:
                value.append(f"  (the {line.by}'s words)", style="dim")
            rows.add_row(Text(line.label), value)
        return Panel(
            Group(Text(plain(request.message)), Text(""), rows),
            title=SOURCE_TITLES[request.source],
            title_align="left",
        )

    async def _answer(self, request: ElicitationRequest) -> ElicitationResult:
        values = request.starting_values()
        fields = request.fields if request.mode == "form" else {}
        for name, prop in fields.items():
            await self._ask_field(name, prop, values, required=name in request.required)
        if fields:
            self._summary(fields, values)
        action = await self._choose(default="accept" if fields else None)
        if action != "accept":
            return ElicitationResult(action=action)
        if request.mode != "form":
            return ElicitationResult(action="accept")
        return ElicitationResult(
            action="accept", content={k: values[k] for k in fields if k in values}
        )

    async def _ask_field(
        self, name: str, prop: Mapping[str, Any], values: dict[str, Any], *, required: bool
    ) -> None:
        secret = is_sensitive(prop)
        heading = Text(one_line(field_title(name, prop)), style="bold")
        if required:
            heading.append(" *", style="red")
        heading.append(f"  ({describe_field(prop, required=required)})", style="dim")
        self.console.print(heading)
        if isinstance(prop.get("description"), str):
            described = Text("  " + quote(prop["description"]), style="italic")
            described.append("  (the page's words)", style="dim")
            self.console.print(described)
        choices = enum_choices(prop) or item_choices(prop)
        if choices:
            listed = "  ".join(f"{i}) {one_line(label)}" for i, (_, label) in enumerate(choices, 1))
            self.console.print(Text("  " + listed))
        while True:
            prompt = Text("  > ")
            if name in values:
                shown = "hidden" if secret else _shown(prop, values[name])
                prompt.append(f"[{plain(shown)}] ", style="cyan")
            if self._reader.hides_input(secret):
                line = await self._reader.read(secret=True, prompt=prompt.plain)
            else:
                self.console.print(prompt, end="")
                line = await self._reader.read(secret=secret)
            command = line.strip()
            if command in _ENDINGS:
                raise _Ended(_ENDINGS[command])
            problem = self._take(name, prop, values, line, command, required=required)
            if problem is None:
                return
            self.console.print(
                Text(f"  ✗ {one_line(field_title(name, prop))} {problem}", style="red")
            )

    @staticmethod
    def _take(
        name: str,
        prop: Mapping[str, Any],
        values: dict[str, Any],
        line: str,
        command: str,
        *,
        required: bool,
    ) -> str | None:
        """Put the typed answer into ``values``; the problem with it, or None."""
        if command == "!clear" or (command == "" and name not in values):
            if required:
                return "is required"
            values.pop(name, None)
            return None
        if command == "":
            value = values[name]  # keep what is shown, if it fits
        else:
            try:
                value = value_from_text(prop, line)
            except ValueError as exc:
                return str(exc)
        problem = field_problem(prop, value)
        if problem is None:
            values[name] = value
        return problem

    def _summary(self, fields: Mapping[str, Mapping[str, Any]], values: Mapping[str, Any]) -> None:
        table = Table(title="Your answers", title_justify="left", show_header=False)
        table.add_column(style="bold")
        table.add_column()
        for name, prop in fields.items():
            if name not in values:
                shown = "(empty)"
            else:
                shown = "••••" if is_sensitive(prop) else _shown(prop, values[name])
            table.add_row(Text(one_line(field_title(name, prop))), Text(plain(shown)))
        self.console.print(table)

    async def _choose(self, *, default: Action | None) -> Action:
        words: dict[str, Action] = {
            "a": "accept",
            "accept": "accept",
            "y": "accept",
            "yes": "accept",
            "d": "decline",
            "decline": "decline",
            "n": "decline",
            "no": "decline",
            "c": "cancel",
            "cancel": "cancel",
            "!decline": "decline",
            "!cancel": "cancel",
        }
        hint = f" ({default})" if default else ""
        while True:
            self.console.print(f"[a]ccept / [d]ecline / [c]ancel{hint}: ", end="", markup=False)
            answer = (await self._reader.read(secret=False)).strip().lower()
            if answer == "" and default is not None:
                return default
            if answer in words:
                return words[answer]
            self.console.print(Text("  ✗ type a, d or c", style="red"))


def _shown(prop: Mapping[str, Any], value: Any) -> str:
    kind = field_kind(prop)
    if kind == "boolean":
        return "yes" if value else "no"
    choices = enum_choices(prop) if kind == "enum" else item_choices(prop)
    if choices:
        labels = {json.dumps(v): label for v, label in choices}
        items = value if kind == "multi" and isinstance(value, list) else [value]
        return ", ".join(labels.get(json.dumps(v), plain(v)) for v in items)
    if isinstance(value, list):
        return ", ".join(plain(v) for v in value)
    return plain(value)
