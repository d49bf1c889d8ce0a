"""Assertions on WebMCP tools and results, in the style of Playwright's ``expect``.

    from harness.expect import expect_no_leak, expect_result, expect_tool

    expect_tool(webmcp, "add_todo").to_have_input_schema({"required": ["text"]})
    outcome = webmcp.call("add_todo", {"text": "Buy oat milk"})
    expect_result(outcome).to_have_structured_content({"todo": {"text": "Buy oat milk"}})
    expect_no_leak(webmcp, "sk_live_123")

Tool assertions retry until they pass or ``timeout`` seconds run out (5 by
default), as Playwright's do, because pages register their tools from script
after load. Result assertions look at one finished call. A failure raises
``AssertionError`` with what was expected and what was seen — page text as a person
reads it: without the agent's ``<untrusted-data>`` frames, control characters shown as
escapes (pytest writes the message to a terminal).

"Subset" (input schemas, structured content) means: every key of the expected
object is in the actual one with a matching value, recursively; lists match
item by item and must have the same length; anything else must be equal (and
of the same JSON type: ``True`` is not ``1``).

An input schema is read as JSON Schema reads it (:meth:`ToolAssertions.to_have_input_schema`): the lists
that are sets there — ``required``, ``enum``, ``type`` when a list, each list of
``dependentRequired`` — match when every expected item is among the actual ones, in any
order (``{"required": ["text"]}`` holds for a tool that requires ``text`` and ``due``); the
members of ``properties``, ``$defs`` and the like are matched by name, as schemas.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from mcp_types import CallToolResult, TextContent

from harness import sync_api
from harness.agent_view import agent_tools
from harness.elicitation.wording import plain
from harness.models import CallOutcome, Tool, dump_result
from harness.schemas import SUBSCHEMA_KEYWORDS, SUBSCHEMA_LISTS, SUBSCHEMA_MAPS
from harness.session import Session
from harness.stages.framing import unframed, unframed_json
from harness.stages.redaction import withheld_items
from harness.testing.page import PageSession

DEFAULT_TIMEOUT_S = 5.0
_POLL_S = 0.1
_SHOWN = 1500  # characters of a received value shown in a message


class ToolSource(Protocol):
    """Anything with a synchronous ``tools()``: the ``webmcp`` fixture, a sync session."""

    def tools(self) -> list[Tool]:
        """The tools the page offers now."""
        ...


# -- matching ------------------------------------------------------------------------------


def _pointer(path: Sequence[str | int]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def subset_mismatch(expected: Any, actual: Any, path: tuple[str | int, ...] = ()) -> str | None:
    """Where ``actual`` does not contain ``expected`` (see the module docstring), or None."""
    where = _pointer(path) or "(the whole value)"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{where}: expected an object, got {_json_type(actual)} {_short(actual)}"
        for key, value in expected.items():
            if key not in actual:
                return f"{_pointer((*path, key))}: missing (expected {_short(value)})"
            problem = subset_mismatch(value, actual[key], (*path, key))
            if problem is not None:
                return problem
        return None
    if isinstance(expected, list | tuple):
        if not isinstance(actual, list):
            return f"{where}: expected an array, got {_json_type(actual)} {_short(actual)}"
        if len(expected) != len(actual):
            return f"{where}: expected {len(expected)} items, got {len(actual)}"
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            problem = subset_mismatch(want, got, (*path, index))
            if problem is not None:
                return problem
        return None
    if _json_type(expected) != _json_type(actual) or expected != actual:
        return f"{where}: expected {_short(expected)}, got {_short(actual)}"
    return None


_SET_KEYWORDS = frozenset({"required", "enum"})
"""Schema keywords whose list is a set: order and repeats mean nothing."""
_SCHEMA_LISTS = frozenset(SUBSCHEMA_LISTS) - {"items"}
"""Schema keywords whose list holds subschemas, matched item by item: not ``items``, one
subschema in Draft 2020-12, as the harness reads schemas (a list there, the tuple form of
older drafts, is compared as written)."""


def schema_subset_mismatch(
    expected: Any, actual: Any, path: tuple[str | int, ...] = ()
) -> str | None:
    """Where the schema ``actual`` does not contain ``expected``, read as JSON Schema reads
    it (see the module docstring: ``required``, ``enum``, a ``type`` list and
    ``dependentRequired``'s lists match as sets), or None."""
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return subset_mismatch(expected, actual, path)
    for key, want in expected.items():
        here = (*path, key)
        if key not in actual:
            return f"{_pointer(here)}: missing (expected {_short(want)})"
        got = actual[key]
        if key in _SET_KEYWORDS or (key == "type" and isinstance(want, list)):
            problem = _set_mismatch(
                want, [got] if key == "type" and isinstance(got, str) else got, here
            )
        elif key == "dependentRequired" and isinstance(want, dict) and isinstance(got, dict):
            problem = _members_mismatch(want, got, here, _set_mismatch)
        elif key in SUBSCHEMA_MAPS and isinstance(want, dict) and isinstance(got, dict):
            problem = _members_mismatch(want, got, here, schema_subset_mismatch)
        elif key in _SCHEMA_LISTS and isinstance(want, list) and isinstance(got, list):
            problem = _items_mismatch(want, got, here)
        elif key in SUBSCHEMA_KEYWORDS:
            problem = schema_subset_mismatch(want, got, here)
        else:
            problem = subset_mismatch(want, got, here)
        if problem is not None:
            return problem
    return None


def _set_mismatch(expected: Any, actual: Any, path: tuple[str | int, ...]) -> str | None:
    """Where the set ``actual`` lacks an item of ``expected`` (JSON equality, any order)."""
    if not isinstance(expected, list) or not isinstance(actual, list):
        return subset_mismatch(expected, actual, path)
    for want in expected:
        if not any(_equal(want, got) for got in actual):
            return f"{_pointer(path)}: missing {_short(want)}"
    return None


def _members_mismatch(
    expected: dict[str, Any],
    actual: dict[str, Any],
    path: tuple[str | int, ...],
    matches: Callable[[Any, Any, tuple[str | int, ...]], str | None],
) -> str | None:
    """Where a member of ``actual`` named in ``expected`` is missing or does not match."""
    for name, want in expected.items():
        if name not in actual:
            return f"{_pointer((*path, name))}: missing (expected {_short(want)})"
        problem = matches(want, actual[name], (*path, name))
        if problem is not None:
            return problem
    return None


def _items_mismatch(
    expected: list[Any], actual: list[Any], path: tuple[str | int, ...]
) -> str | None:
    """Where a list of subschemas does not match ``expected``'s item by item."""
    if len(expected) != len(actual):
        return f"{_pointer(path)}: expected {len(expected)} items, got {len(actual)}"
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        problem = schema_subset_mismatch(want, got, (*path, index))
        if problem is not None:
            return problem
    return None


def _equal(a: Any, b: Any) -> bool:
    """JSON equality: the same JSON types all the way down (``True`` is not ``1``)."""
    return subset_mismatch(a, b) is None and subset_mismatch(b, a) is None


def _short(value: Any, limit: int = 200) -> str:
    text = json.dumps(unframed_json(value), ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shown(value: Any) -> str:
    text = json.dumps(unframed_json(value), ensure_ascii=False, indent=2, default=str)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _fail(call: str, *lines: str) -> AssertionError:
    """The assertion's message. pytest writes it to a terminal: what a page wrote in it is
    shown without the agent's frames, its control characters as visible escapes."""
    message = "\n".join([f"{call} failed", *(f"  {line}" for line in lines)])
    return AssertionError(plain(unframed(message)))


# -- tools ---------------------------------------------------------------------------------


def _pause(source: Any, seconds: float) -> None:
    # A sync Playwright page's loop runs only while Playwright waits: wait through it, so
    # the page's events (new tools) keep arriving.
    if isinstance(source, PageSession):
        source.page.wait_for_timeout(seconds * 1000)
    else:
        time.sleep(seconds)


class ToolAssertions:
    """What :func:`expect_tool` returns."""

    def __init__(self, source: ToolSource | Sequence[Tool], name: str, timeout: float) -> None:
        self._source = source
        self._name = name
        self._timeout = timeout

    def _tools(self) -> list[Tool]:
        if isinstance(self._source, Sequence):
            return list(self._source)
        return self._source.tools()

    def _retry(self, check: Any) -> Any:
        """Run ``check(tools)`` until it returns a result that is not an error message."""
        deadline = time.monotonic() + self._timeout
        while True:
            outcome = check(self._tools())
            if not isinstance(outcome, _Miss):
                return outcome
            if isinstance(self._source, Sequence) or time.monotonic() >= deadline:
                raise outcome.error
            _pause(self._source, _POLL_S)

    def _call(self, method: str) -> str:
        return f"expect_tool({self._name!r}).{method}"

    def _absent(self, method: str, tools: list[Tool]) -> _Miss:
        names = ", ".join(t.name for t in tools) or "none"
        waited = "" if isinstance(self._source, Sequence) else f" (waited {self._timeout:g} s)"
        return _Miss(
            _fail(
                self._call(method),
                f"expected: a tool named {self._name!r}",
                f"received: no such tool{waited}; the page offers: {names}",
            )
        )

    def to_exist(self) -> Tool:
        """The page offers a tool with this name; returns it."""
        __tracebackhide__ = True

        def check(tools: list[Tool]) -> Tool | _Miss:
            found = next((t for t in tools if t.name == self._name), None)
            return found if found is not None else self._absent("to_exist()", tools)

        tool: Tool = self._retry(check)
        return tool

    def not_to_exist(self) -> None:
        """The page offers no tool with this name (e.g. after it unregistered it)."""
        __tracebackhide__ = True

        def check(tools: list[Tool]) -> _Miss | None:
            found = next((t for t in tools if t.name == self._name), None)
            if found is None:
                return None
            return _Miss(
                _fail(
                    self._call("not_to_exist()"),
                    f"expected: no tool named {self._name!r}",
                    f"received: the page offers it (from {found.origin}, frame {found.frame})",
                )
            )

        self._retry(check)

    def to_have_input_schema(self, subset: dict[str, Any]) -> Tool:
        """The tool's ``inputSchema`` contains ``subset``, read as JSON Schema reads it;
        returns the tool.

        Every key of ``subset`` must be in the schema with a matching value, recursively
        (``properties``, ``$defs`` and the like member by member, as schemas). The lists that
        are sets in JSON Schema — ``required``, ``enum``, ``type`` when a list, each list of
        ``dependentRequired`` — need only hold every expected item, in any order:
        ``{"required": ["text"]}`` holds for a tool that requires ``text`` and ``due``, and
        ``{"required": ["due", "text"]}`` for one that lists them the other way round. Any
        other list (``allOf``, ``anyOf``, ``oneOf``, ``prefixItems``, a ``const`` or
        ``default``) is matched item by item, with the same length. A failure names the
        first place that does not match (``/required: missing "owner"``).
        """
        __tracebackhide__ = True
        method = f"to_have_input_schema({_short(subset, 80)})"

        def check(tools: list[Tool]) -> Tool | _Miss:
            found = next((t for t in tools if t.name == self._name), None)
            if found is None:
                return self._absent(method, tools)
            problem = schema_subset_mismatch(subset, found.input_schema)
            if problem is None:
                return found
            return _Miss(
                _fail(
                    self._call(method),
                    f"mismatch at {problem}",
                    "received inputSchema:",
                    *_shown(found.input_schema).splitlines(),
                )
            )

        tool: Tool = self._retry(check)
        return tool

    def to_have_annotation(self, key: str, value: Any = ...) -> Tool:
        """The tool has annotation ``key`` (with ``value``, when given); returns the tool.

        Annotation names are the spec's, with ``Hint`` (``readOnlyHint``) on both backends.
        """
        __tracebackhide__ = True
        wanted = key if value is ... else f"{key}={_short(value, 80)}"
        method = f"to_have_annotation({wanted})"

        def check(tools: list[Tool]) -> Tool | _Miss:
            found = next((t for t in tools if t.name == self._name), None)
            if found is None:
                return self._absent(method, tools)
            annotations = found.annotations
            if key in annotations and (
                value is ... or subset_mismatch(value, annotations[key]) is None
            ):
                return found
            return _Miss(
                _fail(
                    self._call(method),
                    f"expected: annotation {wanted}",
                    f"received: annotations {_short(annotations, 400)}",
                )
            )

        tool: Tool = self._retry(check)
        return tool


class _Miss:
    """A check that did not pass (yet), with the error to raise if it never does."""

    def __init__(self, error: AssertionError) -> None:
        self.error = error


def expect_tool(
    source: ToolSource | Sequence[Tool], name: str, *, timeout: float = DEFAULT_TIMEOUT_S
) -> ToolAssertions:
    """Assertions on the tool ``name`` of a sync session (``webmcp``) or of a list of tools.

    With an async session, pass its tools: ``expect_tool(await session.tools(), name)``
    (a list is checked once, without retrying).
    """
    if isinstance(source, Session):
        raise TypeError(
            "expect_tool() needs a sync session or a list of tools; with an async session, "
            "pass `await session.tools()`."
        )
    return ToolAssertions(source, name, timeout)


# -- results -------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    """A result's text on one line, without the agent's frames (read before joining)."""
    return " ".join(unframed(text).split()) or "(none)"


def _text(result: CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


class ResultAssertions:
    """What :func:`expect_result` returns."""

    def __init__(self, outcome: CallOutcome | CallToolResult) -> None:
        self._outcome = outcome if isinstance(outcome, CallOutcome) else None
        self._result = outcome.result if isinstance(outcome, CallOutcome) else outcome

    def _call(self, method: str) -> str:
        tool = f"{self._outcome.tool!r}" if self._outcome is not None else "result"
        return f"expect_result({tool}).{method}"

    def _received(self) -> list[str]:
        kind = self._outcome.error_kind if self._outcome is not None else None
        status = f"isError ({kind})" if kind else ("isError" if self._result.is_error else "ok")
        return [f"received: {status}", *_shown(dump_result(self._result)).splitlines()]

    def to_succeed(self) -> CallToolResult:
        """The call succeeded (no ``isError``); returns the agent view."""
        __tracebackhide__ = True
        if self._result.is_error:
            raise _fail(
                self._call("to_succeed()"),
                "expected: a result without isError",
                f"message: {_one_line(_text(self._result))}",
                *self._received(),
            )
        return self._result

    def to_be_error(
        self, match: str | re.Pattern[str] | None = None, *, kind: str | None = None
    ) -> str:
        """The call failed: ``isError``, with text matching ``match`` (``re.search``).

        ``kind`` checks why (needs a :class:`CallOutcome`): ``validation``, ``refused``,
        ``thrown``, ``timeout``, ``cancelled`` or ``navigation``. Returns the error text.
        """
        __tracebackhide__ = True
        shown = [repr(match.pattern if isinstance(match, re.Pattern) else match)] * bool(match)
        method = f"to_be_error({', '.join([*shown, *([f'kind={kind!r}'] * bool(kind))])})"
        text = _text(self._result)
        if not self._result.is_error:
            raise _fail(self._call(method), "expected: an isError result", *self._received())
        if match is not None and re.search(match, text) is None:
            raise _fail(
                self._call(method),
                f"expected: error text matching {shown[0]}",
                f"received text: {_one_line(text)}",
            )
        if kind is not None:
            if self._outcome is None:
                raise TypeError("to_be_error(kind=…) needs the CallOutcome, not only its result.")
            if self._outcome.error_kind != kind:
                raise _fail(
                    self._call(method),
                    f"expected: error kind {kind!r}",
                    f"received: error kind {self._outcome.error_kind!r}: {text}",
                )
        return text

    def to_have_structured_content(self, subset: Any) -> Any:
        """``structuredContent`` contains ``subset``; returns the structured content."""
        __tracebackhide__ = True
        method = f"to_have_structured_content({_short(subset, 80)})"
        content = self._result.structured_content
        if content is None:
            raise _fail(self._call(method), "expected: structuredContent", *self._received())
        problem = subset_mismatch(subset, content)
        if problem is not None:
            raise _fail(
                self._call(method),
                f"mismatch at {problem}",
                "received structuredContent:",
                *_shown(content).splitlines(),
            )
        return content

    def to_have_redacted(self, path: str) -> None:
        """Redaction withheld the value at ``path`` from the agent view.

        ``path`` is a JSON pointer into the result, as the redaction stage lists it under
        ``_meta["webmcp-harness/redacted"]`` (``/structuredContent/secret``); a pointer
        into the structured content (``/secret``) names the same field.
        """
        __tracebackhide__ = True
        pointer = path if path.startswith("/") or path == "" else "/" + path
        listed = withheld_items(self._result)
        if any(item.path in (pointer, "/structuredContent" + pointer) for item in listed):
            return
        seen = ", ".join(f"{item.path} ({item.kind})" for item in listed) or "nothing"
        raise _fail(
            self._call(f"to_have_redacted({pointer!r})"),
            f"expected: {pointer} withheld from the agent view",
            f"received: the result lists as withheld: {seen}",
        )


def expect_result(outcome: CallOutcome | CallToolResult) -> ResultAssertions:
    """Assertions on one call's agent view (``webmcp.call(…)`` returns a CallOutcome)."""
    return ResultAssertions(outcome)


# -- leaks ---------------------------------------------------------------------------------


def _views(session: Session, trace: Any) -> Iterator[tuple[str, Any]]:
    tools = agent_tools(
        session.catalog.tools(), framing=session.untrusted_framing, withheld=session.scrubber
    )
    yield "the tool list", [t.as_json() for t in tools]
    for index, outcome in enumerate(session.history, 1):
        yield f"call {index} ({outcome.tool}) result", outcome.agent_json()
    for event in getattr(trace, "events", None) or []:
        # The arguments a call event records are the test's own, not something it was shown.
        view = event.model_dump(mode="json", exclude={"arguments"})
        yield f"trace event {event.seq} ({event.type})", view


def _hits(needle: Any, value: Any, path: tuple[str | int, ...] = ()) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _hits(needle, key, (*path, f"{key} (key)"))
            yield from _hits(needle, item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _hits(needle, item, (*path, index))
    elif isinstance(needle, str) and isinstance(value, str) and needle in value:
        at = value.index(needle)
        snippet = value[max(0, at - 40) : at + len(needle) + 40]
        yield f"{_pointer(path) or '/'}: …{snippet}…"
    elif (
        not isinstance(needle, str) and _json_type(needle) == _json_type(value) and needle == value
    ):
        yield f"{_pointer(path) or '/'}: {_short(value)}"


def expect_no_leak(session: PageSession | sync_api.Session | Session, value: Any) -> None:
    """``value`` appears in no agent view of the session.

    Checked: the agent view of the tools the page offers now, every call's result
    as the agent saw it, and, when the session keeps a trace (the ``webmcp``
    fixture's does), every trace event — which holds every tool list the page
    offered. Strings match as substrings, other values by equality.
    """
    __tracebackhide__ = True
    if value is None or value == "":
        raise ValueError("expect_no_leak() needs a value to look for.")
    inner = session if isinstance(session, Session) else session.inner
    trace = session.trace if isinstance(session, PageSession) else None
    found = [
        f"{where} at {hit}" for where, view in _views(inner, trace) for hit in _hits(value, view)
    ]
    if found:
        raise _fail(
            f"expect_no_leak({_short(value, 80)})",
            f"expected: the value in no agent view; found in {len(found)} place(s):",
            *found[:20],
            *([f"… and {len(found) - 20} more"] if len(found) > 20 else []),
        )
