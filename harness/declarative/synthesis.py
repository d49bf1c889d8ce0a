"""Seed 002's declarative dialect: ``tool-name`` elements become tools.

The page's JS (``injected_js/declarative_seed.js``) reports a plain description of each
``<form tool-name>``, ``<a tool-name>`` and ``<button tool-name>`` (a
:class:`Declaration`). This module is the rest, as pure functions testable without a
browser:

- :func:`synthesize` — the tool (name, title, description, MCP annotations) and its
  ``inputSchema``, by the rules of seed 002 §2–§3, plus the :class:`Plan` that says how
  arguments are submitted;
- :func:`encode` — arguments → the ``(name, value)`` pairs the submission carries (§4),
  completed with the form's current values for what the agent left out (§8.1's "resolved
  values from agent/defaults/DOM");
- :func:`extra_problems` — the constraints HTML has and JSON Schema cannot check
  (date/time ``min``/``max``, base64 file contents), checked before anything is sent;
- :func:`elicit_fields` / :func:`elicitation_schema` / :func:`merge_answer` — the
  ``tool-elicit`` fields (§8.1.1) as a flat elicitation form and back.

The invocation (fetch-first, ordering, navigation) is in :mod:`harness.declarative.invocation`.

What goes on the wire is what a person's submit of the same form would send (§0 "If a
human can submit it, an agent can submit it"): each control's own HTML name (a control
``street`` inside ``<fieldset name="address">`` is the schema's ``address.street`` and the
wire's ``street``: a fieldset's name is never part of a control's name); values in HTML's
syntax (a ``datetime-local`` is ``2025-01-02T10:00``, its RFC 3339 zone dropped: the control
is local); read-only controls with their own value (they are no parameters: a person cannot
change them); the default submit button's ``name=value``; every row of an array of objects
(the rows the agent left out as the form has them); files with their name and type. Arrays
are repeated names, in the agent's order.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.schemas.patterns import HTML, compile_pattern

SEED_SURFACE = "tool-name"
"""The :attr:`~harness.models.Tool.surface` of a seed-dialect tool."""

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_.-]{1,64}$")
"""Seed 002 §2.1: a tool name."""


def empty_schema() -> dict[str, Any]:
    """The input schema of a tool without parameters (a link, a button)."""
    return {"type": "object", "properties": {}, "additionalProperties": False}


# Seed 002 §3: input types and the JSON Schema string formats they map to.
_FORMATS = {
    "email": "email",
    "url": "uri",
    "date": "date",
    "datetime-local": "date-time",
    "time": "time",
}
# HTML: which attributes apply to which input types.
_TEXT_LIKE = {"text", "search", "url", "tel", "email", "password"}
_NUMERIC = {"number", "range"}
_DATE_LIKE = {"date", "time", "datetime-local"}
_NOT_SUBMITTED = {"submit", "reset", "button", "image"}
# Controls whose value cannot be left empty by a person: `required` does not apply (HTML).
_NO_REQUIRED = {"hidden", "range", "color"}
# Where HTML's `readonly` applies: such a control is sent with its own value, never the agent's.
_READONLY_TYPES = {*_TEXT_LIKE, "date", "month", "week", "time", "datetime-local", "number"}
_PARAM_TYPES = {"string", "number", "integer", "boolean"}


# -- what the page reports ---------------------------------------------------------------


class _Page(BaseModel):
    """Page-reported data: bounded, and unknown keys ignored."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="ignore")


class SeedOption(_Page):
    """One ``<option>`` of a ``<select>``."""

    value: str
    label: str = ""
    disabled: bool = False
    default_selected: bool = Field(default=False, alias="defaultSelected")
    in_group: bool = Field(default=False, alias="inGroup")
    selected: bool | None = None  # only in a read with current values


class SeedFieldset(_Page):
    """A named ``<fieldset>`` of the form."""

    name: str
    legend: str = ""
    attributes: dict[str, str] = Field(default_factory=dict)


class SeedControl(_Page):
    """One listed control of a form (in tree order), as the page reported it."""

    tag: str
    type: str = ""
    name: str | None = None
    disabled: bool = False
    attributes: dict[str, str] = Field(default_factory=dict)
    fieldsets: list[int] = Field(default_factory=list, max_length=64)
    labels: str = ""
    options: list[SeedOption] = Field(default_factory=list, max_length=1024)
    value: str | None = None  # current value, only in a read with current values
    checked: bool | None = None

    def attr(self, name: str) -> str | None:
        """The raw value of an attribute, or None when it is absent."""
        return self.attributes.get(name)

    def has(self, name: str) -> bool:
        """Whether a (boolean) attribute is present."""
        return name in self.attributes


class SeedForm(_Page):
    """A form: where it submits and its controls."""

    action: str | None = None
    method: str | None = None
    enctype: str | None = None
    controls: list[SeedControl] = Field(default_factory=list, max_length=512)
    fieldsets: list[SeedFieldset] = Field(default_factory=list, max_length=512)
    default_button: SeedControl | None = Field(default=None, alias="defaultButton")
    """Its default button (the first submit button, an image button included: the page's
    form.elements leaves those out), as the page found it."""


class SeedButton(_Page):
    """What a ``<button tool-name>`` adds to its form owner's submission."""

    type: str = "submit"
    name: str | None = None
    value: str | None = None
    formaction: str | None = None
    formmethod: str | None = None
    formenctype: str | None = None


class Declaration(_Page):
    """One ``tool-name`` element, as ``declarative_seed.js`` describes it."""

    id: int
    kind: Literal["form", "a", "button"]
    index: int = 0
    html_id: str | None = Field(default=None, alias="htmlId")
    attributes: dict[str, str] = Field(default_factory=dict)
    text: str = ""
    url: str = ""
    href: str | None = None
    form: SeedForm | None = None
    button: SeedButton | None = None

    @property
    def name(self) -> str:
        """The ``tool-name`` attribute."""
        return self.attributes.get("tool-name", "")

    def locator(self) -> str:
        """How a person finds the element: ``<form id="add">``, or its place among them."""
        if self.html_id:
            return f'<{self.kind} id="{self.html_id}">'
        return f"<{self.kind}> (tool-name element #{self.index + 1} of the page)"


def parse_declarations(raw: Any) -> tuple[list[Declaration], list[str]]:
    """The well-formed declarations in a page report, and why the others were ignored."""
    declarations: list[Declaration] = []
    problems: list[str] = []
    if not isinstance(raw, list):
        return declarations, problems
    for item in raw[:256]:
        try:
            declarations.append(Declaration.model_validate(item))
        except ValidationError as exc:
            problems.append(f"an unreadable tool-name element ({exc.error_count()} problems)")
    return declarations, problems


# -- the plan: the parameters, their schemas, and how they are submitted ----------------


@dataclass
class Leaf:
    """A parameter backed by controls: one control, a repeated set, or a group."""

    key: str
    wire: str  # the name it is submitted under
    shape: Literal["value", "boolean", "choice", "list", "checkboxes", "options", "files", "fixed"]
    controls: list[SeedControl]
    schema: dict[str, Any]
    required: bool
    elicit: bool = False
    file: bool = False

    @property
    def many(self) -> bool:
        """Whether the parameter is an array."""
        return self.shape in ("list", "checkboxes", "options", "files")


@dataclass
class Group:
    """An object parameter (fieldset or dot-notation), or an array of such rows."""

    key: str
    wire: str
    children: list[Leaf | Group] = field(default_factory=list)
    rows: int | None = None  # an array of objects: how many rows the form has
    row_schemas: list[dict[str, Any]] = field(default_factory=list)  # each row's, as HTML says
    title: str | None = None
    description: str | None = None

    @property
    def required(self) -> bool:
        """Whether any field below must be given (for rows: in any row)."""
        if self.row_schemas:
            return any(row.get("required") for row in self.row_schemas)
        return any(child.required for child in self.children)


Node = Leaf | Group

Method = Literal["GET", "POST"]
Encoding = Literal["urlencoded", "multipart"]


@dataclass
class Plan:
    """How a declarative tool is submitted (seed 002 §4) and what its parameters are."""

    kind: Literal["form", "a", "button"]
    url: str  # the action, href or formaction (absolute)
    method: Method
    encoding: Encoding
    root: Group  # the parameters (empty for a link or a button)
    submit_form: bool = False  # a button: submit its form owner's current values
    submitter: tuple[str, str] | None = None  # a button's own name=value
    # The default button is an image button: its name ("" without one). A person's Enter
    # sends the coordinates it was "clicked" at, (0, 0): NAME.x=0&NAME.y=0 (or x=0&y=0).
    image_submitter: str | None = None
    document_url: str = ""


class SeedTool(BaseModel):
    """A synthesized tool: what the catalog offers, and the plan behind it."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    declaration: Declaration
    name: str
    title: str | None
    description: str
    input_schema: dict[str, Any]
    annotations: dict[str, bool]
    plan: Plan
    warnings: list[str] = Field(default_factory=list)


class NotATool(ValueError):
    """The element carries ``tool-name`` but cannot be a tool (the message says why)."""


# -- attribute parsing (HTML's rules, simplified where noted) ----------------------------

_FLOAT = re.compile(r"^[ \t\n\f\r]*(-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)")
_NON_NEGATIVE = re.compile(r"^[ \t\n\f\r]*\+?(\d+)")


def parse_float(text: str | None) -> float | None:
    """HTML's "rules for parsing floating-point number values" (None: no valid number)."""
    if text is None:
        return None
    match = _FLOAT.match(text)
    if match is None:
        return None
    value = float(match.group(1))
    return value if math.isfinite(value) else None


def parse_non_negative(text: str | None) -> int | None:
    """HTML's "rules for parsing non-negative integers" (None: not one)."""
    if text is None:
        return None
    match = _NON_NEGATIVE.match(text)
    return int(match.group(1)) if match else None


def flag(value: str | None, default: bool) -> bool:
    """A ``tool-*`` boolean attribute: absent → ``default``; ``"false"`` → False; else True."""
    if value is None:
        return default
    return value.strip().lower() != "false"


def _number(value: float) -> int | float:
    return int(value) if value == int(value) and abs(value) < 2**53 else value


def _exact(value: float) -> Fraction:
    """A float as the decimal a person wrote (0.1 is one tenth, not 0.1000000000000000055…)."""
    return Fraction(repr(value))


# -- one control's schema ---------------------------------------------------------------


def _texts(control: SeedControl, schema: dict[str, Any], *, pattern: bool) -> None:
    low = parse_non_negative(control.attr("minlength"))
    high = parse_non_negative(control.attr("maxlength"))
    if low is not None and low > 0:
        schema["minLength"] = low
    if high is not None:
        schema["maxLength"] = high
    raw = control.attr("pattern")
    if pattern and raw is not None:
        # HTML ignores a pattern it cannot compile (with the `v` flag); so does the schema.
        if compile_pattern(raw, HTML) is None:
            return
        schema["pattern"] = HTML.source(raw)  # HTML anchors `pattern` at both ends


def _numeric(control: SeedControl, schema: dict[str, Any]) -> None:
    kind = control.type
    low = parse_float(control.attr("min"))
    high = parse_float(control.attr("max"))
    if kind == "range":  # HTML's defaults for a range: 0..100, and max never below min
        low = 0.0 if low is None else low
        high = 100.0 if high is None else high
        high = max(high, low)
    raw_step = control.attr("step")
    explicit = parse_float(raw_step)
    any_step = raw_step is not None and raw_step.strip().lower() == "any"
    step = explicit if explicit is not None and explicit > 0 else None
    effective = None if any_step else (step if step is not None else 1.0)
    base = low if low is not None else parse_float(control.attr("value"))
    base = 0.0 if base is None else base
    integral = (
        effective is not None
        and _exact(effective).denominator == 1
        and _exact(base).denominator == 1
    )
    schema["type"] = "integer" if integral else "number"
    if low is not None:
        schema["minimum"] = _number(low)
    if high is not None:
        schema["maximum"] = _number(high)
    # multipleOf says "a multiple of step from 0": only right when the step base is one.
    if step is not None and step != 1 and (_exact(base) / _exact(step)).denominator == 1:
        schema["multipleOf"] = _number(step)


def control_schema(control: SeedControl) -> dict[str, Any]:
    """The JSON Schema of one control's value, by seed 002 §3 (constraints included)."""
    barred = control.has("readonly") or control.type == "hidden"  # HTML: no validation
    if control.tag == "textarea":
        schema: dict[str, Any] = {"type": "string"}
        if not barred:
            _texts(control, schema, pattern=False)
        return schema
    if control.tag == "select":
        return {"type": "string", "enum": _option_values(control)}
    kind = control.type
    if kind == "checkbox":
        return {"type": "boolean"}
    if kind == "file":
        return file_schema()
    if kind in _NUMERIC:
        schema = {}
        _numeric(control, schema)
        if barred:
            return {"type": schema["type"]}
        return schema
    schema = {"type": "string"}
    if barred:
        return schema
    if kind in _FORMATS and not (kind == "email" and control.has("multiple")):
        schema["format"] = _FORMATS[kind]
    if kind in _TEXT_LIKE:
        _texts(control, schema, pattern=True)
    if kind in _DATE_LIKE:
        # JSON Schema's minimum/maximum are numeric; for dates and times the bounds are
        # ajv-formats' formatMinimum/formatMaximum, which the harness checks itself, written
        # in the format's own syntax (RFC 3339 for date-time and time).
        for attr, key in (("min", "formatMinimum"), ("max", "formatMaximum")):
            bound = control.attr(attr)
            if bound:
                schema[key] = rfc3339_bound(kind, bound)
    return schema


def rfc3339_bound(kind: str, bound: str) -> str:
    """An HTML ``min``/``max`` of a date, time or datetime-local in its format's syntax."""
    if kind == "time" and re.fullmatch(r"\d{2}:\d{2}(:\d{2}(\.\d+)?)?", bound):
        return (bound if len(bound) > 5 else bound + ":00") + "Z"
    if kind == "datetime-local":
        match = re.fullmatch(r"(\d{4,}-\d{2}-\d{2})[T ](\d{2}:\d{2}(:\d{2}(\.\d+)?)?)", bound)
        if match:
            clock = match.group(2)
            return f"{match.group(1)}T{clock if len(clock) > 5 else clock + ':00'}Z"
    return bound


def html_value(kind: str, text: str) -> str:
    """An RFC 3339 ``time`` or ``date-time`` argument in HTML's value syntax: a local clock
    (``10:30``, ``2025-01-02T10:30``), without the zone the format demands."""
    if kind == "time":
        match = re.fullmatch(r"(\d{2}:\d{2})(:\d{2})?(\.\d+)?(?:[zZ]|[+-]\d{2}:\d{2})?", text)
        if match:
            return _clock_text(match.group(1), match.group(2), match.group(3))
    if kind == "datetime-local":
        match = re.fullmatch(
            r"(\d{4,}-\d{2}-\d{2})[Tt ](\d{2}:\d{2})(:\d{2})?(\.\d+)?(?:[zZ]|[+-]\d{2}:\d{2})?",
            text,
        )
        if match:
            return f"{match.group(1)}T{_clock_text(match.group(2), match.group(3), match.group(4))}"
    return text


def _clock_text(minutes: str, seconds: str | None, fraction: str | None) -> str:
    if fraction and fraction.rstrip("0") != ".":
        return f"{minutes}{seconds or ':00'}{fraction[:4]}"
    if seconds and seconds != ":00":
        return minutes + seconds
    return minutes


def file_schema() -> dict[str, Any]:
    """A file: its bytes in base64 (or a ``data:`` URL, which carries its type), or an object
    that carries its name and type as well — what a person's file part has."""
    return {
        "anyOf": [
            {"type": "string", "contentEncoding": "base64"},
            {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "type": {"type": "string"},
                    "content": {"type": "string", "contentEncoding": "base64"},
                },
                "required": ["content"],
                "additionalProperties": False,
            },
        ]
    }


def _option_values(control: SeedControl) -> list[str]:
    values: list[str] = []
    options = control.options
    for index, option in enumerate(options):
        if option.disabled or option.value in values:
            continue
        if index == 0 and _placeholder(control, option):
            continue  # HTML's "placeholder label option" of a required select
        values.append(option.value)
    return values


def _placeholder(control: SeedControl, option: SeedOption) -> bool:
    size = parse_non_negative(control.attr("size"))
    return (
        control.has("required")
        and not control.has("multiple")
        and (size is None or size <= 1)
        and option.value == ""
        and not option.in_group
    )


def _override_type(schema: dict[str, Any], wanted: str, control: SeedControl) -> list[str]:
    """Seed 002 §2.2 ``tool-param-type``: only to disambiguate (e.g. integer for number)."""
    if wanted not in _PARAM_TYPES:
        return [f"tool-param-type={wanted!r} on {control.name!r} is not one of {_PARAM_TYPES}"]
    if wanted == "boolean" and control.type != "checkbox":
        return [f"tool-param-type=boolean on {control.name!r} needs a checkbox; ignored"]
    if "enum" in schema:
        converted = [_convert(v, wanted) for v in schema["enum"]]
        if any(v is None for v in converted):
            return [f"tool-param-type={wanted!r} on {control.name!r} does not fit its options"]
        schema["enum"] = converted
    numeric = wanted in ("number", "integer")
    drop: tuple[str, ...] = (
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "formatMinimum",
        "formatMaximum",
    )
    if not numeric:
        drop = ("minimum", "maximum", "multipleOf")
    for key in drop:
        schema.pop(key, None)
    schema["type"] = wanted
    return []


def _convert(value: str, wanted: str) -> Any:
    if wanted == "string":
        return value
    number = parse_float(value)
    if number is None or (wanted == "integer" and number != int(number)):
        return None
    return _number(number) if wanted == "integer" else number


# -- building the parameter tree -------------------------------------------------------


def _is_parameter(control: SeedControl) -> bool:
    if not control.name or control.disabled:
        return False  # HTML submits neither unnamed nor disabled controls
    if control.tag in ("input", "select", "textarea"):
        return not (control.tag == "input" and control.type in _NOT_SUBMITTED)
    return False


def _path(control: SeedControl, form: SeedForm) -> tuple[str, ...]:
    scope = [form.fieldsets[i].name for i in control.fieldsets if 0 <= i < len(form.fieldsets)]
    name = control.name or ""
    parts = name.split(".")
    segments = parts if all(parts) else [name]  # "a..b" or ".a" stays one literal name
    return (*scope, *segments)


def _interactive(control: SeedControl) -> bool:
    return not (control.has("readonly") or control.type == "hidden" or control.disabled)


def _describe(schema: dict[str, Any], controls: list[SeedControl]) -> None:
    """Seed 002 §2.2: ``tool-param-title``/``-description``; the label as description."""
    title = next((c.attr("tool-param-title") for c in controls if c.has("tool-param-title")), None)
    text = next(
        (c.attr("tool-param-description") for c in controls if c.has("tool-param-description")),
        None,
    )
    if text is None and len(controls) == 1 and controls[0].labels:
        text = controls[0].labels
    if title:
        schema["title"] = title
    if text:
        schema["description"] = text


def _fixed(control: SeedControl) -> bool:
    """A read-only control: sent with its own value, no parameter (a person cannot edit it)."""
    if not control.has("readonly"):
        return False
    return control.tag == "textarea" or (control.tag == "input" and control.type in _READONLY_TYPES)


def _leaf(key: str, wire: str, controls: list[SeedControl], warnings: list[str]) -> Leaf:
    first = controls[0]
    if all(_fixed(c) for c in controls):
        return Leaf(key=key, wire=wire, shape="fixed", controls=controls, schema={}, required=False)
    elicit = any(c.has("tool-elicit") and _interactive(c) for c in controls)
    required = any(
        c.has("required") and not c.has("readonly") and c.type not in _NO_REQUIRED for c in controls
    )
    if first.type == "radio":
        radios = [c for c in controls if c.type == "radio"]
        if len(radios) != len(controls):
            warnings.append(
                f"{wire!r} mixes radio buttons with other controls; only the radios count"
            )
        values = list(dict.fromkeys(c.attr("value") or "on" for c in radios))
        schema: dict[str, Any] = {"type": "string", "enum": values}
        shape: Any = "choice"
        controls = radios
    elif first.type == "checkbox" and len(controls) > 1:
        boxes = [c for c in controls if c.type == "checkbox"]
        values = list(dict.fromkeys(c.attr("value") or "on" for c in boxes))
        schema = {
            "type": "array",
            "items": {"type": "string", "enum": values},
            "uniqueItems": True,
            "maxItems": len(values),
        }
        needed = [c.attr("value") or "on" for c in boxes if c.has("required")]
        if needed:  # HTML: a required checkbox must itself be checked
            schema["allOf"] = [{"contains": {"const": v}} for v in dict.fromkeys(needed)]
        required = bool(needed)
        shape, controls = "checkboxes", boxes
    elif first.tag == "select" and first.has("multiple"):
        schema = {
            "type": "array",
            "items": {"type": "string", "enum": _option_values(first)},
            "uniqueItems": True,
        }
        if required:
            schema["minItems"] = 1
        shape, controls = "options", [first]
    elif first.type == "file" and (first.has("multiple") or len(controls) > 1):
        schema = {"type": "array", "items": control_schema(first)}
        if len(controls) > 1:
            schema["maxItems"] = len(controls)
        if required:
            schema["minItems"] = 1
        shape = "files"
    elif len(controls) > 1:
        schema = {"type": "array", "items": control_schema(first), "maxItems": len(controls)}
        filled = sum(1 for c in controls if c.has("required") and c.type not in _NO_REQUIRED)
        if filled:
            schema["minItems"] = filled
        shape = "list"
    else:
        schema = control_schema(first)
        shape = "boolean" if first.type == "checkbox" else "value"
        if shape == "boolean" and required:
            schema["const"] = True  # HTML: a required checkbox must be checked
    wanted = next((c.attr("tool-param-type") for c in controls if c.has("tool-param-type")), None)
    if wanted is not None:
        target = schema["items"] if schema.get("type") == "array" else schema
        warnings.extend(_override_type(target, wanted.strip().lower(), first))
    _describe(schema, controls)
    return Leaf(
        key=key,
        wire=wire,
        shape=shape,
        controls=controls,
        schema=schema,
        required=required,
        elicit=elicit,
        file=first.type == "file",
    )


@dataclass
class _Trie:
    slots: dict[str, list[SeedControl]] = field(default_factory=dict)  # leaf name → controls
    groups: dict[str, _Trie] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # keys in first-appearance order
    position: int = 0
    fieldset: SeedFieldset | None = None


def _insert(trie: _Trie, path: tuple[str, ...], control: SeedControl) -> str | None:
    """Put a control into the trie; a reason when its name clashes with another's."""
    node = trie
    for depth, segment in enumerate(path[:-1]):
        if segment in node.slots:
            return f"{'.'.join(path)!r} needs {'.'.join(path[: depth + 1])!r} to be an object, but it is a field"
        child = node.groups.get(segment)
        if child is None:
            child = node.groups[segment] = _Trie()
            node.order.append(segment)
        node = child
    last = path[-1]
    if last in node.groups:
        return f"{'.'.join(path)!r} is a field, but also the object of other fields"
    if last not in node.slots:
        node.slots[last] = []
        node.order.append(last)
    node.slots[last].append(control)
    return None


def _counts(trie: _Trie) -> list[int] | None:
    """Per leaf below ``trie``, its number of controls; None when a radio group is below."""
    counts: list[int] = []
    for controls in trie.slots.values():
        if any(c.type == "radio" for c in controls):
            return None
        counts.append(len(controls))
    for child in trie.groups.values():
        below = _counts(child)
        if below is None:
            return None
        counts.extend(below)
    return counts


def _anchored(trie: _Trie) -> bool:
    """Whether a row always sends a field: one that is neither a checkbox nor multi-valued.

    Rows of an array of objects are told apart on the wire by such a field; without one
    (only checkboxes, say), the repeated names are plain arrays instead.
    """
    for controls in trie.slots.values():
        control = controls[0]
        multiple = control.has("multiple") and (control.tag == "select" or control.type == "file")
        if control.type != "checkbox" and not multiple:
            return True
    return any(_anchored(child) for child in trie.groups.values())


def _row(trie: _Trie, index: int) -> _Trie:
    """Row ``index`` of an array-of-objects trie: the ``index``-th control of each leaf."""
    row = _Trie(order=list(trie.order), fieldset=trie.fieldset)
    row.slots = {k: [v[index]] for k, v in trie.slots.items()}
    row.groups = {k: _row(v, index) for k, v in trie.groups.items()}
    return row


def _build(trie: _Trie, key: str, wire: str, warnings: list[str]) -> Group:
    group = Group(key=key, wire=wire)
    if trie.fieldset is not None:
        group.title = trie.fieldset.attributes.get("tool-param-title") or None
        group.description = (
            trie.fieldset.attributes.get("tool-param-description") or trie.fieldset.legend or None
        )
    for name in trie.order:
        child_wire = f"{wire}.{name}" if wire else name
        if name in trie.slots:
            controls = trie.slots[name]
            # On the wire, a control's own HTML name (a fieldset's name is no part of it).
            own = controls[0].name or child_wire
            group.children.append(_leaf(name, own, controls, warnings))
            continue
        sub = trie.groups[name]
        counts = _counts(sub)
        if counts and min(counts) == max(counts) >= 2 and _anchored(sub):
            # Every field below repeats equally often: an array of objects, one per row.
            rows = counts[0]
            built = [
                _build(_row(sub, i), name, child_wire, warnings if i == 0 else [])
                for i in range(rows)
            ]
            template = built[0]
            per_row = [group_schema(b) for b in built]  # each row as HTML has it
            template.rows = rows
            template.children = [
                _merge_rows([b.children[i] for b in built]) for i in range(len(template.children))
            ]
            # The rows' fields (from the merged row), each row with what HTML requires of it.
            shape = group_schema(template, in_row=True)
            template.row_schemas = [_with_required(shape, row) for row in per_row]
            group.children.append(template)
        else:
            group.children.append(_build(sub, name, child_wire, warnings))
    return group


def _with_required(shape: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """``shape`` with ``row``'s fields (a field read-only in that row is none of its
    parameters) and what ``row`` requires of them, nested objects too."""
    merged = {k: v for k, v in shape.items() if k != "required"}
    own = row.get("properties", {})
    properties = {k: v for k, v in shape.get("properties", {}).items() if k in own}
    for key, sub in properties.items():
        inner = row.get("properties", {}).get(key)
        if sub.get("type") == "object" and isinstance(inner, dict):
            properties[key] = _with_required(sub, inner)
    merged["properties"] = properties
    required = [k for k in row.get("required", []) if k in properties]
    if required:
        merged = {**merged, "required": required}
        # `required` goes before additionalProperties, as everywhere else.
        merged = {k: merged[k] for k in ("type", "properties", "required") if k in merged} | {
            k: v for k, v in merged.items() if k not in ("type", "properties", "required")
        }
    return merged


def _merge_rows(nodes: list[Node]) -> Node:
    # A field read-only in some rows only is a parameter (of the rows that can change it).
    first = next((n for n in nodes if not (isinstance(n, Leaf) and n.shape == "fixed")), nodes[0])
    if isinstance(first, Leaf):
        controls = [c for n in nodes if isinstance(n, Leaf) for c in n.controls]
        return Leaf(
            key=first.key,
            wire=first.wire,
            shape=first.shape,
            controls=controls,
            schema=first.schema,
            required=first.required,
            elicit=any(isinstance(n, Leaf) and n.elicit for n in nodes),
            file=first.file,
        )
    children = [
        _merge_rows([n.children[i] for n in nodes if isinstance(n, Group)])
        for i in range(len(first.children))
    ]
    return Group(
        key=first.key,
        wire=first.wire,
        children=children,
        title=first.title,
        description=first.description,
    )


def group_schema(group: Group, *, in_row: bool = False) -> dict[str, Any]:
    """The JSON Schema of an object (closed world: ``additionalProperties: false``)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for child in group.children:
        if isinstance(child, Leaf):
            if child.shape == "fixed":
                continue  # read-only: sent as the form has it, never the agent's to set
            properties[child.key] = child.schema
            if child.required:
                required.append(child.key)
        else:
            properties[child.key] = node_schema(child, in_row=in_row)
            if child.required:
                required.append(child.key)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def node_schema(group: Group, *, in_row: bool = False) -> dict[str, Any]:
    """A group's schema: an object, or an array of row objects."""
    if group.rows is None:
        schema = group_schema(group, in_row=in_row)
    else:
        # Each row requires what HTML requires of its controls: one schema for all rows
        # when they agree, else one per row. Rows up to the last with a required field
        # must be given; the others are sent as the form has them.
        rows = group.row_schemas or [group_schema(group, in_row=True)] * group.rows
        if all(row == rows[0] for row in rows):
            schema = {"type": "array", "items": rows[0], "maxItems": group.rows}
        else:
            schema = {"type": "array", "prefixItems": rows, "maxItems": group.rows}
        needed = [i + 1 for i, row in enumerate(rows) if row.get("required")]
        if needed:
            schema["minItems"] = max(needed)
    if group.title:
        schema["title"] = group.title
    if group.description:
        schema["description"] = group.description
    return schema


# The deepest a control's parameter may sit (named fieldsets and dotted names together): far
# beyond any real form, and far inside what the schema's readers (and Python's stack) follow.
MAX_PARAMETER_DEPTH = 32


def parameters(form: SeedForm) -> tuple[Group, list[str]]:
    """The parameter tree of a form's controls, and warnings about controls left out."""
    warnings: list[str] = []
    trie = _Trie()
    for control in form.controls:
        if not _is_parameter(control):
            continue
        path = _path(control, form)
        if len(path) > MAX_PARAMETER_DEPTH:
            warnings.append(
                f"control {control.name!r} left out: it nests {len(path)} levels deep "
                f"(fieldsets and dotted names); at most {MAX_PARAMETER_DEPTH}"
            )
            continue
        problem = _insert(trie, path, control)
        if problem is not None:
            warnings.append(f"control {control.name!r} left out: {problem}")
    _attach_fieldsets(trie, form)
    return _build(trie, "", "", warnings), warnings


def _attach_fieldsets(trie: _Trie, form: SeedForm) -> None:
    """Give each object made by a named fieldset that fieldset's legend and descriptions."""
    for control in form.controls:
        if not _is_parameter(control):
            continue
        node = trie
        for index in control.fieldsets:
            if not 0 <= index < len(form.fieldsets):
                break
            fieldset = form.fieldsets[index]
            found = node.groups.get(fieldset.name)
            if found is None:
                break  # the control was left out (its name clashed)
            node = found
            if node.fieldset is None:
                node.fieldset = fieldset


# -- the tool ----------------------------------------------------------------------------


def default_button(form: SeedForm) -> SeedControl | None:
    """The form's default button (its first submit button in tree order), which a person's
    Enter activates; the page reports it (image buttons are not among the listed controls)."""
    if form.default_button is not None:
        return form.default_button
    for control in form.controls:  # a report without it: the first listed submit button
        if control.type == "submit" and control.tag in ("button", "input"):
            return control
    return None


def default_submitter(form: SeedForm) -> tuple[str, str] | None:
    """The ``name=value`` of the form's default button, which a person's submit sends
    (Enter, or a click on it); None when it has no name, or is an image button (see
    :func:`default_image_submitter`)."""
    control = default_button(form)
    if control is None or control.disabled or not control.name or control.type == "image":
        return None
    value = control.attr("value")
    if value is None:
        value = "" if control.tag == "button" else "Submit"  # Chromium's label of a submit input
    return control.name, value


def default_image_submitter(form: SeedForm) -> str | None:
    """The name of the form's default button when it is an image button (``""`` when it has
    none), whose coordinates a person's Enter sends; None otherwise."""
    control = default_button(form)
    if control is None or control.disabled or control.type != "image":
        return None
    return control.name or ""


def _method(raw: str | None) -> str:
    value = (raw or "").strip().lower()
    return value if value in ("get", "post", "dialog") else "get"


def _encoding(raw: str | None) -> Encoding:
    return "multipart" if (raw or "").strip().lower() == "multipart/form-data" else "urlencoded"


def _web_url(url: str | None, what: str) -> str:
    if not url or not url.lower().startswith(("http://", "https://")):
        raise NotATool(f"its {what} is not an http(s) URL ({url!r})")
    return url


def synthesize(declaration: Declaration) -> SeedTool:
    """The tool an element declares (seed 002 §1–§3); :class:`NotATool` says why not."""
    name = declaration.name
    if not NAME_PATTERN.match(name):
        raise NotATool(f"tool-name {name!r} does not match {NAME_PATTERN.pattern}")
    attrs = declaration.attributes
    warnings: list[str] = []
    root = Group(key="", wire="")
    submit_form = False
    submitter: tuple[str, str] | None = None
    image_submitter: str | None = None
    if declaration.kind == "form":
        form = declaration.form or SeedForm()
        method = _method(form.method)
        url = _web_url(form.action, "action")
        encoding = _encoding(form.enctype)
        root, warnings = parameters(form)
        schema = group_schema(root)
        submitter = default_submitter(form)
        image_submitter = default_image_submitter(form)
    elif declaration.kind == "a":
        url = _web_url(declaration.href, "href" if declaration.href else "href (missing)")
        method, encoding, schema = "get", "urlencoded", empty_schema()
    else:
        button = declaration.button or SeedButton()
        if button.type != "submit":
            raise NotATool(
                f'a <button type="{button.type}"> submits nothing; only a submit button can be a tool'
            )
        owner = declaration.form
        if owner is None and button.formaction is None:
            raise NotATool("the button has neither a form nor a formaction")
        action = (
            button.formaction
            if button.formaction is not None
            else (owner.action if owner else None)
        )
        url = _web_url(action, "formaction" if button.formaction is not None else "form's action")
        method = _method(
            button.formmethod
            if button.formmethod is not None
            else (owner.method if owner else None)
        )
        encoding = _encoding(
            button.formenctype
            if button.formenctype is not None
            else (owner.enctype if owner else None)
        )
        schema = empty_schema()
        if owner is not None:
            root, _ = parameters(owner)
            submit_form = True
        if button.name:
            submitter = (button.name, button.value or "")
    if method == "dialog":
        raise NotATool('method="dialog" closes a dialog; it submits nothing')
    title = attrs.get("tool-title") or None
    description = attrs.get("tool-description") or declaration.text or title or ""
    annotations = {
        "readOnlyHint": flag(attrs.get("tool-readonly"), False),
        "destructiveHint": flag(attrs.get("tool-destructive"), False),
        "idempotentHint": flag(attrs.get("tool-idempotent"), False),
        "openWorldHint": flag(attrs.get("tool-openworld"), True),
    }
    plan = Plan(
        kind=declaration.kind,
        url=url,
        method="POST" if method == "post" else "GET",
        encoding=encoding,
        root=root,
        submit_form=submit_form,
        submitter=submitter,
        image_submitter=image_submitter,
        document_url=declaration.url,
    )
    return SeedTool(
        declaration=declaration,
        name=name,
        title=title,
        description=description,
        input_schema=schema,
        annotations=annotations,
        plan=plan,
        warnings=warnings,
    )


# -- submitting: arguments → (name, value) pairs -----------------------------------------


@dataclass(frozen=True)
class FileValue:
    """A file part: its name, its media type and its bytes."""

    name: str
    data: bytes
    mime: str = "application/octet-stream"


Pair = tuple[str, str | FileValue]


class EncodingError(ValueError):
    """An argument cannot be submitted (not base64, say); nothing is sent."""


def wire_text(value: Any) -> str:
    """How a JSON value is written into a form field."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(_number(value)) if value == int(value) else repr(value)
    return str(value)


_DATA_URL = re.compile(r"^data:([^;,]*)((?:;[^;,]*)*);base64,(.*)$", re.DOTALL)


def _decode_file(value: Any, wire: str) -> FileValue:
    """A file argument: base64, a ``data:`` URL (its type), or ``{name, type, content}``."""
    name, mime = wire, "application/octet-stream"
    if isinstance(value, dict):
        name = str(value.get("name") or name)
        mime = str(value.get("type") or mime)
        value = value.get("content")
    if not isinstance(value, str):
        raise EncodingError(f"{wire}: a file is base64, a data: URL or {{name, type, content}}")
    data_url = _DATA_URL.match(value)
    if data_url is not None:
        mime = data_url.group(1) or mime
        value = data_url.group(3)
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise EncodingError(f"{wire}: not valid base64 ({exc})") from None
    return FileValue(name=name, data=data, mime=mime)


def _dom_pairs(leaf: Leaf, controls: list[SeedControl]) -> list[Pair]:
    """What HTML would submit for these controls as they stand now."""
    pairs: list[Pair] = []
    for control in controls:
        if control.tag == "select":
            pairs += [
                (leaf.wire, o.value) for o in control.options if o.selected and not o.disabled
            ]
        elif control.type in ("checkbox", "radio"):
            if control.checked:
                pairs.append((leaf.wire, control.attr("value") or "on"))
        elif control.type == "file":
            continue  # a person's file cannot be read back; the agent must give it
        elif control.value is not None:
            pairs.append((leaf.wire, control.value))
    return pairs


def _leaf_pairs(leaf: Leaf, value: Any, given: bool, row: int | None) -> list[Pair]:
    controls = leaf.controls if row is None else leaf.controls[row : row + 1]
    if not given or leaf.shape == "fixed" or all(_fixed(c) for c in controls):
        return _dom_pairs(leaf, controls)
    # In a row, the row's own control decides (rows of one name may differ in kind).
    boolean = leaf.shape == "boolean" or (
        row is not None and not leaf.many and controls[0].type == "checkbox"
    )
    if boolean:
        return [(leaf.wire, controls[0].attr("value") or "on")] if value is True else []
    kind = controls[0].type if controls else ""
    if leaf.many:
        items = value if isinstance(value, list) else [value]
        if leaf.file:
            return [(leaf.wire, _decode_file(v, leaf.wire)) for v in items]
        return [(leaf.wire, _text_of(kind, v)) for v in items]
    if leaf.file:
        return [(leaf.wire, _decode_file(value, leaf.wire))]
    return [(leaf.wire, _text_of(kind, value))]


def _text_of(kind: str, value: Any) -> str:
    if kind in ("time", "datetime-local") and isinstance(value, str):
        return html_value(kind, value)  # HTML's local syntax, not RFC 3339
    return wire_text(value)


def _group_pairs(group: Group, value: Any, given: bool, row: int | None) -> list[Pair]:
    values = value if given and isinstance(value, dict) else {}
    pairs: list[Pair] = []
    for child in group.children:
        present = child.key in values
        if isinstance(child, Leaf):
            pairs += _leaf_pairs(child, values.get(child.key), present, row)
        elif child.rows is not None:
            pairs += _rows_pairs(child, values.get(child.key), present)
        else:
            pairs += _group_pairs(child, values.get(child.key), present, row)
    return pairs


def _rows_pairs(group: Group, value: Any, given: bool) -> list[Pair]:
    if not given:  # every row as the form has it
        return [p for i in range(group.rows or 0) for p in _group_pairs(group, {}, False, i)]
    items = value if isinstance(value, list) else []
    # A person's submit sends every row: those the agent left out go as the form has them.
    return [
        p
        for i in range(max(group.rows or 0, len(items)))
        for p in (
            _group_pairs(group, items[i], True, i)
            if i < len(items)
            else _group_pairs(group, {}, False, i)
        )
    ]


def encode(plan: Plan, arguments: dict[str, Any]) -> list[Pair]:
    """The pairs a call submits, in the form's order (seed 002 §4 and §8.1's merging).

    Given arguments win; a parameter the agent left out is sent as the form has it now
    (the controls' current values, which a read with values carries). A button sends its
    form's current values and its own ``name=value``. Raises :class:`EncodingError`.
    """
    if plan.kind == "a":
        return []
    pairs = _group_pairs(
        plan.root, {} if plan.submit_form else arguments, not plan.submit_form, None
    )
    if plan.submitter is not None:
        pairs.append(plan.submitter)
    if plan.image_submitter is not None:
        prefix = f"{plan.image_submitter}." if plan.image_submitter else ""
        pairs += [(f"{prefix}x", "0"), (f"{prefix}y", "0")]
    return pairs


# -- what JSON Schema cannot check --------------------------------------------------------


def _is_file_schema(schema: dict[str, Any]) -> bool:
    return bool(schema.get("anyOf") == file_schema()["anyOf"])


def _walk(schema: dict[str, Any], value: Any, path: str, found: list[tuple[str, str]]) -> None:
    if isinstance(value, dict) and _is_file_schema(schema):
        content = value.get("content")
        if isinstance(content, str):
            _walk(file_schema()["anyOf"][0], content, f"{path}/content", found)
        return
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        for key, sub in schema["properties"].items():
            if key in value and isinstance(sub, dict):
                _walk(sub, value[key], f"{path}/{key}", found)
        return
    if isinstance(value, list) and isinstance(schema.get("prefixItems"), list):
        for index, (item, sub) in enumerate(zip(value, schema["prefixItems"], strict=False)):
            _walk(sub, item, f"{path}/{index}", found)
        return
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            _walk(schema["items"], item, f"{path}/{index}", found)
        return
    if not isinstance(value, str):
        return
    low, high = schema.get("formatMinimum"), schema.get("formatMaximum")
    fmt = schema.get("format")
    if isinstance(low, str) and _compare(value, low, fmt) < 0:
        found.append((path, f"{value!r} is before the form's min {low!r}"))
    if isinstance(high, str) and _compare(value, high, fmt) > 0:
        found.append((path, f"{value!r} is after the form's max {high!r}"))
    if schema.get("contentEncoding") == "base64" or _is_file_schema(schema):
        data_url = _DATA_URL.match(value)
        try:
            base64.b64decode(data_url.group(3) if data_url else value, validate=True)
        except (binascii.Error, ValueError):
            found.append((path, "is not valid base64 (nor a base64 data: URL)"))


def _clock(text: str, fmt: Any) -> str:
    """A date, time or date-time cut to what HTML's local min/max can be compared with."""
    if fmt == "date-time":  # RFC 3339 carries a zone, HTML's bound none: compare the clock
        return text[:10] + "T" + _clock(text[11:], "time")
    if fmt == "time":  # "HH:MM" and "HH:MM:SS[.fff][zone]" alike, to the second
        return text[:8] if len(text) >= 8 and text[5:6] == ":" else text[:5] + ":00"
    return text


def _compare(value: str, bound: str, fmt: Any) -> int:
    """Order two dates, times or date-times as HTML does (lexically, once aligned)."""
    left, right = _clock(value, fmt), _clock(bound, fmt)
    return (left > right) - (left < right)


def extra_problems(schema: dict[str, Any], arguments: Any) -> list[tuple[str, str]]:
    """``(JSON pointer, reason)`` for each HTML constraint JSON Schema cannot express."""
    found: list[tuple[str, str]] = []
    _walk(schema, arguments, "", found)
    return found


# -- tool-elicit (seed 002 §8.1.1) -------------------------------------------------------


def _leaves(group: Group, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Leaf | Group]]:
    found: list[tuple[tuple[str, ...], Leaf | Group]] = []
    for child in group.children:
        here = (*path, child.key)
        if isinstance(child, Leaf) or child.rows is not None:
            found.append((here, child))
        else:
            found += _leaves(child, here)
    return found


def _rows_elicit(group: Group) -> bool:
    return any(
        (isinstance(c, Leaf) and c.elicit) or (isinstance(c, Group) and _rows_elicit(c))
        for c in group.children
    )


def elicit_fields(plan: Plan) -> list[tuple[tuple[str, ...], Leaf | Group]]:
    """The parameters marked ``tool-elicit`` (on an interactive control), by path.

    A radio group, a select and a repeated set count as one field (§8.1.1 "Scope"); an
    array of objects with an elicited field inside counts as one (a :class:`Group`).
    """
    return [
        (path, node)
        for path, node in _leaves(plan.root)
        if (isinstance(node, Leaf) and node.elicit)
        or (isinstance(node, Group) and _rows_elicit(node))
    ]


def elicitation_schema(plan: Plan) -> tuple[dict[str, Any], list[str]]:
    """The flat form the user answers (dotted names), and the fields it cannot show.

    An array of objects cannot be shown in MCP's flat elicitation form; its dotted name is
    returned in the second list (the caller refuses the call: the user must be asked).
    """
    properties: dict[str, Any] = {}
    required: list[str] = []
    unshowable: list[str] = []
    for path, node in elicit_fields(plan):
        name = ".".join(path)
        if isinstance(node, Group):
            unshowable.append(name)
            continue
        prop = dict(node.schema)
        prop.setdefault("title", node.controls[0].labels or name)
        properties[name] = prop
        if node.required:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema, unshowable


def form_default(leaf: Leaf) -> tuple[bool, Any]:
    """``(present, value)``: what the form itself holds for a field before anyone edits it
    (its ``value``/``checked``/``selected`` attributes), as the field's JSON value."""
    first = leaf.controls[0]
    if leaf.shape == "boolean":
        return True, first.has("checked")
    if leaf.shape == "choice":
        checked = [c.attr("value") or "on" for c in leaf.controls if c.has("checked")]
        return (True, checked[-1]) if checked else (False, None)
    if first.tag == "select":
        chosen = [o.value for o in first.options if o.default_selected and not o.disabled]
        if leaf.shape == "options":
            return True, chosen
        return (True, chosen[0]) if chosen else (False, None)
    if leaf.shape == "checkboxes":
        return True, [c.attr("value") or "on" for c in leaf.controls if c.has("checked")]
    if leaf.file or first.tag == "textarea" or first.attr("value") is None:
        return False, None
    text = first.attr("value") or ""
    if leaf.schema.get("type") in ("number", "integer"):
        number = parse_float(text)
        return (True, _number(number)) if number is not None else (False, None)
    if leaf.many:
        return True, [c.attr("value") or "" for c in leaf.controls]
    return True, text


def value_at(arguments: dict[str, Any], path: tuple[str, ...]) -> tuple[bool, Any]:
    """``(present, value)`` of a nested argument."""
    node: Any = arguments
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False, None
        node = node[key]
    return True, node


def merge_answer(
    arguments: dict[str, Any], plan: Plan, content: dict[str, Any] | None
) -> dict[str, Any]:
    """The arguments with the user's elicited values in place (§8.1 "Merging").

    A field the user left empty is sent empty, as a person's cleared field is (a checkbox
    unchecked, a list with nothing); only a radio group or a select, which a person cannot
    empty, is then sent as the form has it.
    """
    merged: dict[str, Any] = _copy(arguments)
    answers = content or {}
    for path, node in elicit_fields(plan):
        if isinstance(node, Group):
            continue
        name = ".".join(path)
        parent = merged
        for key in path[:-1]:
            child = parent.get(key)
            if not isinstance(child, dict):
                child = parent[key] = {}
            parent = child
        if name in answers:
            parent[path[-1]] = answers[name]
        elif node.shape == "boolean":
            parent[path[-1]] = False
        elif node.many and not node.file:
            parent[path[-1]] = []
        elif node.shape == "value" and not node.file:
            parent[path[-1]] = ""
        else:
            parent.pop(path[-1], None)
    return merged


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
