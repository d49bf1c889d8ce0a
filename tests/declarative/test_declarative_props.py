"""Property tests of seed 002's dialect (hypothesis).

- Random forms (the extractor's description of them) → the synthesized schema is valid
  JSON Schema 2020-12 and closed-world.
- Random arguments valid under that schema → what is submitted decodes to exactly those
  arguments (round trip), and random invalid arguments are refused before anything is sent.
- The same in a real browser: random forms rendered as HTML, read by the injected
  extractor, called through a Session; the server's log proves what left the browser.

Arguments are drawn from the synthesized schema, the way an agent reads it; the decoder
below reads the server's form data back with HTML's conventions (repeated names are
arrays, dotted names are objects, rows of an array of objects in order).
"""

from __future__ import annotations

import asyncio
import base64
import copy
import datetime as dt
import html
import math
import re
import threading
from collections.abc import Coroutine, Iterator
from decimal import Decimal
from typing import Any, TypeVar

import pytest
from aiohttp import BodyPartReader, web
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from harness import Harness, Session
from harness.declarative.invocation import seed_tools_of
from harness.declarative.synthesis import (
    Declaration,
    FileValue,
    Group,
    Leaf,
    NotATool,
    Pair,
    encode,
    extra_problems,
    synthesize,
)
from harness.models import Tool
from harness.stages.validation import validate_arguments
from tests.conftest import listen

T = TypeVar("T")

# -- random forms, as the extractor describes them -----------------------------------------

# A small pool, so names repeat (arrays, radio and checkbox groups, rows of objects) and
# nest (dot-notation and fieldsets sharing paths), and sometimes clash.
NAMES = ["a", "b", "c", "a.x", "a.y", "r.n", "r.q", "r.f", "b.z"]
FIELDSETS = ["a", "g", "r"]
PATTERNS = ["[a-z]+", r"\d{2,4}", "[A-Z][a-z]*", "x|yy|zzz"]
OPTION_VALUES = ["", "low", "mid", "high", "1", "2"]
INPUT_TYPES = [
    "text", "search", "tel", "password", "email", "url", "number", "range", "date",
    "time", "datetime-local", "checkbox", "radio", "file", "hidden", "color", "month", "week",
]  # fmt: skip


@st.composite
def controls(draw: st.DrawFn, fieldsets: int) -> dict[str, Any]:
    tag = draw(st.sampled_from(["input"] * 6 + ["select", "textarea"]))
    kind = draw(st.sampled_from(INPUT_TYPES)) if tag == "input" else ""
    attributes: dict[str, str] = {}
    if draw(st.booleans()) and kind not in ("hidden",):
        attributes["required"] = ""
    if tag == "textarea" or kind in ("text", "search", "tel", "password"):
        if draw(st.booleans()):
            attributes["pattern"] = draw(st.sampled_from(PATTERNS))
        elif draw(st.booleans()):
            low = draw(st.integers(0, 4))
            attributes["minlength"] = str(low)
            attributes["maxlength"] = str(draw(st.integers(low, low + 8)))
    if kind in ("number", "range"):
        if draw(st.booleans()):
            low = draw(st.integers(-20, 20))
            attributes["min"] = str(low)
            attributes["max"] = str(low + draw(st.integers(0, 60)))
        attributes["step"] = draw(
            st.sampled_from(["1", "5", "0.5", "0.25", "0.01", "any", "bogus"])
        )
    if kind in ("date", "datetime-local") and draw(st.booleans()):
        attributes["min"] = "2020-01-01" if kind == "date" else "2020-01-01T00:00"
        attributes["max"] = "2030-12-31" if kind == "date" else "2030-12-31T23:59"
    if kind in ("checkbox", "radio") and draw(st.booleans()):
        attributes["value"] = draw(st.sampled_from(["on", "yes", "x", "y"]))
    if (tag == "select" or kind == "file") and draw(st.booleans()):
        attributes["multiple"] = ""
    if draw(st.integers(0, 9)) == 0:
        attributes["readonly"] = ""
    control: dict[str, Any] = {
        "tag": tag,
        "type": kind,
        "name": draw(st.sampled_from(NAMES)),
        "disabled": draw(st.integers(0, 9)) == 0,
        "attributes": attributes,
        "fieldsets": draw(st.lists(st.integers(0, fieldsets - 1), max_size=2)) if fieldsets else [],
        "labels": "",
    }
    if tag == "select":
        values = draw(st.lists(st.sampled_from(OPTION_VALUES), min_size=1, max_size=4))
        control["options"] = [
            {"value": v, "label": v or "Choose", "disabled": draw(st.integers(0, 5)) == 0}
            for v in values
        ]
    return control


@st.composite
def forms(draw: st.DrawFn) -> dict[str, Any]:
    fieldsets = draw(st.lists(st.sampled_from(FIELDSETS), max_size=3))
    listed = draw(st.lists(controls(len(fieldsets)), max_size=10))
    for control in listed:
        # A fieldset's name is no part of a control's HTML name: controls in different
        # scopes get names of their own, so that a server can tell them apart.
        scope = [fieldsets[i] for i in control["fieldsets"]]
        if scope:
            control["name"] = "_".join([*scope, control["name"]])
    first: dict[str, dict[str, Any]] = {}
    for control in listed:
        # The controls of one name are of one kind (rows, arrays), read-only or not, as in
        # real forms; each may still be required or disabled on its own.
        model = first.setdefault(control["name"], control)
        if model is not control:
            flags = {k: v for k, v in control["attributes"].items() if k == "required"}
            others = {k: v for k, v in model["attributes"].items() if k != "required"}
            control.update(tag=model["tag"], type=model["type"], attributes={**others, **flags})
            if "options" in model:
                control["options"] = model["options"]
            else:
                control.pop("options", None)
    has_file = any(c["type"] == "file" for c in listed)
    return {
        "id": 1,
        "kind": "form",
        "attributes": {"tool-name": "random"},
        "url": "http://127.0.0.1/",
        "form": {
            "action": "http://127.0.0.1/submit",
            "method": "post" if has_file else draw(st.sampled_from(["get", "post"])),
            "enctype": draw(st.sampled_from([None, "multipart/form-data"])),
            "controls": listed,
            "fieldsets": [{"name": name, "legend": "", "attributes": {}} for name in fieldsets],
        },
    }


# -- arguments drawn from a schema ------------------------------------------------------------


class Unsatisfiable(Exception):
    """No value can satisfy this schema (HTML allows such forms: an empty select)."""


def _clock(text: str) -> str:
    text = text.removesuffix("Z")  # a local clock: the bound's RFC 3339 zone means nothing
    return text if len(text) > 16 else text + ":00"


def values_for(schema: dict[str, Any], *, complete: bool) -> st.SearchStrategy[Any]:
    """Values valid under one of the schemas the synthesis writes."""
    if "const" in schema:
        return st.just(schema["const"])
    if "anyOf" in schema:  # a file: base64, or {name, type, content}
        return values_for(schema["anyOf"][0], complete=complete)
    if "enum" in schema:
        if not schema["enum"]:
            raise Unsatisfiable("an empty enum")
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        required = set(schema.get("required", []))
        fields = {k: values_for(v, complete=complete) for k, v in schema["properties"].items()}
        return st.fixed_dictionaries(
            {k: v for k, v in fields.items() if complete or k in required},
            optional={k: v for k, v in fields.items() if not complete and k not in required},
        )
    if kind == "array":
        return _arrays(schema, complete=complete)
    if kind == "boolean":
        return st.booleans()
    if kind in ("integer", "number"):
        return _numbers(schema)
    return _strings(schema)


def _arrays(schema: dict[str, Any], *, complete: bool) -> st.SearchStrategy[list[Any]]:
    # Rows of an array of objects are drawn whole: a field left out of a row is sent as the
    # form has it, which a server cannot tell from the agent's (nothing, in these forms).
    if "prefixItems" in schema:  # rows whose required fields differ: one schema per row
        rows = [values_for(row, complete=True) for row in schema["prefixItems"]]
        low = schema.get("minItems", 0)
        return st.integers(low, len(rows)).flatmap(lambda n: st.tuples(*rows[:n]).map(list))
    items = schema["items"]
    low, high = schema.get("minItems", 0), min(schema.get("maxItems", 3), 3)
    needed = [c["contains"]["const"] for c in schema.get("allOf", [])]
    unique = schema.get("uniqueItems", False)
    if unique and "enum" in items:
        high = min(high, len(items["enum"]))
    if low > high:
        raise Unsatisfiable("more items needed than allowed")
    whole = complete or items.get("type") == "object"
    drawn = st.lists(values_for(items, complete=whole), min_size=low, max_size=high, unique=unique)
    return drawn.map(
        lambda xs: (needed + [x for x in xs if x not in needed])[: max(high, len(needed))]
    )


def _numbers(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    low = schema.get("minimum", -1000)
    high = schema.get("maximum", 1000)
    step = schema.get("multipleOf", 1 if schema["type"] == "integer" else None)
    if step is None:
        return st.floats(low, high, allow_nan=False, allow_infinity=False)
    exact = Decimal(repr(step))
    first, last = math.ceil(Decimal(repr(low)) / exact), math.floor(Decimal(repr(high)) / exact)
    if first > last:
        raise Unsatisfiable("no multiple of the step in range")
    if schema["type"] == "integer":
        return st.integers(first, last).map(lambda k: int(k * exact))
    return st.integers(first, last).map(lambda k: float(k * exact))


def _strings(schema: dict[str, Any]) -> st.SearchStrategy[str]:
    low, high = schema.get("formatMinimum"), schema.get("formatMaximum")
    fmt = schema.get("format")
    if schema.get("contentEncoding") == "base64":
        return st.binary(max_size=24).map(lambda b: base64.b64encode(b).decode())
    if fmt == "email":
        return st.from_regex(r"[a-z]{1,6}@[a-z]{1,6}\.(com|org)", fullmatch=True)
    if fmt == "uri":
        return st.from_regex(r"https://[a-z]{1,8}\.example/[a-z]{0,4}", fullmatch=True)
    if fmt == "date":
        first = dt.date.fromisoformat(low) if low else dt.date(1990, 1, 1)
        last = dt.date.fromisoformat(high) if high else dt.date(2050, 1, 1)
        return st.dates(first, last).map(dt.date.isoformat)
    if fmt == "time":
        return st.times().map(lambda t: t.strftime("%H:%M:%S") + "Z")
    if fmt == "date-time":
        first_dt = dt.datetime.fromisoformat(_clock(low)) if low else dt.datetime(1990, 1, 1)
        last_dt = dt.datetime.fromisoformat(_clock(high)) if high else dt.datetime(2050, 1, 1)
        return st.datetimes(first_dt, last_dt).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%S") + "Z")
    if "pattern" in schema:
        # Patterns are ECMAScript's: `\d` and `\w` are ASCII there (Python's are Unicode).
        return st.from_regex(re.compile(schema["pattern"], re.ASCII), fullmatch=True)
    alphabet = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"))
    return st.text(
        alphabet, min_size=schema.get("minLength", 0), max_size=schema.get("maxLength", 8)
    )


# -- invalid arguments -----------------------------------------------------------------------


def _paths(
    schema: dict[str, Any], value: Any, path: tuple[Any, ...] = ()
) -> Iterator[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Every (path, schema) of a value inside valid arguments."""
    yield path, schema
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(schema["properties"][key], item, (*path, key))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            yield from _paths(schema["items"], item, (*path, index))
    elif isinstance(value, list) and isinstance(schema.get("prefixItems"), list):
        for index, item in enumerate(value):
            yield from _paths(schema["prefixItems"][index], item, (*path, index))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = list(value) if isinstance(value, list) else dict(value)
    copy[path[0]] = _replace(value[path[0]], path[1:], new)
    return copy


def _breakers(schema: dict[str, Any]) -> list[Any]:
    """Values that break ``schema`` (any one of them will do)."""
    kind = schema.get("type")
    wrong = [{"not": "this"}] if kind != "object" else [["not an object"]]
    if "enum" in schema:
        wrong.append("not-an-option")
    if kind == "string" and "maxLength" in schema:
        wrong.append("x" * (schema["maxLength"] + 1))
    if kind in ("integer", "number") and "maximum" in schema:
        wrong.append(schema["maximum"] + 1)
    if kind == "integer":
        wrong.append(0.5)
    if schema.get("format") == "date":
        wrong.append("31/12/2025")
    return wrong


@st.composite
def broken(draw: st.DrawFn, schema: dict[str, Any], valid: dict[str, Any]) -> dict[str, Any]:
    """Valid arguments with one thing wrong: an unknown key, or one bad value."""
    places = list(_paths(schema, valid))
    path, sub = draw(st.sampled_from(places))
    if sub.get("type") == "object" and draw(st.booleans()):
        target = valid
        for key in path:
            target = target[key]
        return (
            _replace(valid, path, {**target, "zz_unknown": 1})
            if path
            else {**valid, "zz_unknown": 1}
        )
    if not path:
        return {**valid, "zz_unknown": 1}
    return _replace(valid, path, draw(st.sampled_from(_breakers(sub))))


def refused(tool: Tool, arguments: Any) -> bool:
    """What the harness checks before sending: the schema, then what it cannot say."""
    return bool(validate_arguments(tool, arguments) or extra_problems(tool.input_schema, arguments))


# -- reading a submission back ------------------------------------------------------------------


def _leaves(group: Group) -> list[Leaf]:
    found: list[Leaf] = []
    for child in group.children:
        found += [child] if isinstance(child, Leaf) else _leaves(child)
    return found


def _convert(leaf: Leaf, text: Any, row: int | None = None) -> Any:
    schema = leaf.schema["items"] if leaf.many else leaf.schema
    if isinstance(text, dict):  # a file part, as the server recorded it
        return text["base64"]
    control = leaf.controls[row if row is not None and row < len(leaf.controls) else 0]
    if control.type in ("time", "datetime-local"):
        # HTML's local syntax on the wire; the drawn arguments are RFC 3339 with seconds, Z.
        return (text if len(text) in (8, 19) else text + ":00") + "Z"
    kind = schema.get("type")
    if kind in ("integer", "number") and text == "":
        # An empty number input is sent as "" (HTML sends every text-like control, empty
        # or not): no value, which no argument could have asked for.
        return None
    if kind == "integer":
        return int(text)
    if kind == "number":
        return float(text)
    return text


def decode(group: Group, pairs: list[tuple[str, Any]], row: int | None = None) -> dict[str, Any]:
    """The arguments a server reads from form data, by HTML's conventions."""
    out: dict[str, Any] = {}
    for child in group.children:
        if isinstance(child, Leaf):
            mine = child.controls[row : row + 1] if row is not None else child.controls
            if child.shape == "fixed" or (mine and all(_read_only(c) for c in mine)):
                continue  # read-only (in this row): the form's own value, never an argument
            values = [v for name, v in pairs if name == child.wire]
            if not values:
                continue
            if child.shape == "boolean":
                out[child.key] = True
            elif child.many:
                out[child.key] = [_convert(child, v, row) for v in values]
            elif (value := _convert(child, values[0], row)) is not None:
                out[child.key] = value
        elif child.rows is not None:
            # Rows a person's submit sends as the form has them (empty, or read-only fields
            # only) say nothing of the agent's; normalize drops such rows too.
            rows = [decode(child, one, i) for i, one in enumerate(_split_rows(child, pairs))]
            rows = [row for row in rows if not _blank(row)]
            if rows:
                out[child.key] = rows
        else:
            inner = decode(child, pairs, row)
            if inner:
                out[child.key] = inner
    return out


# Where HTML's `readonly` applies (elsewhere the attribute means nothing).
READONLY_APPLIES = {
    "text", "search", "tel", "password", "email", "url", "number", "date", "month", "week",
    "time", "datetime-local",
}  # fmt: skip


def _read_only(control: Any) -> bool:
    """A control a person cannot edit: the form's value is sent, never an argument."""
    if not control.has("readonly"):
        return False
    return bool(control.tag == "textarea" or control.type in READONLY_APPLIES)


def _split_rows(group: Group, pairs: list[tuple[str, Any]]) -> list[list[tuple[str, Any]]]:
    """A new row starts where the form's field order starts over."""
    leaves = _leaves(group)
    position = {leaf.wire: index for index, leaf in enumerate(leaves)}
    many = {leaf.wire for leaf in leaves if leaf.many}
    rows: list[list[tuple[str, Any]]] = []
    last = -1
    for name, value in pairs:
        if name not in position:
            continue
        here = position[name]
        if not rows or here < last or (here == last and name not in many):
            rows.append([])
        rows[-1].append((name, value))
        last = here
    return rows


def _blank(row: Any) -> bool:
    """A row with nothing but empty text in it (or nothing at all)."""
    if isinstance(row, dict):
        return all(_blank(v) for v in row.values())
    if isinstance(row, list):
        return all(_blank(v) for v in row)
    return row == ""


def expected(
    group: Group, arguments: Any, own: dict[str, list[list[str]]], row: int | None = None
) -> Any:
    """The arguments as a person's submit carries them: what the agent left out goes as the
    form holds it (``own``: per HTML name, the entries each control of that name sends as it
    stands, in document order), and so do the rows of an array of objects past the agent's.
    A text field sends its text even empty; a range, a colour or a select is never empty,
    so such rows are not blank."""
    if not isinstance(arguments, dict):
        return arguments
    out = dict(arguments)
    for child in group.children:
        if isinstance(child, Leaf):
            if child.key not in out:
                entries = own.get(child.wire, [])
                mine = entries[row : row + 1] if row is not None else entries
                pairs = [(child.wire, v) for sent in mine for v in sent]
                out.update(decode(Group(key="", wire="", children=[child]), pairs, row))
            continue
        if child.rows is not None:
            given = out.get(child.key) or []
            items = [expected(child, item, own, i) for i, item in enumerate(given)]
            for i in range(len(items), child.rows):
                pairs = [
                    (leaf.wire, v)
                    for leaf in _leaves(child)
                    for v in (own.get(leaf.wire, [])[i] if i < len(own.get(leaf.wire, [])) else [])
                ]
                items.append(decode(child, pairs, i))
            out[child.key] = items
        else:
            inner = expected(child, out.get(child.key, {}), own, row)
            if inner or child.key in out:
                out[child.key] = inner
    return out


def normalize(value: Any) -> Any:
    """What survives HTML's encoding: false and empty leave nothing on the wire, and a blank
    row of an array of objects is one the form sends anyway."""
    if isinstance(value, dict):
        kept = {k: normalize(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not False and v != [] and v != {}}
    if isinstance(value, list):
        items = [normalize(v) for v in value]
        return [v for v in items if v != {} and not (isinstance(v, dict) and _blank(v))]
    return value


def _as_received(pairs: list[Pair]) -> list[tuple[str, Any]]:
    return [
        (name, {"base64": base64.b64encode(v.data).decode()} if isinstance(v, FileValue) else v)
        for name, v in pairs
    ]


def as_submitted(declaration: dict[str, Any]) -> dict[str, Any]:
    """The form as a call reads it from the page (the extractor's read with values), fresh:
    a text-like field holds "" (HTML sends it, empty or not: a read-only one anchors the
    rows of an array of objects on the wire), a range its midpoint, a colour black, a
    checkbox or radio its value unchecked, a single select its first enabled option."""
    submitted = copy.deepcopy(declaration)
    for control in submitted["form"]["controls"]:
        attributes = control["attributes"]
        if control["tag"] == "select":
            enabled = [o for o in control["options"] if not o["disabled"]]
            first = enabled[0] if enabled and "multiple" not in attributes else None
            for option in control["options"]:
                option["selected"] = option is first
        elif control["tag"] == "textarea":
            control["value"] = ""
        elif control["type"] in ("checkbox", "radio"):
            control["value"], control["checked"] = attributes.get("value", "on"), False
        elif control["type"] == "range":
            control["value"] = _range_default(attributes)
        elif control["type"] != "file":
            control["value"] = "#000000" if control["type"] == "color" else ""
    return submitted


def _range_default(attributes: dict[str, str]) -> str:
    """A fresh range's value, by HTML's rules: halfway from its minimum to its maximum (the
    minimum when the maximum is below it), on a step from the minimum (the nearest; of two,
    the greater one that is still within the range)."""
    low, high = Decimal(attributes.get("min", "0")), Decimal(attributes.get("max", "100"))
    high = max(low, high)
    value = low + (high - low) / 2
    text = attributes.get("step", "1")
    if text != "any":
        valid = re.fullmatch(r"\d+(\.\d+)?", text) and Decimal(text) > 0
        step = Decimal(text) if valid else Decimal(1)  # an invalid step is the default, 1
        value = low + math.floor((value - low) / step + Decimal("0.5")) * step
        if value > high:
            value -= step
    return format(value.normalize(), "f")


def own_entries(submitted: dict[str, Any]) -> dict[str, list[list[str]]]:
    """What each control of a form sends as it stands, per name, in document order, by
    HTML's rules (as ``OWN_ENTRIES`` reads them from a page)."""
    own: dict[str, list[list[str]]] = {}
    for control in submitted["form"]["controls"]:
        if not control["name"] or control["disabled"] or control["type"] == "file":
            continue
        if control["tag"] == "select":
            sent = [o["value"] for o in control["options"] if o["selected"] and not o["disabled"]]
        elif control["type"] in ("checkbox", "radio"):
            sent = [control["value"]] if control["checked"] else []
        else:
            sent = [control["value"]]
        own.setdefault(control["name"], []).append(sent)
    return own


def tool_of(declaration: dict[str, Any]) -> tuple[Tool, Any]:
    try:
        seed = synthesize(Declaration.model_validate(declaration))
    except NotATool:
        reject()
    wires = [leaf.wire for leaf in _leaves(seed.plan.root)]
    if len(wires) != len(set(wires)):
        # HTML names shared by fields of different fieldsets: a server cannot tell them
        # apart, and neither can a submission (a person's sends both under one name).
        reject()
    tool = Tool(
        name=seed.name, description="", inputSchema=seed.input_schema, origin="o", frame="main"
    )
    return tool, seed.plan


def draw_or_reject(data: st.DataObject, make: Any) -> Any:
    try:
        strategy = make()
    except Unsatisfiable:
        reject()
    return data.draw(strategy)


# -- the properties, without a browser ----------------------------------------------------------

QUICK = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@QUICK
@given(forms())
def test_random_forms_synthesize_valid_closed_world_json_schema(
    declaration: dict[str, Any],
) -> None:
    tool, _ = tool_of(declaration)
    Draft202012Validator.check_schema(tool.input_schema)
    for _, sub in _paths_of_schema(tool.input_schema):
        if sub.get("type") == "object":
            assert sub["additionalProperties"] is False
            assert set(sub.get("required", [])) <= set(sub["properties"])


def _paths_of_schema(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    yield "", schema
    for key, sub in schema.get("properties", {}).items():
        for path, inner in _paths_of_schema(sub):
            yield f"/{key}{path}", inner
    if isinstance(schema.get("items"), dict):
        yield from _paths_of_schema(schema["items"])
    for row in schema.get("prefixItems", []):
        yield from _paths_of_schema(row)


@QUICK
@given(forms(), st.data())
def test_valid_arguments_are_submitted_exactly(
    declaration: dict[str, Any], data: st.DataObject
) -> None:
    tool, _ = tool_of(declaration)
    arguments = draw_or_reject(data, lambda: values_for(tool.input_schema, complete=False))
    assert not refused(tool, arguments), (arguments, validate_arguments(tool, arguments))
    submitted = as_submitted(declaration)
    # As a call does: the form read again with its values, and its schema still the listed one.
    seed = synthesize(Declaration.model_validate(submitted))
    assert seed.input_schema == tool.input_schema
    received = decode(seed.plan.root, _as_received(encode(seed.plan, arguments)))
    assert received == normalize(expected(seed.plan.root, arguments, own_entries(submitted)))


def test_rows_told_apart_by_a_read_only_field_alone() -> None:
    """Found by the property above: rows of an array of objects whose only parameter is a
    multiple select are told apart on the wire by a read-only text field, which HTML sends
    (empty); a model of the form that sent nothing for it read two rows as one."""

    def control(name: str, chain: list[int], **more: Any) -> dict[str, Any]:
        base = {"tag": "input", "type": "text", "name": name, "disabled": False}
        return base | {"attributes": {}, "fieldsets": chain, "labels": ""} | more

    options = [
        {"value": "", "label": "Choose", "disabled": True},
        {"value": "low", "label": "low", "disabled": False},
    ]
    select = {"tag": "select", "type": "", "attributes": {"multiple": ""}, "options": options}
    listed = [
        control("a_a_a", [0, 0], attributes={"readonly": ""}),
        control("a_a_a", [0, 0], attributes={"readonly": ""}),
        control("a_a", [0], **select),
        control("a_a", [0], **select),
    ]
    declaration = {
        "id": 1,
        "kind": "form",
        "attributes": {"tool-name": "rows"},
        "url": "http://127.0.0.1/",
        "form": {
            "action": "http://127.0.0.1/submit",
            "method": "get",
            "enctype": None,
            "controls": listed,
            "fieldsets": [{"name": "a", "legend": "", "attributes": {}}],
        },
    }
    tool, _ = tool_of(declaration)
    arguments = {"a": [{"a_a": ["low"]}, {"a_a": ["low"]}]}
    assert not refused(tool, arguments)
    submitted = as_submitted(declaration)
    seed = synthesize(Declaration.model_validate(submitted))
    pairs = encode(seed.plan, arguments)
    assert [name for name, _ in pairs] == ["a_a_a", "a_a", "a_a_a", "a_a"]
    received = decode(seed.plan.root, _as_received(pairs))
    assert received == normalize(expected(seed.plan.root, arguments, own_entries(submitted)))
    assert received == arguments


@QUICK
@given(forms(), st.data())
def test_invalid_arguments_are_refused(declaration: dict[str, Any], data: st.DataObject) -> None:
    tool, _ = tool_of(declaration)
    valid = draw_or_reject(data, lambda: values_for(tool.input_schema, complete=True))
    assert refused(tool, data.draw(broken(tool.input_schema, valid)))


# -- the same through a browser: one page, re-opened per example ------------------------------------


def render(declaration: dict[str, Any]) -> str:
    """The HTML of a random form (fieldset chains become nested fieldsets)."""
    form = declaration["form"]
    names = [f["name"] for f in form["fieldsets"]]
    out = [f'<form action="/submit" method="{form["method"]}" tool-name="random"']
    if form["enctype"]:
        out[0] += f' enctype="{form["enctype"]}"'
    out[0] += ">"
    open_chain: list[int] = []
    for control in form["controls"]:
        chain = control["fieldsets"]
        while open_chain and open_chain != chain[: len(open_chain)]:
            out.append("</fieldset>")
            open_chain.pop()
        for index in chain[len(open_chain) :]:
            out.append(f'<fieldset name="{html.escape(names[index])}">')
            open_chain.append(index)
        out.append(_control_html(control))
    out += ["</fieldset>"] * len(open_chain) + ["</form>"]
    return "<!doctype html>\n" + "\n".join(out)


def _control_html(control: dict[str, Any]) -> str:
    attrs = {"name": control["name"], **control["attributes"]}
    if control["disabled"]:
        attrs["disabled"] = ""
    text = " ".join(f'{k}="{html.escape(v, quote=True)}"' for k, v in attrs.items())
    if control["tag"] == "select":
        options = "".join(
            f'<option value="{html.escape(o["value"], quote=True)}"{" disabled" if o["disabled"] else ""}>'
            f"{html.escape(o['label'])}</option>"
            for o in control["options"]
        )
        return f"<select {text}>{options}</select>"
    if control["tag"] == "textarea":
        return f"<textarea {text}></textarea>"
    return f'<input type="{control["type"]}" {text}>'


OWN_ENTRIES = """() => {
  const out = {};
  for (const el of document.forms[0].elements) {
    if (!el.name || el.disabled || el.closest("fieldset:disabled")) continue;
    if (["submit", "reset", "button", "image", "file"].includes(el.type)) continue;
    let sent = [];
    if (el.tagName === "SELECT") sent = [...el.selectedOptions].filter(o => !o.disabled).map(o => o.value);
    else if (el.type === "checkbox" || el.type === "radio") sent = el.checked ? [el.value] : [];
    else sent = [el.value];
    (out[el.name] ??= []).push(sent);
  }
  return out;
}"""


class Browser:
    """A harness, a session and a recording server on a loop in their own thread, so that
    hypothesis (which drives plain functions) can use them."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.page_html = ""
        self.received: list[list[tuple[str, Any]]] = []
        self.port = 0  # known once started
        self.harness: Harness | None = None
        self.session: Session | None = None
        self.runner: web.AppRunner | None = None

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(timeout=60)

    async def start(self) -> None:
        async def page(_: web.Request) -> web.StreamResponse:
            return web.Response(text=self.page_html, content_type="text/html")

        async def submit(request: web.Request) -> web.StreamResponse:
            pairs: list[tuple[str, Any]] = list(request.query.items())
            if request.method == "POST" and request.content_type == "multipart/form-data":
                reader = await request.multipart()
                while (part := await reader.next()) is not None:
                    assert isinstance(part, BodyPartReader)
                    raw = await part.read()
                    value: Any = (
                        raw.decode()
                        if part.filename is None
                        else {"base64": base64.b64encode(raw).decode()}
                    )
                    pairs.append((part.name or "", value))
            elif request.method == "POST":
                pairs += [(k, str(v)) for k, v in (await request.post()).items()]
            self.received.append(pairs)
            return web.json_response({"content": [{"type": "text", "text": "ok"}]})

        app = web.Application()
        app.router.add_get("/form", page)
        app.router.add_route("*", "/submit", submit)
        self.runner = web.AppRunner(app, shutdown_timeout=0.5)
        await self.runner.setup()
        self.port = await listen(self.runner)
        self.harness = Harness(backend="polyfill", call_timeout=10, policy=None)
        await self.harness.__aenter__()
        self.session = await self.harness.open(f"http://127.0.0.1:{self.port}/form")

    async def stop(self) -> None:
        if self.session is not None:
            await self.session.close()
        if self.harness is not None:
            await self.harness.__aexit__(None, None, None)
        if self.runner is not None:
            await self.runner.cleanup()

    async def own_entries(self) -> dict[str, list[list[str]]]:
        """What each control of the form sends as it stands, per name, in document order:
        read from the page by HTML's rules (the entry list), not by the harness."""
        assert self.session is not None
        found: dict[str, list[list[str]]] = await self.session.page.evaluate(OWN_ENTRIES)
        return found

    async def show(self, page: str) -> tuple[Tool | None, Any]:
        assert self.session is not None
        self.page_html = page
        await self.session.open(f"http://127.0.0.1:{self.port}/form")
        tools = {t.name: t for t in await self.session.tools()}
        tool = tools.get("random")
        seeds = seed_tools_of(self.session.backend)
        declared = seeds.declared(tool) if tool is not None and seeds is not None else None
        return tool, declared.plan if declared is not None else None

    async def call(self, arguments: dict[str, Any]) -> Any:
        assert self.session is not None
        return await self.session.call("random", arguments)


@pytest.fixture(scope="module")
def live() -> Iterator[Browser]:
    running = Browser()
    running.run(running.start())
    yield running
    running.run(running.stop())
    running.loop.call_soon_threadsafe(running.loop.stop)
    running.thread.join(timeout=5)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(forms(), st.data())
def test_in_the_browser_the_server_receives_exactly_the_arguments(
    live: Browser, declaration: dict[str, Any], data: st.DataObject
) -> None:
    tool, plan = live.run(live.show(render(declaration)))
    if tool is None:
        reject()  # the random element is not a tool (all its names clashed away, say)
    arguments = draw_or_reject(data, lambda: values_for(tool.input_schema, complete=True))
    own = live.run(live.own_entries())
    live.received.clear()
    outcome = live.run(live.call(arguments))
    assert not outcome.is_error, outcome.result.content
    [received] = live.received
    assert decode(plan.root, received) == normalize(expected(plan.root, arguments, own))
    # One thing wrong, and nothing leaves the live.
    bad = data.draw(broken(tool.input_schema, arguments))
    live.received.clear()
    outcome = live.run(live.call(bad))
    assert outcome.is_error and outcome.error_kind in ("validation", "refused")
    assert live.received == []
