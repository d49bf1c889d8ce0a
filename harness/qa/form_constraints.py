"""What a ``<form toolname>``'s own constraint validation refuses that its ``inputSchema``
lets through.

Chromium makes a form tool's ``inputSchema`` from its controls, and says less than the form
checks: ``required`` only makes the key required (``""`` fits ``{"type": "string"}``),
``type=email`` and ``type=url`` add no format, a date's ``min`` and ``max`` are left out,
``multipleOf`` only comes when the step base is a multiple of the step. An agent reads the
schema, sends what it allows, and the browser's interactive validation refuses the
submission ("Form validation failed: …"). For a time, a date and time, a month, a week or a
color, Chromium writes what a value looks like as a regular expression in ``format``, which
JSON Schema does not read (an unknown format checks nothing): any string fits the schema,
and the browser's fill of the control refuses what it cannot hold ('Invalid value "0" for
parameter t'). The tool threw nothing: the schema agents are shown lets through what the
form refuses. The fuzzer reports that as ``form-constraints``
(a warning: the form is right by HTML's rules) with the control, the constraint and what a
form author can change so the schema says it; and draws the inputs of the other properties
from :func:`accepted_schema` (the schema with what the form checks added), so one such
mismatch does not hide the rest of the tool's behaviour.

``minlength``/``maxlength`` are no such mismatch: the browser checks them only on a value a
person typed, never on one an agent's call filled in (Chromium and the polyfill alike).

The harness refuses, before anything is typed in, a value the form would change as it is
set (a range rounds a value off its step, a one-line field drops line breaks): the schema
let it through too, and the fuzzer reports it the same way (:func:`not_kept`).

Which of these ended a call, the call's outcome says (:class:`~harness.models.FormRefusal`,
from where the form refused it): never the message's words, which differ between Chromium
and the polyfill, and which a page's own error can imitate.
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mcp_types import CallToolResult, TextContent
from playwright.async_api import Error as PlaywrightError

from harness.browser.isolated import IsolatedWorlds, PageReadTimeout
from harness.models import CallOutcome, FormRefusal, Tool
from harness.schemas.patterns import HTML, PatternTimeout, pattern_flags, search
from harness.session import Session

_FORMAT_IS_A_PATTERN = {
    "time": "HH:MM, 24-hour",
    "datetime-local": "YYYY-MM-DDTHH:MM",
    "month": "YYYY-MM",
    "week": "YYYY-Www",
    "color": "#rrggbb",
}
"""The controls whose form Chromium writes as a regular expression in ``format``, and that
form as a description says it."""

_TEXT_LIKE = frozenset({"text", "search", "tel", "url", "email", "password"})

_STEP_FIX = (
    "Chromium adds multipleOf only when the step base (min, else value, else 0) is a multiple "
    "of the step; set min to a multiple of step (or leave it out), or say the allowed values "
    "in its toolparamdescription"
)

# The form's listed controls that take part in validation, with what decides it. Read in a
# world the page cannot patch; the tag is the control's start tag as written (shortened).
_READ_JS = """(name) => {
  const form = [...document.querySelectorAll('form[toolname]')]
    .find((f) => f.getAttribute('toolname') === name);
  if (!form) return null;
  const flags = ['valueMissing', 'typeMismatch', 'patternMismatch', 'tooLong', 'tooShort',
                 'rangeUnderflow', 'rangeOverflow', 'stepMismatch', 'badInput', 'customError'];
  const kept = ['required', 'pattern', 'min', 'max', 'step', 'multiple', 'minlength',
                'maxlength', 'type', 'value'];
  return [...form.elements].filter((c) => c.willValidate && c.name).map((c) => {
    const tag = c.localName;
    const attrs = {};
    for (const a of kept) if (c.hasAttribute(a)) attrs[a] = c.getAttribute(a);
    const written = [...c.attributes].filter((a) => a.name !== 'value')
      .map((a) => a.value === '' ? a.name : `${a.name}="${a.value.slice(0, 60)}"`);
    const first = tag === 'select' && c.options.length ? c.options[0].value : null;
    return {name: c.name, tag, kind: tag === 'input' ? c.type : c.type || tag, attrs,
            start: `<${[tag, ...written].join(' ')}>`.slice(0, 200),
            flags: flags.filter((f) => c.validity[f]), firstOption: first};
  });
}"""


@dataclass(frozen=True)
class Control:
    """One control of a form tool that the browser validates, as the page has it now."""

    name: str
    tag: str
    kind: str
    """The input's type (``text``, ``email``, …), ``select-one``/``select-multiple``, ``textarea``."""
    attributes: dict[str, str]
    start: str
    """Its start tag as written (``<input name="title" required>``), for a report."""
    flags: tuple[str, ...]
    """The ``ValidityState`` flags that are true now (empty: the control is valid)."""
    first_option: str | None = None


async def read_form(session: Session, tool: Tool) -> list[Control] | None:
    """The validated controls of ``tool``'s form as the page has them now (None: not a
    ``<form toolname>``, or its frame could not be read)."""
    if tool.source != "declarative":
        return None
    with contextlib.suppress(PlaywrightError, PageReadTimeout):
        async with IsolatedWorlds(session.page) as isolated:
            for world in await isolated.worlds():
                if not (world.top if tool.frame == "main" else world.url == tool.frame_url):
                    continue
                raw = await isolated.evaluate(world, _READ_JS, tool.name)
                if isinstance(raw, list):
                    return [_control(item) for item in raw if isinstance(item, dict)]
    return None


def _control(raw: dict[str, Any]) -> Control:
    first = raw.get("firstOption")
    return Control(
        name=str(raw.get("name", "")),
        tag=str(raw.get("tag", "")),
        kind=str(raw.get("kind", "")),
        attributes={str(k): str(v) for k, v in (raw.get("attrs") or {}).items()},
        start=str(raw.get("start", "")),
        flags=tuple(str(f) for f in raw.get("flags") or ()),
        first_option=first if isinstance(first, str) else None,
    )


def form_refusal(tool: Tool, outcome: CallOutcome) -> FormRefusal | None:
    """How the form refused the call's input, when that is how the call ended (the backend
    says so from where it happened; a page's error, whatever its words, is none)."""
    return outcome.form_refusal if tool.source == "declarative" else None


def refusal_words(result: CallToolResult | None) -> str:
    """What the refusal said, for a report (the agent view's first text, without the
    harness's "Tool error: UnknownError: " before it)."""
    for block in result.content if result is not None else []:
        if isinstance(block, TextContent):
            return re.sub(r"^Tool error: \w+: ", "", block.text).strip()
    return ""


def changed_words(said: str, name: str) -> str:
    """What the harness said of a value the form would change (:func:`refusal_words` of such
    a refusal), after the parameter's name: "the form's range control would change it to 7
    (…); the nearest values it takes are 7 and 10"."""
    said = said.split("\n", 1)[0]
    said = said.split(f"for parameter {name}: ", 1)[-1].removesuffix(" Nothing was filled.")
    return said.rstrip(".")


def not_kept(name: str, said: str, controls: list[Control], arguments: dict[str, Any]) -> str:
    """The report of a value the form would not keep (nothing was filled, so no control's
    validity says it), with what its author can change."""
    control = next((c for c in controls if c.name == name), None)
    where = control.start if control is not None else f"the control named {name!r}"
    given = json.dumps(arguments[name], ensure_ascii=False)
    return f"{where} would not keep {given} (the harness refused it: {said}): {_keep_fix(control)}"


def _keep_fix(control: Control | None) -> str:
    if control is not None and control.kind == "range":
        return _STEP_FIX
    return (
        'the schema says only "string"; if the value may hold several lines, make it a '
        '<textarea>; otherwise add pattern="^[^\\r\\n]*$" so the inputSchema says it'
    )


def mismatches(
    controls: list[Control], arguments: dict[str, Any], refused: FormRefusal | None = None
) -> list[str]:
    """What each invalid control refused and how the form's author makes the schema say it;
    ``refused``: how the form refused the input, which names the control its fill refused,
    if that is what it did."""
    if refused is not None and refused.kind == "fill" and refused.parameter is not None:
        name = refused.parameter
        return [
            f"{control.start} refused {_given(arguments, name)} (a value it cannot hold, which "
            f"the browser's fill leaves out): {_fill_fix(control)}"
            for control in controls
            if control.name == name
        ][:1]
    found = []
    for control in controls:
        for flag in control.flags:
            why = _why_and_fix(control, flag, arguments.get(control.name))
            found.append(
                f"{control.start} refused {_given(arguments, control.name)} ({flag}): {why}"
            )
    return found


def _given(arguments: dict[str, Any], name: str) -> str:
    return json.dumps(arguments[name], ensure_ascii=False) if name in arguments else "nothing"


def _fill_fix(control: Control) -> str:
    """Why the schema let through a value the control cannot hold, and what its author can do."""
    form = _FORMAT_IS_A_PATTERN.get(control.kind)
    if form is None:
        return "say what the control accepts in its toolparamdescription"
    return (
        f"Chromium writes what a {control.kind} value looks like as a regular expression in "
        "`format`, which JSON Schema does not read as one (an unknown format checks nothing), "
        f'so any string fits the inputSchema; say the form ("{form}") in its '
        "toolparamdescription"
    )


def _empty_choice_fix(control: Control) -> str:
    """Why a required ``<select>`` left empty fits the schema, by what the select has: a
    multiple one's array has no ``minItems``; a single one's enum lists its empty
    placeholder; one without options has nothing to choose."""
    if control.kind == "select-multiple":
        return (
            "Chromium's array for a <select multiple> has no minItems, so [] (no option "
            "chosen) fits the inputSchema; say that at least one is needed in its "
            "toolparamdescription, or drop `required` and refuse an empty choice in a submit "
            "handler (respondWith an error the agent can read)"
        )
    if control.first_option == "":
        return (
            "Chromium lists every option in the schema's enum, the empty placeholder "
            "too; remove the placeholder option (or make it a real choice)"
        )
    if control.first_option is None:
        return (
            "it has no options, so nothing can be chosen; give it its options before the "
            "tool is read, or drop `required`"
        )
    return (
        "no option was chosen, and nothing in the inputSchema says one is needed; say so "
        "in its toolparamdescription"
    )


def _why_and_fix(control: Control, flag: str, value: Any) -> str:
    start, kind, attrs = control.start, control.kind, control.attributes
    if flag == "valueMissing":
        if kind in _TEXT_LIKE and "pattern" in attrs:
            return (
                "it is required, and its pattern matches the empty string, which the schema "
                f"therefore allows; make the pattern of {start} need at least one character"
            )
        if kind in _TEXT_LIKE:
            return (
                "`required` only makes the key required in the inputSchema, and an empty "
                f'string fits it; add pattern=".+" to {start}: Chromium copies `pattern` '
                "into the inputSchema, so agents are told a value is needed"
            )
        if kind.startswith("select"):
            return _empty_choice_fix(control)
        if kind == "checkbox":
            return (
                "the schema says a boolean and only true is accepted; say so in its "
                "toolparamdescription, or drop `required` and refuse false in a submit "
                "handler (respondWith an error the agent can read)"
            )
        return (
            f"nothing Chromium carries into the inputSchema says a {kind} needs a value; "
            "say so in its toolparamdescription"
        )
    if flag == "typeMismatch":
        example = (
            r"[A-Za-z0-9._+\-]+@[A-Za-z0-9]{1,63}(\.[A-Za-z0-9]{1,63})+"
            if kind == "email"
            else r"https?://[A-Za-z0-9]+(\.[A-Za-z0-9]+)*(/\S*)?"
        )
        return (
            f"Chromium adds no `format` for type={kind}, so any string fits the schema; add "
            f'a pattern to {start} (e.g. pattern="{example}", which allows only what the '
            "browser accepts): `pattern` is what Chromium carries into the inputSchema"
        )
    if flag == "patternMismatch":
        return _pattern_fix(attrs.get("pattern", ""), value)
    if flag in ("rangeUnderflow", "rangeOverflow"):
        return (
            f"Chromium carries `min`/`max` into the inputSchema only for number and range "
            f"inputs, not for type={kind}; say the range in its toolparamdescription"
        )
    if flag == "stepMismatch":
        return _STEP_FIX
    if flag in ("tooShort", "tooLong"):
        return (
            "Chromium carries no minlength/maxlength into the inputSchema; say the length "
            'with a pattern (e.g. pattern=".{3,20}")'
        )
    if flag == "customError":
        return (
            "the page's own check (setCustomValidity) refused it; say what it checks in the "
            "toolparamdescription, or narrow the schema with `pattern`"
        )
    return "say what the control accepts in its toolparamdescription"


def _pattern_fix(pattern: str, value: Any) -> str:
    """Why a value the form's pattern refused fitted the schema, and the pattern that says so
    to JSON Schema too: anchoring is the fix only when the ``u`` flag JSON Schema compiles the
    anchored pattern with refuses the value as HTML's ``v`` does."""
    anchored = HTML.source(pattern)
    if pattern_flags(anchored) == "u" and not _anchored_accepts(anchored, value):
        return (
            "the inputSchema carries the pattern as written, which JSON Schema matches "
            "anywhere in the value and HTML against the whole value (with the v flag); "
            f'write it anchored, pattern="{anchored}", so both read it alike'
        )
    how = (
        "which reads it otherwise: even anchored, it accepts this value"
        if pattern_flags(anchored) == "u"
        else "under which it is no pattern at all (JSON Schema validators then read it "
        "without flags, or skip it)"
    )
    return (
        f"HTML compiles the pattern with the v flag and JSON Schema with the u flag, {how}. "
        "Set operations (&&, --), nested classes, \\q{…} and \\p{…} of strings mean "
        "something else, or nothing, without v; write a pattern both flags read alike "
        '(escape & and - in classes, or list the characters), anchored: pattern="^(?:…)$"'
    )


def _anchored_accepts(anchored: str, value: Any) -> bool:
    """Whether JSON Schema's reading (``u``) of the anchored pattern accepts ``value``."""
    if not isinstance(value, str):
        return False
    try:
        return search(anchored, value) is True
    except PatternTimeout:
        return False


def accepted_schema(schema: dict[str, Any], controls: list[Control]) -> dict[str, Any]:
    """``schema`` with what ``controls`` check added where JSON Schema can say it: the
    inputs the form's validation accepts, to draw the other properties' inputs from (a
    control whose form Chromium writes in ``format`` gets it as a ``pattern``, of values the
    control holds). What it cannot say (a date's bounds, a step off its base) may still be
    refused."""
    narrowed = copy.deepcopy(schema)
    properties = narrowed.get("properties")
    if not isinstance(properties, dict):
        return narrowed
    for control in controls:
        member = properties.get(control.name)
        if not isinstance(member, dict):
            continue
        attrs, kind = control.attributes, control.kind
        required = "required" in attrs
        if member.get("type") == "string" and (kind in _TEXT_LIKE or kind == "textarea"):
            if required:
                member["minLength"] = max(1, int(member.get("minLength", 0)))
            if "pattern" not in member and "multiple" not in attrs:
                if kind == "email":
                    member["pattern"] = r"^[a-z0-9._+\-]{1,20}@[a-z0-9]{1,20}(\.[a-z]{2,5}){1,2}$"
                elif kind == "url":
                    member["pattern"] = r"^https://[a-z0-9]{1,20}\.example(/[a-z0-9]{0,20})?$"
                elif kind != "textarea":  # one line: the harness refuses line breaks
                    member["pattern"] = r"^[^\r\n]*$"
        elif kind == "range" and member.get("type") == "number" and "multipleOf" not in member:
            allowed = _range_values(attrs)
            if allowed is not None:
                member["enum"] = allowed
        elif kind in _FORMAT_IS_A_PATTERN and member.get("type") == "string":
            if "pattern" not in member:
                member["pattern"] = _held(kind, member.get("format"))
        elif kind == "checkbox" and required and member.get("type") == "boolean":
            member["const"] = True
        elif kind == "select-one" and required and control.first_option == "":
            _without_empty(member)
        elif kind == "select-multiple" and required and member.get("type") == "array":
            member["minItems"] = max(1, int(member.get("minItems", 0)))
    return narrowed


def _range_values(attrs: dict[str, str]) -> list[int | float] | None:
    """The values a range keeps (base + n × step within [min, max]), when there are at
    most 100 of them; None otherwise, or without a step."""

    def number(name: str) -> Fraction | None:
        try:
            return Fraction(attrs[name].strip())
        except (KeyError, ValueError, ZeroDivisionError):
            return None

    low, high = number("min"), number("max")
    low = Fraction(0) if low is None else low
    high = max(low, Fraction(100) if high is None else high)
    if attrs.get("step", "").strip().lower() == "any":
        return None
    step = number("step")
    step = Fraction(1) if step is None or step <= 0 else step
    base = number("min")
    base = number("value") if base is None else base
    base = Fraction(0) if base is None else base
    first = -((base - low) // step)  # the first n with base + n × step >= min
    count = (high - base) // step - first + 1
    if count < 1 or count > 100:
        return None
    values = (base + (first + i) * step for i in range(int(count)))
    return [int(v) if v.denominator == 1 else float(v) for v in values]


_YEAR_MONTH = "[1-9][0-9]{3}-(0[1-9]|1[0-2])"  # a year HTML reads (0000 is none), a month
_MINUTES = "([01][0-9]|2[0-3]):[0-5][0-9]"


def _held(kind: str, form: Any) -> str:
    """A pattern of the values a ``kind`` input holds, within its ``format`` (Chromium's regular
    expression, which for a time depends on the step): a day every month has, a week every
    year has, a color in hex digits."""
    time = (
        form.split("T", 1)[-1].removeprefix("^")
        if isinstance(form, str) and form.startswith("^") and form.endswith("$")
        else f"{_MINUTES}$"
    )
    return {
        "time": f"^{time}",
        "datetime-local": f"^{_YEAR_MONTH}-(0[1-9]|1[0-9]|2[0-8])T{time}",
        "month": f"^{_YEAR_MONTH}$",
        "week": "^[1-9][0-9]{3}-W(0[1-9]|[1-4][0-9]|5[0-2])$",
        "color": "^#[0-9a-f]{6}$",
    }[kind]


def _without_empty(member: dict[str, Any]) -> None:
    """A select's schema without its empty placeholder choice."""
    if isinstance(member.get("enum"), list):
        member["enum"] = [v for v in member["enum"] if v != ""]
    if isinstance(member.get("anyOf"), list):
        member["anyOf"] = [
            c for c in member["anyOf"] if not (isinstance(c, dict) and c.get("const") == "")
        ]
