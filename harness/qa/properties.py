"""The properties the fuzzer checks, each with a name users select it by.

=====================  ====================================================================
name                   holds when
=====================  ====================================================================
``no-throw``           valid input never makes the tool throw, crash the page or time out
                       (an ``isError`` result the tool returns on purpose is fine)
``output-schema``      every result of a tool with an ``outputSchema`` has
                       ``structuredContent`` that fits it
``sensitive-marked``   every secret-looking value in a result sits under an ``x-sensitive``
                       field (or the tool says ``sensitiveHint``)
``read-only``          a ``readOnlyHint`` tool sends no state-changing request (POST, PUT,
                       PATCH, DELETE, …) and changes no form control, storage or cookie
``idempotent``         an ``idempotentHint`` tool called twice with the same input leaves the
                       page as calling it once did
``no-navigation``      a tool that does not declare navigation (a ``_meta.uiRedirect`` in
                       its result, or being a form) leaves the page on its document (a
                       URL it changes in that document, with the history API or a
                       fragment, is no navigation)
``invalid-refused``    a near-miss input is refused before ``execute``: by the harness, and
                       — since Chromium's own WebMCP does not validate arguments — by the
                       tool itself when it gets one unchecked, without changing anything
``form-constraints``   a ``<form toolname>``'s inputSchema lets through nothing its own
                       constraint validation refuses (a *warning*: the form is right by
                       HTML's rules, the schema Chromium derives says less;
                       :mod:`harness.qa.form_constraints`)
=====================  ====================================================================

A form that refuses input its schema allows did not throw: ``no-throw`` holds on that call,
and ``form-constraints`` reports it.

What the page changes by itself (a clock in a control, a heartbeat in storage: seen change
while nothing was called, :class:`~harness.qa.observe.OwnChanges`) is left out of what
``read-only``, ``idempotent`` and ``invalid-refused`` compare, and said where they report.

A check may read the page's own result to decide (:attr:`Observation.page_result`: a value
redaction withheld still has to fit its schema), but what it says comes from what the
harness lets be seen: text is quoted from the agent view of the result, and a place in the
page's result is named by keys the agent view holds there or the ``outputSchema`` declares
(any other is ``«key»``). The fuzzer then scrubs every report with the session's scrubber
(:meth:`harness.qa.fuzz.Fuzzer.fuzz`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from jsonschema.exceptions import ValidationError
from mcp_types import CallToolResult, TextContent

from harness.models import CallOutcome, Tool
from harness.qa.observe import OwnChanges, PageState, Window
from harness.schemas import Unresolvable, keyword_locations
from harness.stages.framing import unframed
from harness.stages.navigation import ui_redirect_target
from harness.stages.redaction import sensitive_paths
from harness.stages.scrubbing import HANDLE
from harness.stages.secrets import secret_kind
from harness.stages.sensitivity import declared_names
from harness.stages.validation import (
    outside_references_problem,
    result_validator,
    schema_problem,
)

Inputs = Literal["valid", "near-miss"]
Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Property:
    """A named property: what it checks, on which inputs, and which tools it concerns."""

    name: str
    title: str
    inputs: Inputs
    concerns: Callable[[Tool], str | None]
    """None when the property concerns the tool, else why not."""
    severity: Severity = "error"
    """``warning``: a broken one is reported, and the run (its exit status, the audit's
    finding) does not fail for it."""


def _always(_tool: Tool) -> None:
    return None


def _with_output_schema(tool: Tool) -> str | None:
    return None if tool.output_schema else "the tool declares no outputSchema"


def _read_only(tool: Tool) -> str | None:
    return None if tool.annotations.get("readOnlyHint") is True else "not declared readOnlyHint"


def _idempotent(tool: Tool) -> str | None:
    return None if tool.annotations.get("idempotentHint") is True else "not declared idempotentHint"


def _script(tool: Tool) -> str | None:
    return None if tool.source == "script" else "a form tool: submitting it is a navigation"


def _form(tool: Tool) -> str | None:
    return None if tool.source == "declarative" else "not a <form toolname>"


def _has_schema_to_miss(tool: Tool) -> str | None:
    return None if tool.source == "script" else "a form tool: the form itself checks its input"


PROPERTIES: dict[str, Property] = {
    p.name: p
    for p in (
        Property("no-throw", "valid input never makes the tool throw", "valid", _always),
        Property("output-schema", "results fit the outputSchema", "valid", _with_output_schema),
        Property(
            "sensitive-marked",
            "secret-looking values sit under x-sensitive fields",
            "valid",
            _always,
        ),
        Property("read-only", "a readOnlyHint tool changes nothing", "valid", _read_only),
        Property(
            "idempotent",
            "an idempotentHint tool called twice leaves the state of one call",
            "valid",
            _idempotent,
        ),
        Property(
            "no-navigation",
            "a tool that does not declare navigation does not navigate",
            "valid",
            _script,
        ),
        Property(
            "invalid-refused",
            "near-miss inputs are refused before execute",
            "near-miss",
            _has_schema_to_miss,
        ),
        Property(
            "form-constraints",
            "a form's inputSchema lets through nothing its constraint validation refuses",
            "valid",
            _form,
            "warning",
        ),
    )
}


@dataclass
class Observation:
    """One call with valid input, and what the page looked like around it."""

    tool: Tool
    outcome: CallOutcome
    """The call; its ``result`` is the agent view, what a check may quote."""
    page_result: CallToolResult | None
    """The result before redaction (None: the tool did not run): to decide by, never quoted."""
    window: Window
    before: PageState | None = None
    after: PageState | None = None
    again: PageState | None = None
    """The state after the same call a second time (for ``idempotent``)."""
    own: OwnChanges = field(default_factory=OwnChanges)
    """What the page changes by itself, as far as seen by the time the call is judged (a
    place the call changed is watched with nothing called first): left out of the
    comparisons."""
    form_refusal: list[str] | None = None
    """The browser refused the input (None: it did not) — its validation of the filled form,
    or its fill of a control: what each control refused, and how its author makes the
    schema say it."""


@dataclass
class NearMissObservation:
    """A near-miss: what the harness did with it, and what the tool did when it got it
    unchecked (None: not delivered, e.g. a form tool)."""

    tool: Tool
    mistake: str
    harness_kind: str | None
    tool_refused: bool | None = None
    tool_changes: list[str] = field(default_factory=list)
    """What the tool changed, but for what the page changes by itself (``own``)."""
    own: OwnChanges = field(default_factory=OwnChanges)


# -- the checks -----------------------------------------------------------------------------


def without_handles(text: str) -> str:
    """``text`` with each handle (``wmh-result-5a4b…``, made anew for every call) written as
    its kind, ``wmh-result-…``: a run with a seed reports the same words every time."""
    return HANDLE.sub(lambda m: m.group(0).rsplit("-", 1)[0] + "-…", text)


def _first_text(result: CallToolResult) -> str:
    """The first line of the agent view's text, as a person reads it (without the agent's
    frames); a line that looks like it holds a secret is described, not quoted."""
    for block in result.content:
        if isinstance(block, TextContent):
            text = without_handles(unframed(block.text)).strip()
            line = text.splitlines()[0] if text else ""
            if secret_kind(line):
                return "(a message that looks like it holds a secret)"
            return line[:200]
    return ""


def check_no_throw(seen: Observation) -> str | None:
    """``no-throw``: what the tool said is quoted from the agent view (a sensitive tool's
    error is withheld there whole, and so here)."""
    kind = seen.outcome.error_kind
    if seen.window.blocked:
        return None  # the fuzzer aborted a request it sent: `read-only` reports that
    if seen.form_refusal is not None:
        return None  # the form refused it, as HTML says it may: `form-constraints` reports it
    if kind in ("thrown", "crashed", "timeout"):
        said = _first_text(seen.outcome.result)
        what = {"thrown": "threw", "crashed": "crashed the page", "timeout": "timed out"}[kind]
        return f"{seen.tool.name} {what} on valid input" + (f": {said}" if said else "")
    if kind == "validation":
        return (
            "the harness refused input the schema allows (its ECMAScript and JavaScript-number "
            "rules differ from JSON Schema's here)"
        )
    return None


def check_output_schema(seen: Observation) -> str | None:
    """``output-schema``: the result before redaction against the declared schema, read
    as the harness reads every page schema (:func:`~harness.stages.validation.result_validator`:
    ECMAScript patterns, formats asserted)."""
    schema = seen.tool.output_schema
    if not schema or seen.outcome.is_error or seen.page_result is None:
        return None
    structured = seen.page_result.structured_content
    if structured is None:
        return "the result has no structuredContent, though the tool declares an outputSchema"
    errors: list[ValidationError] = []
    places: list[tuple[str | int, ...]] = []
    try:
        problem = schema_problem(schema) or outside_references_problem("outputSchema", schema)
        if problem is None:
            validator = result_validator(schema)
            errors = list(validator.iter_errors(structured))[:3]
            places = keyword_locations(validator.schema, errors)
    except Unresolvable as exc:  # a reference the static check did not see: never fetched
        problem = f"it refers to {str(exc.args[0] if exc.args else exc)!r}, outside itself"
    except RecursionError:
        problem = "it (or the result) is nested too deeply to be checked"
    if problem is not None:
        return (
            f"the outputSchema cannot be used to check results: {problem}; fix the "
            "outputSchema (a valid Draft 2020-12 schema whose $refs stay inside it) and "
            "its results can be checked"
        )
    if not errors:
        return None
    visible = _Visible(seen)
    problems = [
        f"{visible.place(e.absolute_path)}: fails `{e.validator}` (schema {_schema_pointer(at)})"
        for e, at in zip(errors, places, strict=True)
    ]
    return "structuredContent does not fit the outputSchema: " + "; ".join(problems)


def check_sensitive_marked(seen: Observation) -> str | None:
    """``sensitive-marked``: secret-looking values outside every ``x-sensitive`` field."""
    tool, result = seen.tool, seen.page_result
    if result is None or tool.annotations.get("sensitiveHint") is True:
        return None
    structured = result.structured_content
    marked: list[tuple[Any, ...]] = []
    if tool.output_schema and structured is not None:
        with_paths, _ = sensitive_paths(tool.output_schema, structured)
        marked = [path for path, _label in with_paths]
    hidden = {v for p in marked for v in _strings(_get(structured, p))}
    visible = _Visible(seen)
    found = [
        f"/structuredContent{visible.place(path)}: {kind}"
        for path, kind in _secret_leaves(structured, ())
        if not any(path[: len(m)] == m for m in marked)
    ]
    for index, block in enumerate(result.content):
        if isinstance(block, TextContent):
            text = block.text
            for value in sorted(hidden, key=len, reverse=True):
                text = text.replace(value, "")
            kind = secret_kind(text)
            if kind:
                found.append(f"/content/{index}/text: {kind}")
    if not found:
        return None
    return "secret-looking values outside any x-sensitive field: " + "; ".join(found[:3])


def check_read_only(seen: Observation) -> str | None:
    """``read-only``: no state-changing request, no storage or form change (but for what
    the page changes by itself)."""
    blocked = seen.window.blocked
    changes = [
        f"sent {r}" + (" (blocked)" if r in blocked else "")
        for r in dict.fromkeys([*seen.window.unsafe, *blocked])
    ]
    if seen.before is not None and seen.after is not None:
        changes += seen.before.storage_changes(seen.after, ignoring=seen.own.places)
    if not changes:
        return None
    return (
        "a readOnlyHint tool changed state: "
        + "; ".join(dict.fromkeys(changes))
        + (left_out(seen.own))
    )


def check_idempotent(seen: Observation) -> str | None:
    """``idempotent``: the second call leaves what the first left (but for what the page
    changes by itself)."""
    if seen.after is None or seen.again is None:
        return None
    changes = seen.after.changes(seen.again, ignoring=seen.own.places)
    if not changes:
        return None
    return (
        "calling it again with the same input changed more: "
        + "; ".join(changes)
        + left_out(seen.own)
    )


def left_out(own: OwnChanges) -> str:
    """What a report adds when what the page changes by itself was left out of a check."""
    if not own.places:
        return ""
    return f" (left out, as the page changes them by itself: {own.described()})"


def navigated(seen: Observation) -> bool:
    """Whether the page's top frame loaded another document during the call. A URL changed
    in the same document (``history.pushState``/``replaceState``, a fragment) is none: the
    document, and what the user had in it, stays."""
    if seen.outcome.error_kind == "navigation":
        return True
    if seen.before is None or seen.after is None:
        return bool(seen.window.navigations)
    was, now = seen.before.document(), seen.after.document()
    if was != now:
        return True
    # Neither read (the top frame did not answer): by the URL, as far as it tells.
    return not was and _no_fragment(seen.before.url) != _no_fragment(seen.after.url)


def check_no_navigation(seen: Observation) -> str | None:
    """``no-navigation``: a navigation the tool did not declare (another document loaded
    in the page: :func:`navigated`)."""
    if not navigated(seen):
        return None
    meta = seen.page_result.meta if seen.page_result is not None else None
    if ui_redirect_target(meta, seen.tool.frame_url, seen.tool.origin) is not None:
        return None
    return (
        "the tool navigated the page without declaring it (return `_meta.uiRedirect` and "
        "let the user agent navigate after the result)"
    )


def check_invalid_refused(seen: NearMissObservation) -> str | None:
    """``invalid-refused``."""
    if seen.harness_kind != "validation":
        return (
            f"the harness did not refuse the near-miss ({seen.mistake}) before execute "
            f"(the call ended as {seen.harness_kind or 'a result'})"
        )
    given = (
        f"given the near-miss ({seen.mistake}) unchecked, as Chromium's own WebMCP passes "
        "arguments, the tool"
    )
    changed = "; ".join(seen.tool_changes)
    if seen.tool_refused is False:
        return (
            f"{given} accepted it{' and changed state: ' + changed if changed else ''}; check "
            "the input in execute and throw (or return an isError result)" + left_out(seen.own)
        )
    if changed:
        return (
            f"{given} refused it, but changed state first: {changed}; check the input before "
            "execute changes anything" + left_out(seen.own)
        )
    return None


def check_form_constraints(seen: Observation) -> str | None:
    """``form-constraints``: the form does not take input the schema allows — the browser's
    validation of the filled form or its fill of a control refused it, or the harness did, the
    form being about to change it as it is set (:mod:`harness.qa.form_constraints` says which
    control, and the fix)."""
    if seen.form_refusal is None:
        return None
    return (
        "the form does not take input its inputSchema allows (agents "
        "are shown that schema, send such input and fail): " + "; ".join(seen.form_refusal)
    )


VALID_CHECKS: dict[str, Callable[[Observation], str | None]] = {
    "no-throw": check_no_throw,
    "output-schema": check_output_schema,
    "sensitive-marked": check_sensitive_marked,
    "read-only": check_read_only,
    "idempotent": check_idempotent,
    "no-navigation": check_no_navigation,
    "form-constraints": check_form_constraints,
}


def violations(names: list[str], seen: Observation) -> dict[str, str]:
    """What each of the ``names`` properties finds wrong with one call (only failures)."""
    found = {}
    for name in names:
        message = VALID_CHECKS[name](seen)
        if message is not None:
            found[name] = message
    return found


# -- walking values ---------------------------------------------------------------------------


class _Visible:
    """Names places in a call's result as the agent view lets them be seen: a key that the
    agent view holds at that place, or that the tool's ``outputSchema`` declares (its
    shape, not data), is shown; any other (a key redaction withheld, a key of a result
    withheld whole) and any that looks like a secret is ``«key»``."""

    def __init__(self, seen: Observation) -> None:
        self.shown = seen.outcome.result.structured_content
        schema = seen.tool.output_schema
        self.declared = declared_names(schema) if schema else frozenset()

    def place(self, path: Iterable[Any]) -> str:
        """A JSON pointer into the page's result, for a report."""
        parts: list[str] = []
        node: Any = self.shown
        for key in path:
            if isinstance(key, int):
                parts.append(str(key))
                node = node[key] if isinstance(node, list) and 0 <= key < len(node) else None
                continue
            key = str(key)
            held = isinstance(node, dict) and key in node
            known = (held or key in self.declared) and not secret_kind(key)
            parts.append(key if known else "«key»")
            node = node[key] if held else None
        return "".join(f"/{p}" for p in parts) or "/"


def _schema_pointer(path: Iterable[Any]) -> str:
    """A JSON pointer into a tool's schema (the catalog's: any agent reads it); a name that
    looks like a secret is shown as ``«key»`` all the same."""
    return "".join(f"/{'«key»' if secret_kind(str(p)) else p}" for p in path) or "/"


def _no_fragment(url: str) -> str:
    return url.split("#", 1)[0]


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif value is not None:
        yield json.dumps(value)


def _secret_leaves(value: Any, path: tuple[Any, ...]) -> Iterator[tuple[tuple[Any, ...], str]]:
    if isinstance(value, str):
        kind = secret_kind(value)
        if kind:
            yield path, kind
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _secret_leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _secret_leaves(item, (*path, index))
