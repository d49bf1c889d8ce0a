"""The lints that run over what a page declares (no browser needed), with the rules of
:mod:`harness.conformance.rules`.

The audit (:mod:`harness.conformance.audit`) collects a :class:`PageScan` — the catalog, the
catalog's warnings, every frame's registrations, the declarative forms as the DOM has them —
and :func:`lint` turns it into :class:`~harness.conformance.rules.Finding` objects. Probes
(calls and requests the audit makes) add their findings in the audit module, with codes from
the same table.

Findings never carry a secret: evidence names where a value was and what it looked like,
never the value.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from jsonschema import Draft202012Validator, FormatChecker, SchemaError

from harness.conformance.rules import RULES, Finding, finding
from harness.models import CatalogWarning, Tool
from harness.schemas import patterns

# What a secret looks like moved to the stages (the QA tools judge results too); the
# audit, the reports and their tests keep importing it from here.
from harness.stages.secrets import KEY_SHAPES as KEY_SHAPES
from harness.stages.secrets import entropy as entropy
from harness.stages.secrets import secret_kind as secret_kind
from harness.stages.secrets import secret_leaves as secret_leaves
from harness.stages.trust import annotation_problems

__all__ = [
    "PAGE_CODES",
    "RULES",
    "Control",
    "DeclaredForm",
    "Finding",
    "PageScan",
    "Registration",
    "codes_for",
    "deduplicated",
    "finding",
    "lint",
    "secret_kind",
    "secret_leaves",
]

# -- what the audit collects ---------------------------------------------------------------


@dataclass(frozen=True)
class Control:
    """One form control as the DOM has it."""

    name: str
    type: str
    elicit: bool = False
    interactive: bool = True
    label: str = ""


@dataclass(frozen=True)
class DeclaredForm:
    """A declarative tool element (either dialect) as the DOM has it."""

    dialect: Literal["spec", "seed"]
    element: str
    name: str
    description: str | None
    action: str
    method: str
    autosubmit: bool = False
    hints: frozenset[str] = frozenset()
    """The seed dialect's hint attributes the author wrote (tool-readonly, …)."""
    readonly: bool = False
    controls: tuple[Control, ...] = ()
    frame_url: str = ""


@dataclass(frozen=True)
class Registration:
    """A tool as one frame registered it (whether or not the agent is offered it)."""

    name: str
    description: str
    frame_url: str
    origin: str
    top: bool


@dataclass
class PageScan:
    """Everything the audit read from one page."""

    url: str
    origin: str
    tools: list[Tool]
    warnings: list[CatalogWarning] = field(default_factory=list)
    forms: list[DeclaredForm] = field(default_factory=list)
    registrations: list[Registration] = field(default_factory=list)
    bad_patterns: dict[str, list[str]] = field(default_factory=dict)
    """Tool name → patterns of its inputSchema that do not compile as ECMAScript."""
    expected: tuple[str, ...] = ()
    """Tools the run expects the page to offer (``--expect-tool``, ``--wait-for-tool``)."""
    unread: list[str] = field(default_factory=list)
    """Reads of the page that ran out of time (what the audit could not check)."""

    def form(self, name: str) -> DeclaredForm | None:
        """The declarative element behind a tool name (main frame first)."""
        for form in self.forms:
            if form.name == name:
                return form
        return None


# -- the lints --------------------------------------------------------------------------------

NAME_RULE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
SEED_NAME_RULE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
SHORT_DESCRIPTION = 12
LONG_DESCRIPTION = 1000

INSTRUCTIONS = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"\bignore\b.{0,30}\b(?:previous|prior|above|earlier|all)\b.{0,20}\binstructions?\b",
        r"\b(?:do not|don'?t|never|without)\b.{0,20}\b(?:tell|mention|inform|reveal|show|ask(?:ing)?|telling|informing)\b.{0,30}\b(?:user|them|anyone|human)\b",
        r"\b(?:don'?t|do not|never)\s+mention\b",
        r"\bkeep\b.{0,20}\b(?:secret|hidden|quiet)\b",
        r"\[\s*(?:precondition|system|important|instructions?)\s*\]",
        r"\b(?:first|before (?:anything|you|doing)|always)\b.{0,40}\b(?:visit|go to|open|navigate|call|send|fetch)\b",
        r"\byou (?:must|should|have to|need to)\b",
        r"<\s*/?\s*(?:system|instructions?|assistant)\s*>",
        r"<!--",
        r"\balso\s+(?:buys?|sends?|transfers?|pays?|deletes?|orders?|shares?|forwards?)\b",
        r"\b(?:assistant|ai|agent|model)\s*[,:]\s*(?:you|please|now)\b",
    )
)

INVISIBLE = re.compile(
    "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f\u00ad\u180e]"
)
URL = re.compile(r"\bhttps?://[^\s\"'<>)\]]+", re.IGNORECASE)

CONSEQUENTIAL_VERBS = frozenset(
    [
        "send",
        "delete",
        "remove",
        "destroy",
        "erase",
        "purge",
        "pay",
        "purchase",
        "buy",
        "checkout",
        "order",
        "transfer",
        "wire",
        "withdraw",
        "refund",
        "publish",
        "post",
        "share",
        "invite",
        "cancel",
        "deactivate",
        "unsubscribe",
        "approve",
        "charge",
        "donate",
        "sell",
    ]
)
SENSITIVE_NAME = re.compile(
    r"pass(?:word|wd|phrase|code)?$|^pwd$|card.?(?:number|no|num)?$|credit.?card|cvv|cvc|"
    r"security.?code|iban|swift|routing|account.?number|ssn|social.?security|tax.?id|"
    r"token|secret|api.?key|private.?key|otp|one.?time|2fa|pin$|^pin|seed.?phrase|mnemonic",
    re.IGNORECASE,
)
CONFUSABLES = str.maketrans({"0": "o", "1": "l", "i": "l", "3": "e", "5": "s", "7": "t", "@": "a"})

SUBSET_KEYWORDS = (
    "$ref",
    "$defs",
    "definitions",
    "format",
    "contentEncoding",
    "contentMediaType",
    "unevaluatedProperties",
    "unevaluatedItems",
    "dependentRequired",
    "dependentSchemas",
    "$dynamicRef",
    "$anchor",
)


def confusable_key(name: str) -> str:
    """A name folded so that look-alikes meet: case, separators, NFKC, digit/letter twins."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    folded = "".join(c for c in folded if c.isalnum())
    return folded.translate(CONFUSABLES).replace("rn", "m").replace("vv", "w")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.scheme and parts.netloc else ""


def _chars(text: str) -> str:
    found = sorted({f"U+{ord(c):04X}" for c in INVISIBLE.findall(text)})
    return ", ".join(found)


def _quote(match: re.Match[str], text: str) -> str:
    start, end = max(0, match.start() - 20), min(len(text), match.end() + 20)
    snippet = " ".join(text[start:end].split())
    return f"…{snippet}…"


def lint_description(tool: str, description: str | None, page_origin: str) -> Iterator[Finding]:
    """Findings about one tool's description (and the instructions or links it carries)."""
    text = description or ""
    if not text.strip():
        yield finding("description-missing", f"{tool} has no description.", tool=tool)
        return
    if len(text.strip()) < SHORT_DESCRIPTION:
        yield finding(
            "description-short",
            f"{tool}'s description is {len(text.strip())} characters.",
            tool=tool,
            evidence=repr(text.strip()),
        )
    if len(text) > LONG_DESCRIPTION:
        yield finding(
            "description-long",
            f"{tool}'s description is {len(text)} characters long.",
            tool=tool,
            evidence=f"{len(text)} characters (over {LONG_DESCRIPTION})",
        )
    hits = [(p, m) for p in INSTRUCTIONS for m in [p.search(text)] if m]
    if hits:
        yield finding(
            "description-instructions",
            f"{tool}'s description tells the agent what to do.",
            tool=tool,
            evidence="; ".join(_quote(m, text) for _, m in hits[:3]),
        )
    elsewhere = sorted({u for u in URL.findall(text) if _origin(u) and _origin(u) != page_origin})
    if elsewhere:
        yield finding(
            "description-other-origin",
            f"{tool}'s description links to another origin.",
            tool=tool,
            evidence=", ".join(elsewhere[:3]),
        )


def lint_invisible(tool: str, texts: Iterable[str]) -> Iterator[Finding]:
    """Invisible or bidi control characters in a tool's name, title or description."""
    joined = "".join(texts)
    if INVISIBLE.search(joined):
        yield finding(
            "description-invisible-characters",
            f"{tool}'s text has characters the user cannot see.",
            tool=tool,
            evidence=_chars(joined),
        )


def _walk(schema: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(schema, dict):
        yield path, schema
        for key, value in schema.items():
            if key in ("enum", "const", "default", "examples", "required"):
                continue
            yield from _walk(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from _walk(value, f"{path}/{index}")


def _schema_formats(dialect: patterns.PatternDialect) -> FormatChecker:
    # The metaschema's "regex" format (pattern, patternProperties) means ECMA-262, not
    # Python's `re`: judged by the engine the harness validates arguments with, as the
    # tool's patterns are read (a form's as HTML compiles them: the `v` flag).
    checker = FormatChecker()
    checker.checkers = dict(patterns.SCHEMA_FORMATS.checkers)
    checker.checks("regex")(
        lambda value: (
            not isinstance(value, str) or patterns.pattern_flags(value, dialect) is not None
        )
    )
    return checker


SCHEMA_FORMATS = _schema_formats(patterns.JSON_SCHEMA)
"""The format checker schemas are checked with: Draft 2020-12's, patterns as ECMAScript."""
FORM_SCHEMA_FORMATS = _schema_formats(patterns.HTML)
"""The same for a form's inputSchema: its patterns as HTML compiles them."""


def lint_input_schema(tool: Tool, subset: bool, bad_patterns: list[str]) -> Iterator[Finding]:
    """The inputSchema: valid 2020-12 (its patterns ECMAScript regexes), an object at the
    root, inside the WebMCP subset."""
    schema = tool.input_schema
    try:
        formats = (
            FORM_SCHEMA_FORMATS if patterns.dialect_of(tool) is patterns.HTML else SCHEMA_FORMATS
        )
        Draft202012Validator.check_schema(schema, format_checker=formats)
    except SchemaError as exc:
        where = "/" + "/".join(str(p) for p in exc.path) if exc.path else "/"
        yield finding(
            "input-schema-invalid",
            f"{tool.name}'s inputSchema is not valid JSON Schema.",
            tool=tool.name,
            evidence=f"at {where}: {exc.message[:200]}",
        )
        return
    if schema.get("type") not in (None, "object"):
        yield finding(
            "input-schema-not-object",
            f"{tool.name}'s inputSchema root is {schema.get('type')!r}.",
            tool=tool.name,
        )
    if not subset:
        return
    outside: list[str] = []
    for path, node in _walk(schema):
        outside += [f"{path}/{key}" for key in SUBSET_KEYWORDS if key in node]
        extra = node.get("additionalProperties", False)
        if "additionalProperties" in node and extra is not False:
            outside.append(f"{path}/additionalProperties")
    outside += [f"pattern {p!r} (not ECMAScript)" for p in bad_patterns]
    if outside:
        yield finding(
            "input-schema-outside-subset",
            f"{tool.name}'s inputSchema uses keywords outside the WebMCP subset.",
            tool=tool.name,
            evidence=", ".join(outside[:6]),
        )


def lint_output_schema(tool: Tool) -> Iterator[Finding]:
    """The outputSchema, when there is one, is valid 2020-12."""
    if tool.output_schema is None:
        return
    try:
        Draft202012Validator.check_schema(tool.output_schema, format_checker=SCHEMA_FORMATS)
    except SchemaError as exc:
        yield finding(
            "output-schema-invalid",
            f"{tool.name}'s outputSchema is not valid JSON Schema.",
            tool=tool.name,
            evidence=exc.message[:200],
        )


def lint_annotations(tool: Tool) -> Iterator[Finding]:
    """Annotations that break the SEP's schema (the user agent then treats them as unknown).

    Seed 004's old spellings and string hints are read as meant by the catalog, which warns
    (``annotation-spelling``); :func:`lint_warnings` turns those warnings into findings.
    """
    problems = annotation_problems(tool.annotations)
    if problems:
        yield finding(
            "annotations-invalid",
            f"{tool.name}'s annotations break the SEP's schema.",
            tool=tool.name,
            evidence="; ".join(problems[:3]),
        )


def _stem(word: str) -> str:
    word = word.lower()
    for suffix in ("es", "s"):
        if word.endswith(suffix) and word[: -len(suffix)] in CONSEQUENTIAL_VERBS:
            return word[: -len(suffix)]
    return word


def consequential_verb(name: str, description: str) -> str | None:
    """The consequential verb of a tool: in its name, or the first word of its description
    ("Transfers money …"). Verbs elsewhere in a description ("… where the checkout is") are
    not the tool's own."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    words = [w for w in re.split(r"[^A-Za-z]+", spaced) if w]
    first = re.match(r"\s*([A-Za-z]+)", description)
    if first:
        words.append(first.group(1))
    for word in words:
        if _stem(word) in CONSEQUENTIAL_VERBS:
            return _stem(word)
    return None


def _declared(tool: Tool, form: DeclaredForm | None, *keys: str) -> bool:
    if form is not None and form.dialect == "seed":
        attributes = {
            "readOnlyHint": "tool-readonly",
            "destructiveHint": "tool-destructive",
            "idempotentHint": "tool-idempotent",
            "openWorldHint": "tool-openworld",
        }
        return any(attributes.get(key) in form.hints for key in keys)
    return any(isinstance(tool.annotations.get(key), bool) for key in keys)


def _says_read_only(tool: Tool, form: DeclaredForm | None) -> bool:
    return tool.annotations.get("readOnlyHint") is True and (
        form is None or form.dialect != "seed" or "tool-readonly" in form.hints
    )


def lint_consequences(tool: Tool, form: DeclaredForm | None) -> Iterator[Finding]:
    """Consequential-looking tools must say so; every tool that writes should say how."""
    if form is not None and form.dialect == "spec":
        verb = consequential_verb(tool.name, tool.description)
        if verb and form.autosubmit:
            yield finding(
                "consequential-autosubmit",
                f"{tool.name} looks consequential ({verb!r}) and submits itself.",
                tool=tool.name,
                evidence="toolautosubmit",
            )
        return  # the spec's forms have no annotation attributes: the review is the check
    if _says_read_only(tool, form):
        return
    annotations = tool.annotations
    metadata = annotations.get("inputMetadata")
    has_outcomes = isinstance(metadata, dict) and "outcomes" in metadata
    has_destination = isinstance(metadata, dict) and "destination" in metadata
    verb = consequential_verb(tool.name, tool.description)
    if verb and not (
        _declared(tool, form, "destructiveHint", "consequentialHint", "readOnlyHint")
        or has_outcomes
    ):
        yield finding(
            "consequential-unannotated",
            f"{tool.name} looks consequential ({verb!r}) but declares neither "
            "destructiveHint, consequentialHint nor inputMetadata.outcomes.",
            tool=tool.name,
            evidence=f"annotations: {sorted(annotations) or 'none'}",
        )
        return
    missing = []
    if not (_declared(tool, form, "destructiveHint") or has_outcomes):
        missing.append("destructiveHint (or inputMetadata.outcomes)")
    if not (_declared(tool, form, "openWorldHint") or has_destination):
        missing.append("openWorldHint (or inputMetadata.destination)")
    if missing:
        yield finding(
            "annotations-not-explicit",
            f"{tool.name} changes state but does not declare {' or '.join(missing)}.",
            tool=tool.name,
            evidence=f"missing: {', '.join(missing)}",
        )


def _sensitive_controls(form: DeclaredForm) -> list[Control]:
    return [
        c
        for c in form.controls
        if c.interactive and (c.type == "password" or SENSITIVE_NAME.search(c.name.split(".")[-1]))
    ]


def lint_parameters(tool: Tool, form: DeclaredForm | None) -> Iterator[Finding]:
    """Secrets asked of the agent: in a schema, an autosubmit form, a field not elicited."""
    if form is None:
        names = sorted(
            path.rsplit("/", 1)[-1]
            for path, _ in _walk(tool.input_schema.get("properties", {}))
            if path.count("/") == 1 and SENSITIVE_NAME.search(path.rsplit("/", 1)[-1])
        )
        if names:
            yield finding(
                "sensitive-parameter",
                f"{tool.name} asks the agent for {', '.join(names)}.",
                tool=tool.name,
                evidence=f"parameters: {', '.join(names)}",
            )
        return
    secret = _sensitive_controls(form)
    if not secret:
        return
    if form.dialect == "spec" and form.autosubmit:
        yield finding(
            "sensitive-parameter-autosubmit",
            f"{tool.name} submits itself with a field for a secret.",
            tool=tool.name,
            evidence=", ".join(f"{c.name} (type={c.type})" for c in secret),
        )
    if form.dialect == "seed":
        unasked = [c for c in secret if not c.elicit]
        if unasked:
            yield finding(
                "sensitive-parameter-not-elicited",
                f"{tool.name} lets the agent fill a field for a secret.",
                tool=tool.name,
                evidence=", ".join(
                    f"{c.name} (type={c.type}) without tool-elicit" for c in unasked
                ),
            )


def lint_forms(scan: PageScan) -> Iterator[Finding]:
    """Declarative elements that the browser ignores: bad names, no description."""
    offered = {tool.name for tool in scan.tools}
    for form in scan.forms:
        rule = NAME_RULE if form.dialect == "spec" else SEED_NAME_RULE
        if not rule.match(form.name):
            yield finding(
                "name-invalid",
                f"The {form.element} named {form.name[:80]!r} is not a tool: its name breaks the rule.",
                tool=form.name[:80],
                evidence=f"{len(form.name)} characters"
                + (
                    "; characters outside A–Z a–z 0–9 _ . -"
                    if re.search(r"[^A-Za-z0-9_.-]", form.name)
                    else ""
                ),
            )
        elif (
            form.dialect == "spec"
            and not (form.description or "").strip()
            and form.name not in offered
        ):
            yield finding(
                "description-missing",
                f"<form toolname={form.name!r}> has no tooldescription, so it is not a tool.",
                tool=form.name,
            )


def lint_frames(scan: PageScan) -> Iterator[Finding]:
    """Tools from other origins, and names that shadow each other across frames."""
    foreign: dict[str, list[str]] = {}
    for registration in scan.registrations:
        if registration.origin != scan.origin:
            foreign.setdefault(registration.frame_url, []).append(registration.name)
    for frame_url, names in sorted(foreign.items()):
        yield finding(
            "cross-origin-frame-tools",
            f"A frame from {_origin(frame_url) or frame_url} registers tools.",
            tool=", ".join(sorted(names)),
            evidence=f"{frame_url}: {', '.join(sorted(names))}",
        )
    groups: dict[str, list[Registration]] = {}
    for registration in scan.registrations:
        groups.setdefault(confusable_key(registration.name), []).append(registration)
    for group in groups.values():
        frames = {r.frame_url for r in group}
        if len(frames) < 2:
            continue
        yield finding(
            "tool-shadowing",
            "Tools in different frames have the same or confusable names: "
            + ", ".join(sorted({r.name for r in group}))
            + ".",
            tool=sorted(r.name for r in group if r.top)[0]
            if any(r.top for r in group)
            else group[0].name,
            evidence="; ".join(f"{r.name!r} in {r.frame_url}" for r in group),
        )


def lint_warnings(scan: PageScan) -> Iterator[Finding]:
    """The user agent's own catalog warnings, as findings."""
    for warning in scan.warnings:
        if warning.code == "duplicate-name":
            yield finding(
                "name-duplicate", warning.message, tool=warning.tool, evidence=warning.message
            )
        elif warning.code == "undeclared-sensitive":
            yield finding(
                "sensitive-without-hint",
                warning.message,
                tool=warning.tool,
                evidence=warning.message,
            )
        elif warning.code == "annotation-spelling":
            # The catalog's own wording (never the page's) says which reading it was.
            code = (
                "annotation-unsuffixed"
                if "seed 004's spelling" in warning.message
                else ("annotation-not-boolean")
            )
            yield finding(code, warning.message, tool=warning.tool, evidence=warning.message)
        elif warning.code == "malformed-tool":
            yield finding(
                "name-invalid", warning.message, tool=warning.tool, evidence=warning.message
            )
        elif warning.code in ("invalid-annotations",):
            continue  # lint_annotations reports these, with the problems
        else:
            yield finding(
                "catalog-warning", warning.message, tool=warning.tool, evidence=warning.code
            )


def lint_expectations(scan: PageScan) -> Iterator[Finding]:
    """Tools the run expected that the page does not offer, and reads that ran out of time:
    a page whose tools never came, or that kept the audit from looking, never passes."""
    offered = {tool.name for tool in scan.tools}
    for name in scan.expected:
        if name not in offered:
            yield finding(
                "expected-tool-missing",
                f"The page offers no tool {name!r} once its catalog settled.",
                tool=name,
                evidence="offered: " + (", ".join(sorted(offered)) or "nothing"),
            )
    for problem in scan.unread:
        yield finding(
            "page-unreadable", "The audit could not read all of the page.", evidence=problem
        )


def lint(scan: PageScan) -> list[Finding]:
    """Every static finding about one page."""
    found: list[Finding] = []
    if not scan.tools and not scan.forms and not scan.registrations:
        found.append(finding("no-tools", f"{scan.url} offers no tools."))
    for tool in scan.tools:
        form = scan.form(tool.name) if tool.source == "declarative" else None
        found += lint_description(tool.name, tool.description, scan.origin)
        found += lint_invisible(tool.name, [tool.name, tool.title or "", tool.description])
        found += lint_input_schema(
            tool, subset=tool.source == "script", bad_patterns=scan.bad_patterns.get(tool.name, [])
        )
        found += lint_output_schema(tool)
        found += lint_annotations(tool)
        found += lint_consequences(tool, form)
        found += lint_parameters(tool, form)
    found += lint_forms(scan)
    found += lint_frames(scan)
    found += lint_warnings(scan)
    found += lint_expectations(scan)
    for item in found:
        item.url = scan.url
    return deduplicated(found)


def deduplicated(found: list[Finding]) -> list[Finding]:
    """One finding per (code, tool): evidence of repeats is joined."""
    merged: dict[tuple[str, str | None], Finding] = {}
    for item in found:
        key = (item.code, item.tool)
        first = merged.get(key)
        if first is None:
            merged[key] = item
        elif item.evidence and item.evidence not in first.evidence:
            first.evidence = (
                f"{first.evidence}; {item.evidence}" if first.evidence else item.evidence
            )
    return list(merged.values())


def codes_for(tool: Tool, form: DeclaredForm | None) -> list[str]:
    """The static rules that apply to a tool (each becomes a subtest of the audit report)."""
    codes = [
        "description-missing",
        "description-short",
        "description-long",
        "description-instructions",
        "description-other-origin",
        "description-invisible-characters",
        "name-duplicate",
    ]
    if form is None or form.dialect == "seed":
        codes += [
            "input-schema-invalid",
            "input-schema-not-object",
            "annotations-invalid",
            "annotation-unsuffixed",
            "annotation-not-boolean",
            "consequential-unannotated",
            "annotations-not-explicit",
        ]
    if form is None:
        codes += [
            "input-schema-outside-subset",
            "output-schema-invalid",
            "sensitive-without-hint",
            "sensitive-parameter",
        ]
    elif form.dialect == "spec":
        codes += ["consequential-autosubmit", "sensitive-parameter-autosubmit"]
    else:
        codes += ["sensitive-parameter-not-elicited"]
    return codes


PAGE_CODES = (
    "no-tools",
    "name-invalid",
    "tool-shadowing",
    "cross-origin-frame-tools",
    "page-unreadable",
)
