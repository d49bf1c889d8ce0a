"""Redaction: the after-call stage that keeps secrets out of the agent view (seed 000).

It runs last among the after-call stages, so what it returns is what any agent, MCP
client, trace, log or report sees. What it takes out goes to the session's
:class:`~harness.stages.vault.Vault`, under an opaque handle that stands in its place.

- ``outputSchema`` fields marked ``"x-sensitive": true`` are withheld from
  ``structuredContent`` (:mod:`harness.stages.sensitivity` finds them). The text block that mirrors ``structuredContent`` is
  rewritten from the redacted value; any other text that contains a withheld value
  verbatim has it replaced by its handle, and so has the page's ``_meta``. When the
  fields cannot be found (no ``structuredContent``, a value that does not fit the
  ``outputSchema``, a ``$ref`` to another document) the whole result is withheld.
  An error result without ``structuredContent`` keeps its message.
- ``sensitiveHint: true`` without marked fields: the whole result is withheld, and
  the agent gets a placeholder; nothing the page wrote reaches it.
- ``x-sensitive`` without ``sensitiveHint``: redacted all the same; the catalog warns.
- ``secret_reference`` content items keep their ``label`` and get a handle; ``id`` and
  ``redeemUrl`` never reach the agent. Content annotated ``audience: ["user"]`` is
  withheld.

The agent view lists what was withheld under ``_meta["webmcp-harness/redacted"]``: one
``{path, label, handle, kind}`` per item, ``path`` being a JSON pointer into the tool's
own result. Values shorter than :data:`MIN_SCRUB_LENGTH` characters are withheld where
the schema puts them, but not searched for in free text. A call stopped before its tool
ran (bad arguments, a policy) has no tool output to redact.

Reading the ``outputSchema`` (where its ``x-sensitive`` values are, whether the value fits)
takes up to the schema budget, a schema whose branches multiply all of it: the stage reads
in a worker thread (:func:`read_ahead`) and does on the event loop only the vault's and the
scrubber's writes, one result after another, so their order stays the calls' own.

Everything withheld joins the session's :class:`~harness.stages.scrubbing.Scrubber`
(shared by all its agent sessions): every result after it — of any tool, for any agent —
has those texts replaced by their handles, and so has every other channel an agent reads.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp_types import CallToolResult, ContentBlock, TextContent
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from harness.models import META_PREFIX, CallRequest, Tool
from harness.schemas import SchemaTimeout, off_loop, within_budget
from harness.stages.framing import PAGE_RESULT_KINDS, user_agent_text
from harness.stages.scrubbing import (
    MAX_SEARCHED_TEXTS,
    MIN_SCRUB_LENGTH,
    Scrubber,
    scrub_result,
)
from harness.stages.sensitivity import (
    JsonPath,
    Reading,
    declared_names,
    marks_sensitive,
    sensitive_and_keys,
    sensitive_paths,
    sensitivity_warnings,
)
from harness.stages.vault import SecretReference, SiteDefect, Vault, WithheldKind
from harness.urls import origin_of, resolve, scheme_of

__all__ = [
    "ERROR_REASON",
    "FULL_REASON",
    "MIN_SCRUB_LENGTH",
    "REDACTED_META_KEY",
    "REFERENCE_META_KEY",
    "Redaction",
    "Redactor",
    "WithheldItem",
    "marks_sensitive",
    "pointer",
    "redact",
    "sensitive_paths",
    "sensitivity_warnings",
    "withheld_items",
]

log = logging.getLogger("harness.stages.redaction")

REDACTED_META_KEY = META_PREFIX + "redacted"
"""The agent view's ``_meta`` key listing what was withheld: ``[{path, label, handle, kind}]``."""
REFERENCE_META_KEY = META_PREFIX + "secret_reference"
"""The ``_meta`` key on the text block that stands in for a ``secret_reference``."""

ERROR_REASON = "it is an error result of a tool whose output is sensitive"
"""Why an error of a ``sensitiveHint`` / ``x-sensitive`` tool is withheld whole."""

FULL_REASON = (
    "this session withheld more texts than the user agent can search for "
    f"({MAX_SEARCHED_TEXTS:,}), so it withholds every later result whole"
)
"""Why every result is withheld whole once the session's :class:`Scrubber` is full: what
the session withheld past the limit could come back in any result unsearched."""

DEFAULT_TTL_CAP_S = 3600.0
"""A ``secret_reference`` ttl above this is a site defect; the harness expires it here."""

_CONTENT = TypeAdapter(ContentBlock)
_MIRROR_SEPARATORS = (",", ":")


class WithheldItem(BaseModel):
    """One entry of ``_meta["webmcp-harness/redacted"]``: where, what, and its handle."""

    model_config = ConfigDict(frozen=True)

    path: str
    label: str
    handle: str
    kind: WithheldKind


@dataclass
class Redaction:
    """What :func:`redact` made of one result."""

    result: CallToolResult
    """The agent view."""
    withheld: list[WithheldItem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """For :attr:`CallOutcome.notes`: what was done, never a value."""
    texts: Scrubber = field(default_factory=Scrubber)
    """What it withheld, as texts to search for in everything an agent sees later."""


# -- JSON helpers --------------------------------------------------------------------------


def pointer(path: JsonPath) -> str:
    """The JSON pointer (RFC 6901) of a path."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _get(value: Any, path: JsonPath) -> Any:
    for token in path:
        value = value[token]
    return value


class _Edited:
    """A JSON value being edited without changing the original: each container on an
    edited path is copied (shallowly) once, and everything else is shared."""

    def __init__(self, value: Any) -> None:
        self.value = value
        self._own: set[int] = set()  # ids of the copies made here (they stay alive in value)

    def _copy(self, node: Any) -> Any:
        if id(node) in self._own:
            return node
        node = dict(node) if isinstance(node, dict) else list(node)
        self._own.add(id(node))
        return node

    def own(self, path: JsonPath) -> Any:
        """The container at ``path``, a copy of this edit's own (so are its ancestors)."""
        node = self.value = self._copy(self.value)
        for token in path:
            child = self._copy(node[token])
            node[token] = child
            node = child
        return node


def _mirror(value: Any) -> str:
    return json.dumps(value, separators=_MIRROR_SEPARATORS, ensure_ascii=False)


def _is_reference(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") == "secret_reference"


def _contains_reference(value: Any) -> bool:
    stack = [value]
    while stack:  # iterative: this looks at every value of a result, however large
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") == "secret_reference":
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _for_user_only(block: Any) -> bool:
    """Whether a content block is annotated for the user alone (MCP ``audience``)."""
    if not isinstance(block, dict):
        return False
    annotations = block.get("annotations")
    return _user_alone(annotations.get("audience") if isinstance(annotations, dict) else None)


def _user_alone(audience: Any) -> bool:
    return isinstance(audience, list) and "user" in audience and "assistant" not in audience


def _may_withhold(result: CallToolResult) -> bool:
    """Whether a result of a tool that marks nothing sensitive may still have something
    withheld (what :func:`redact` looks for in its JSON, read from the model): a
    ``secret_reference`` (a result holding one arrives as plain data, in
    ``structuredContent``), a block for the user alone, or the harness's redaction mark."""
    if REDACTED_META_KEY in (result.meta or {}):
        return True
    if result.structured_content is not None and _contains_reference(result.structured_content):
        return True
    return any(
        _user_alone(getattr(getattr(block, "annotations", None), "audience", None))
        for block in result.content
    )


# -- one redaction ---------------------------------------------------------------------------


@dataclass
class _Parts:
    """A result as plain MCP JSON, the way the page meant it."""

    content: list[Any]
    structured: Any
    is_error: bool
    meta: dict[str, Any]


def _parts(result: CallToolResult) -> _Parts:
    structured = result.structured_content
    if (
        isinstance(structured, dict)
        and isinstance(structured.get("content"), list)
        and any(_is_reference(item) for item in structured["content"])
    ):
        # Normalization could not read this MCP result (`secret_reference` is no MCP
        # content type), so it arrived as plain data: read it as the result it is.
        inner = structured.get("structuredContent")
        meta = structured.get("_meta")
        return _Parts(
            content=copy.deepcopy(structured["content"]),
            structured=copy.deepcopy(inner) if isinstance(inner, dict) else None,
            is_error=structured.get("isError") is True or bool(result.is_error),
            meta={
                # Keys in the harness's namespace are the harness's own: a page's go.
                **{
                    k: copy.deepcopy(v)
                    for k, v in (meta if isinstance(meta, dict) else {}).items()
                    if not k.startswith(META_PREFIX)
                },
                **(result.meta or {}),
            },
        )
    return _Parts(
        content=[
            b.model_dump(by_alias=True, exclude_none=True, mode="json") for b in result.content
        ],
        # Not copied: every step after this makes new containers where it changes one.
        structured=structured,
        is_error=bool(result.is_error),
        meta=copy.deepcopy(dict(result.meta or {})),
    )


class _Run:
    """The redaction of one result: what is withheld, and the texts to search for."""

    def __init__(
        self,
        tool: Tool,
        vault: Vault,
        call_id: str,
        ttl_cap: float,
        reading: Reading | None = None,
    ) -> None:
        self.tool = tool
        self.reading = reading or Reading(tool.output_schema)
        self.vault = vault
        self.call_id = call_id
        self.ttl_cap = ttl_cap
        self.withheld: list[WithheldItem] = []
        self.notes: list[str] = []
        self.texts = Scrubber()  # what this result withholds, to search for in the rest

    def keep(
        self,
        kind: WithheldKind,
        path: str,
        label: str,
        value: Any,
        *,
        reference: SecretReference | None = None,
        defects: tuple[SiteDefect, ...] = (),
    ) -> str:
        """Put one thing in the vault and list it; its handle."""
        entry = self.vault.put(
            kind,
            label=label,
            tool=self.tool.name,
            call_id=self.call_id,
            path=path,
            value=value,
            reference=reference,
            defects=defects,
        )
        self.withheld.append(WithheldItem(path=path, label=label, handle=entry.handle, kind=kind))
        self.texts.note_handle(entry.handle)
        for defect in entry.defects:
            self.notes.append(f"site defect: {defect.message}")
            log.info("site defect (%s): %s", defect.code, defect.message)
        return entry.handle

    def search_for(self, value: Any, handle: str) -> None:
        """Replace ``value``'s texts with ``handle`` wherever they appear in free text."""
        self.texts.withhold(value, handle)

    def withhold(self, path: str, label: str, value: Any) -> str:
        """Withhold an ``x-sensitive`` value; its handle. Its keys are withheld with it but
        for the property names the ``outputSchema`` declares (public words, not data)."""
        handle = self.keep("field", path, label, value)
        declared = (
            declared_names(self.tool.output_schema)
            if isinstance(value, dict | list)
            else frozenset()
        )
        self.texts.withhold(value, handle, declared)
        return handle

    # -- references --------------------------------------------------------------------

    def reference(self, item: dict[str, Any], path: str) -> dict[str, Any]:
        """Withhold a ``secret_reference``; the text block the agent gets instead."""
        label = item.get("label") if isinstance(item.get("label"), str) else None
        label = label or "secret"
        raw_url, raw_id = item.get("redeemUrl"), item.get("id")
        defects: list[SiteDefect] = []
        reference = None
        if isinstance(raw_url, str) and raw_url:
            # Resolved as the browser resolves it: the origin checked is the one requested.
            url = resolve(self.tool.frame_url or self.tool.origin + "/", raw_url) or raw_url
            if origin_of(url) != self.tool.origin:
                defects.append(
                    self._defect(
                        "redeem-url-cross-origin",
                        f"{self.tool.name}: the secret_reference {label!r} has a redeemUrl on "
                        f"{_where(url)}, not on {self.tool.origin} (the page that registered "
                        "the tool); the harness will not redeem it.",
                    )
                )
            ttl, expires_at = self._ttl(item.get("ttl"), label, defects)
            reference = SecretReference(
                label=label,
                origin=self.tool.origin,
                redeem_url=url,
                reference_id="" if raw_id is None else str(raw_id),
                ttl=ttl,
                expires_at=expires_at,
            )
        else:
            defects.append(
                self._defect(
                    "reference-without-url",
                    f"{self.tool.name}: the secret_reference {label!r} has no redeemUrl, so "
                    "it cannot be redeemed.",
                )
            )
        handle = self.keep(
            "secret_reference", path, label, item, reference=reference, defects=tuple(defects)
        )
        for text in (raw_url, raw_id, reference.redeem_url if reference else None):
            if isinstance(text, str | int) and not isinstance(text, bool):
                self.search_for(str(text), handle)
        info: dict[str, Any] = {"label": label, "handle": handle}
        ttl = item.get("ttl")
        if isinstance(ttl, int | float) and not isinstance(ttl, bool):
            info["ttl"] = ttl
        return {
            "type": "text",
            "text": f"[secret reference {label!r}, withheld as {handle}: only the user can "
            "reveal it]",
            "_meta": {REFERENCE_META_KEY: info},
        }

    def _ttl(
        self, raw: Any, label: str, defects: list[SiteDefect]
    ) -> tuple[float | None, float | None]:
        if raw is None:
            return None, None
        if isinstance(raw, bool) or not isinstance(raw, int | float) or raw < 0:
            defects.append(
                self._defect(
                    "ttl-invalid",
                    f"{self.tool.name}: the secret_reference {label!r} has a ttl that is not "
                    "a number of seconds ≥ 0; it is ignored.",
                )
            )
            return None, None
        ttl = float(raw)
        if ttl > self.ttl_cap:
            defects.append(
                self._defect(
                    "ttl-above-cap",
                    f"{self.tool.name}: the secret_reference {label!r} lives {ttl:g} s, above "
                    f"the cap of {self.ttl_cap:g} s; the harness expires it after "
                    f"{self.ttl_cap:g} s.",
                )
            )
        return ttl, self.vault.clock() + min(ttl, self.ttl_cap)

    def _defect(self, code: str, message: str) -> SiteDefect:
        return SiteDefect(code=code, message=message, tool=self.tool.name)

    def nested_references(self, value: Any, path: JsonPath) -> Any:
        """``value`` (``structuredContent``) with every ``secret_reference`` in it withheld."""
        if _is_reference(value):
            stand_in = self.reference(value, "/structuredContent" + pointer(path))
            info = stand_in["_meta"][REFERENCE_META_KEY]
            return {"type": "secret_reference", "label": info["label"], "handle": info["handle"]}
        if isinstance(value, dict):
            return {k: self.nested_references(v, (*path, k)) for k, v in value.items()}
        if isinstance(value, list):
            return [self.nested_references(v, (*path, i)) for i, v in enumerate(value)]
        return value

    # -- searching free text -----------------------------------------------------------

    def scrub(self, value: Any) -> Any:
        """``value`` with this result's withheld texts replaced by their handles in every
        string but ``type`` members and the handles themselves."""
        return self.texts.scrub(value)

    def withhold_in(
        self,
        value: Any,
        where: str,
        *,
        inside: bool = True,
        found: tuple[list[tuple[JsonPath, str]], list[tuple[JsonPath, str]], set[str]]
        | None = None,
    ) -> tuple[Any, bool]:
        """``value`` (JSON the outputSchema describes) with its x-sensitive values and keys
        replaced by handles; True when the value as a whole is sensitive (then untouched).
        ``where`` is the JSON pointer of ``value`` in the result; with ``inside`` False
        (JSON inside a text), every item is listed at ``where`` itself. ``found``: what
        :func:`~harness.stages.sensitivity.sensitive_and_keys` found in ``value`` already (it is not walked twice)."""
        schema = self.tool.output_schema or {}
        paths, keys, _ = found if found is not None else sensitive_and_keys(schema, value)
        if any(path == () for path, _ in paths):
            return value, True
        # Copy-on-write: only the containers on a path to a withheld value are copied;
        # ``value`` (the user's view) is never changed, and the rest is not copied.
        redacted = _Edited(value)

        def at(path: JsonPath) -> str:
            return where + pointer(path) if inside else where

        for path, label in paths:
            redacted.own(path[:-1])[path[-1]] = self.withhold(at(path), label, _get(value, path))
        for path, label in keys:  # deepest first: the paths above stay valid
            parent = redacted.own(path[:-1])
            handle = self.withhold(at(path[:-1]), label, path[-1])
            members = list(parent.items())
            parent.clear()
            parent.update((handle if k == path[-1] else k, v) for k, v in members)
        return redacted.value, False


def _where(url: str) -> str:
    scheme = scheme_of(url)
    return origin_of(url) if scheme in ("http", "https") else f"a {scheme or 'relative'} URL"


def redact(
    tool: Tool,
    result: CallToolResult,
    vault: Vault,
    *,
    call_id: str = "",
    ttl_cap: float = DEFAULT_TTL_CAP_S,
    whole: str | None = None,
    reading: Reading | None = None,
) -> Redaction:
    """The agent view of ``result`` (a result of ``tool``); what it withholds goes to ``vault``.
    ``whole``: withhold the whole result, for this reason, whatever the tool declares. The
    reading of the outputSchema keeps the schema budget: one that cannot be read in time
    withholds the whole result (fail closed). ``reading``: what :func:`read_ahead` read of
    this result in a worker thread (else the reading is done here, on this thread)."""
    if whole is None and reading is None:
        ahead = read_ahead(tool, result)
        whole, reading = (ahead, None) if isinstance(ahead, str) else (None, ahead)
    if whole is None:
        try:
            with within_budget():
                return _redact(tool, result, vault, call_id, ttl_cap, reading)
        except SchemaTimeout as late:
            whole = str(late)
    parts = _parts(result)
    parts.meta.pop(REDACTED_META_KEY, None)
    return _placeholder(_Run(tool, vault, call_id, ttl_cap), result, parts, whole)


_STRUCTURED = "/structuredContent"


def read_ahead(tool: Tool, result: CallToolResult) -> Reading | str:
    """What redaction will ask the outputSchema about ``result``, read within the schema
    budget (:class:`~harness.stages.sensitivity.Reading`), or why the whole result must be
    withheld: it could not be read in time. Touches no vault: run it off the event loop
    (:func:`~harness.schemas.off_loop`), where its budget holds up only its own call."""
    try:
        with within_budget():
            reading = Reading(tool.output_schema)
            if not reading.marked:
                return reading
            parts = _parts(result)
            structured = parts.structured
            readable = structured is not None and not parts.is_error
            if readable and not reading.sensitive_and_keys(_STRUCTURED, structured)[2]:
                reading.fits(_STRUCTURED, structured)
            for index, block in enumerate(parts.content):
                if not isinstance(block, dict) or block.get("type") != "text":
                    continue
                text = block.get("text")
                if not isinstance(text, str):
                    continue
                try:
                    parsed = json.loads(text)
                except ValueError:
                    continue
                if isinstance(parsed, dict | list) and not (
                    structured is not None and parsed == structured
                ):
                    reading.sensitive_and_keys(f"/content/{index}/text", parsed)
    except SchemaTimeout as late:
        return str(late)
    return reading


def _redact(
    tool: Tool,
    result: CallToolResult,
    vault: Vault,
    call_id: str,
    ttl_cap: float,
    reading: Reading | None,
) -> Redaction:
    hinted = tool.annotations.get("sensitiveHint") is True
    schema = tool.output_schema
    reading = reading or Reading(schema)
    marked = reading.marked
    if not (hinted or marked or _may_withhold(result)):
        return Redaction(result=result)  # the common case: nothing to read as JSON
    parts = _parts(result)
    nested = _contains_reference(parts.structured)
    references = nested or any(_is_reference(b) for b in parts.content)
    for_user = any(_for_user_only(b) for b in parts.content)
    if not (hinted or marked or references or for_user or REDACTED_META_KEY in parts.meta):
        return Redaction(result=result)

    run = _Run(tool, vault, call_id, ttl_cap, reading)
    parts.meta.pop(REDACTED_META_KEY, None)  # only the harness writes it
    structured = parts.structured
    reason: str | None = None
    if (hinted or marked) and parts.is_error:
        # Seed 000's MUST NOT has no exception for errors: a thrown or returned error of a
        # sensitive tool may quote the very secret ("key sk-… is invalid"), and its text
        # has no fields the schema could point at.
        reason = ERROR_REASON
    elif marked and schema is not None:
        reason, structured = _fields(run, schema, parts)
    elif hinted:
        reason = (
            "it declares sensitiveHint and its outputSchema marks no field x-sensitive"
            if schema is not None
            else "it declares sensitiveHint without an outputSchema"
        )
    if reason is not None:
        return _placeholder(run, result, parts, reason)

    if structured is not None and nested:
        structured = run.nested_references(structured, ())
    blocks = _content(run, parts)
    if for_user and structured is not None and not any(mirror for _, mirror in blocks):
        # A block for the user alone: structuredContent must not carry it to the agent by
        # the back door. It stays only when a block the agent may read mirrors it.
        run.keep(
            "user-content",
            "/structuredContent",
            "structured content beside content for the user only",
            structured,
        )
        structured = None
    agent_structured = run.scrub(structured)
    content = [
        _block(
            {**run.scrub(block), "text": _mirror(agent_structured)} if mirror else run.scrub(block)
        )
        for block, mirror in blocks
    ]
    meta = run.scrub(parts.meta)
    if run.withheld:
        meta[REDACTED_META_KEY] = _listing(run)
        run.notes.insert(0, _note(run))
    agent = CallToolResult(
        content=content,
        structured_content=agent_structured,
        is_error=parts.is_error,
        meta=meta or None,
    )
    return Redaction(result=agent, withheld=run.withheld, notes=run.notes, texts=run.texts)


def _fields(run: _Run, schema: dict[str, Any], parts: _Parts) -> tuple[str | None, Any]:
    """Withhold the marked fields of ``structuredContent``: (None, the redacted value), or
    (why the whole result must be withheld, None)."""
    structured = parts.structured
    if structured is None:
        # A success without structuredContent hides the fields somewhere the schema does
        # not say (errors never get here: they are withheld whole).
        if not parts.content:
            return None, None
        return "it has no structuredContent, so its x-sensitive fields cannot be found", None
    found = run.reading.sensitive_and_keys(_STRUCTURED, structured)
    unresolved = found[2]
    if unresolved:
        refs = ", ".join(sorted(unresolved))
        return f"its outputSchema has $refs the harness cannot follow ({refs})", None
    if not run.reading.fits(_STRUCTURED, structured):
        return "its structuredContent does not fit the tool's outputSchema", None
    redacted, whole = run.withhold_in(structured, _STRUCTURED, found=found)
    if whole:
        return "its whole outputSchema is x-sensitive", None
    return None, redacted


def _content(run: _Run, parts: _Parts) -> list[tuple[dict[str, Any], bool]]:
    """The agent's content blocks, each with whether it is the ``structuredContent`` mirror
    (rewritten from the redacted value). Scrubbing comes later, once every withheld
    value is known."""
    stand_ins: dict[int, dict[str, Any] | None] = {}
    for index, block in enumerate(parts.content):
        if _is_reference(block):
            stand_ins[index] = run.reference(block, f"/content/{index}")
        elif _for_user_only(block):
            handle = run.keep(
                "user-content", f"/content/{index}", "content for the user only", block
            )
            # The same words elsewhere in the result are the user's too.
            resource = block.get("resource")
            for text in (
                block.get("text"),
                resource.get("text") if isinstance(resource, dict) else None,
            ):
                if isinstance(text, str):
                    run.search_for(text, handle)
            stand_ins[index] = None
    blocks: list[tuple[dict[str, Any], bool]] = []
    for index, block in enumerate(parts.content):
        if index in stand_ins:
            stand_in = stand_ins[index]
            if stand_in is not None:
                blocks.append((stand_in, False))
        elif not isinstance(block, dict):
            blocks.append(({"type": "text", "text": _mirror(block)}, False))
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            text = _text(run, block["text"], parts.structured, f"/content/{index}/text")
            blocks.append(({**block, "text": text or ""}, text is None))
        else:
            blocks.append((block, False))
    return blocks


def _text(run: _Run, text: str, structured: Any, where: str) -> str | None:
    """A text block's text for the agent (before scrubbing); None when it mirrors
    ``structuredContent``. JSON text that the outputSchema describes is redacted like
    ``structuredContent``."""
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    if structured is not None and parsed == structured:
        return None
    schema = run.tool.output_schema
    if schema is None or not isinstance(parsed, dict | list):
        return text
    found = run.reading.sensitive_and_keys(where, parsed)
    if not found[0] and not found[1]:
        return text
    redacted, whole = run.withhold_in(parsed, where, inside=False, found=found)
    if whole:
        return run.withhold(where, "text", parsed)
    return _mirror(redacted)


def _block(data: dict[str, Any]) -> ContentBlock:
    try:
        return _CONTENT.validate_python(data)
    except ValidationError:
        # Not an MCP content block: the agent gets its (scrubbed) JSON as text.
        return TextContent(type="text", text=_mirror(data))


def _placeholder(run: _Run, result: CallToolResult, parts: _Parts, reason: str) -> Redaction:
    """The whole result withheld. Nothing the page wrote reaches the agent (not even its
    ``_meta``), except ``secret_reference`` stand-ins, which carry no secret."""
    handle = run.keep("result", "", f"result of {run.tool.name}", _dump(result))
    if reason == FULL_REASON:
        told = (
            f"The user agent withheld the result of {run.tool.name!r} from the agent as "
            f"{handle}: {reason}. Only the user can reveal it; a new session starts afresh."
        )
    elif reason == ERROR_REASON:
        told = (
            f"The tool {run.tool.name!r} failed. Its output is sensitive, and an error message "
            f"can quote a secret, so the user agent withheld the error from the agent as "
            f"{handle}. Only the user can reveal it."
        )
    else:
        told = (
            f"The result of {run.tool.name!r} is sensitive ({reason}), so the user agent "
            f"withheld it from the agent as {handle}. Only the user can reveal it."
        )
    content: list[ContentBlock] = [user_agent_text(told)]
    for index, block in enumerate(parts.content):
        if _is_reference(block):
            content.append(_block(run.scrub(run.reference(block, f"/content/{index}"))))
    meta = {REDACTED_META_KEY: _listing(run)}
    # What the page wrote in it is the user's alone, wherever else it shows up later (not
    # searched in this result: what the agent gets of it is the harness's own text).
    run.texts.withhold_result(
        {"content": parts.content, "structuredContent": parts.structured}, handle
    )
    run.notes.insert(0, f"redaction: withheld the whole result of {run.tool.name}: {reason}")
    agent = CallToolResult(content=content, is_error=parts.is_error, meta=meta)
    return Redaction(result=agent, withheld=run.withheld, notes=run.notes, texts=run.texts)


def _listing(run: _Run) -> list[dict[str, Any]]:
    # Labels may be page text (a reference's label): searched like any other text. Many
    # items share a label (one schema field, many values): each label is searched once.
    labels: dict[str, str] = {}
    return [
        {
            **item.model_dump(),
            "label": labels.get(item.label) or labels.setdefault(item.label, run.scrub(item.label)),
        }
        for item in run.withheld
    ]


def _note(run: _Run) -> str:
    listed = ", ".join(f"{item.path} ({item.kind})" for item in run.withheld)
    return f"redaction: withheld {len(run.withheld)} item(s) from the agent: {listed}"


def _dump(result: CallToolResult) -> dict[str, Any]:
    data = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    data.pop("resultType", None)
    return data


def withheld_items(result: CallToolResult) -> list[WithheldItem]:
    """What an agent view lists as withheld (empty when nothing was)."""
    listed = (result.meta or {}).get(REDACTED_META_KEY)
    items: list[WithheldItem] = []
    for entry in listed if isinstance(listed, list) else []:
        try:
            items.append(WithheldItem.model_validate(entry))
        except ValidationError:
            continue
    return items


# -- the stage -------------------------------------------------------------------------------


class Redactor:
    """The redaction stage of one session; what it withholds goes to the session's vault.

    Add :meth:`before_execute` as the *last* before-call stage and the redactor itself
    as the *last* after-call stage. A call stopped before its tool ran (bad arguments,
    a policy refusal) carries no tool output and passes unchanged.
    """

    def __init__(
        self, vault: Vault | Callable[[], Vault], *, ttl_cap: float = DEFAULT_TTL_CAP_S
    ) -> None:
        """``vault``: the agent session's, or a function that gives the current agent's."""
        self._vault = vault if callable(vault) else (lambda: vault)
        self.ttl_cap = ttl_cap
        """A ``secret_reference`` ttl above this many seconds is flagged and cut to it."""
        self._ran: set[str] = set()

    @property
    def vault(self) -> Vault:
        """The vault of the agent whose call this is."""
        return self._vault()

    async def before_execute(self, request: CallRequest) -> None:
        """Before-call stage: note that this call's tool is about to run."""
        self._ran.add(request.call_id)

    async def __call__(self, request: CallRequest, result: CallToolResult) -> CallToolResult:
        """After-call stage: keep the user view in the vault, return the agent view, with
        every text withheld so far in the session (from any of its agents) replaced by its
        handle — a tool that declares nothing sensitive may still repeat a marked value."""
        vault = self.vault
        if request.call_id in self._ran:
            self._ran.discard(request.call_id)
            vault.keep_user_view(request.call_id, result)
            if request.error_kind in PAGE_RESULT_KINDS:  # else: the harness's own words
                # The outputSchema's walk takes up to the schema budget: in a worker thread,
                # so that it holds up this call only, never every session's event loop.
                # What it found is withheld here, on the loop: the vault's and scrubber's
                # writes stay in one order, one result after another.
                ahead = (
                    await off_loop(read_ahead, request.tool, result)
                    if request.tool.output_schema is not None
                    else None
                )
                reading = ahead if isinstance(ahead, Reading) else None
                late = ahead if isinstance(ahead, str) else None
                full = vault.scrubber.full
                redaction = self._redact(
                    request, result, vault, FULL_REASON if full else late, reading
                )
                vault.scrubber.merge(redaction.texts)
                if vault.scrubber.full and not full:
                    # This result filled the session's search: what it withheld past the
                    # limit is searched for nowhere, in this result either.
                    redaction = self._redact(request, result, vault, FULL_REASON)
                request.notes.extend(redaction.notes)
                if redaction.withheld:
                    log.info("%s: withheld %d item(s)", request.tool.name, len(redaction.withheld))
                result = redaction.result
        return self._scrub_withheld(request, result, vault.scrubber)

    def _redact(
        self,
        request: CallRequest,
        result: CallToolResult,
        vault: Vault,
        whole: str | None,
        reading: Reading | None = None,
    ) -> Redaction:
        return redact(
            request.tool,
            result,
            vault,
            call_id=request.call_id,
            ttl_cap=self.ttl_cap,
            whole=whole,
            reading=reading or Reading(None if whole else request.tool.output_schema),
        )

    def _scrub_withheld(
        self, request: CallRequest, result: CallToolResult, scrubber: Scrubber
    ) -> CallToolResult:
        scrubbed = scrub_result(result, scrubber)
        if scrubbed is not result:
            request.notes.append(
                "values withheld earlier in this session were replaced by their handles"
            )
        return scrubbed
