"""What a session withheld from its agents, withheld from the questions it asks too.

A question shows what a page and the agent wrote — the page's own question, a form's title,
a field's labels, defaults and choices, the agent's arguments, URLs — and any of it may hold
a value the session withheld (a key one tool returned, quoted by the next tool's
``requestUserInput``). Whoever answers sees the question: an MCP client (the agent's host,
which may hand it to its model or answer it by itself), a terminal whose output may be
logged, a browser tab; and the session's record of it goes into ``call --json`` and traces.
So a session asks through a :class:`WithholdingRecorder`: every handler gets
:func:`withheld_from` the question — each text a page or the agent wrote in it passed
through the session's scrubber (:class:`~harness.stages.scrubbing.Scrubber`), as results,
tool lists and the console are — and the record keeps that question, the answer's values
scrubbed too. The harness's own words (``message``, ``notes``, ``rule``) stay as written:
answers files match them.

An answer that leaves a value as it was shown (a default, the agent's value: now a handle)
gives the page that value as it was written (:func:`restored`): the page gets back its own
value, and whoever answered never saw it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from harness.elicitation.base import (
    ElicitationHandler,
    ElicitationRecord,
    ElicitationRequest,
    ElicitationResult,
    RecordingHandler,
)
from harness.elicitation.form import is_sensitive, properties_of

Scrub = Callable[[Any], Any]
"""A session's scrubber (:meth:`~harness.stages.scrubbing.Scrubber.scrub`): a JSON value with
every text withheld in the session replaced by its handle; the value itself when none is."""


class WithholdingRecorder(RecordingHandler):
    """A session's handler: a :class:`~harness.elicitation.base.RecordingHandler` that asks
    ``inner``, and records, every question :func:`withheld_from` it (``scrub``: the
    session's), the answer's values and reason scrubbed in the record, and gives the asker
    the answer :func:`restored`."""

    def __init__(
        self, inner: ElicitationHandler, records: list[ElicitationRecord], scrub: Scrub
    ) -> None:
        super().__init__(inner, records)
        self.scrub = scrub

    async def elicit(self, request: ElicitationRequest) -> ElicitationResult:
        """Ask and record the question as it may be shown; answer the asker's own."""
        shown = withheld_from(request, self.scrub)
        return restored(await super().elicit(shown), request, shown)

    def record(
        self,
        request: ElicitationRequest,
        result: ElicitationResult,
        *,
        at: datetime,
        duration_ms: float,
    ) -> ElicitationRecord:
        """The record, with what the answer said scrubbed (a person may type anything)."""
        record = super().record(request, result, at=at, duration_ms=duration_ms)
        said = {"values": self.scrub(record.values), "reason": self.scrub(record.reason)}
        return record.model_copy(update=said)


def withheld_from(request: ElicitationRequest, scrub: Scrub) -> ElicitationRequest:
    """``request`` as it may be shown: every text a page or the agent wrote in it scrubbed
    (who asks and where a navigation goes, the tool's name, the quoted texts, the data's
    URLs, the policy's facts, the form's schema and the values shown in it); ``request``
    itself when nothing in it was withheld."""
    quoted = [q.model_copy(update={"text": scrub(q.text)}) for q in request.quoted]
    update: dict[str, Any] = {
        "origin": scrub(request.origin),
        "destination": scrub(request.destination),
        "tool": scrub(request.tool),
        "url": scrub(request.url),
        "attribution": scrub(request.attribution),
        "facts": {name: scrub(value) for name, value in request.facts.items()},
        "requested_schema": _marked_as_before(request, scrub(request.requested_schema)),
        "prefilled": scrub(request.prefilled),
    }
    if any(q.text is not was.text for q, was in zip(quoted, request.quoted, strict=True)):
        update["quoted"] = quoted
    if update["facts"] == request.facts:  # a new dict, equal unless a value was scrubbed
        del update["facts"]
    changed = {name: value for name, value in update.items() if value is not getattr(request, name)}
    return request.model_copy(update=changed) if changed else request


def _marked_as_before(request: ElicitationRequest, schema: dict[str, Any]) -> dict[str, Any]:
    """The scrubbed ``schema`` with every field ``request`` marks sensitive still marked: a
    withheld text that is also a word of a mark (``"format": "password"``) must not unmark
    a field, whose value would then be recorded, and shown as it is typed."""
    if schema is request.requested_schema:
        return schema
    shown = properties_of(schema)
    unmarked = [
        name
        for (_, prop), name in zip(request.fields.items(), shown, strict=False)
        if is_sensitive(prop) and not is_sensitive(shown[name])
    ]
    if not unmarked:
        return schema
    properties = dict(schema["properties"])
    for name in unmarked:
        properties[name] = {**properties[name], "x-sensitive": True}
    return {**schema, "properties": properties}


def restored(
    answer: ElicitationResult, asked: ElicitationRequest, shown: ElicitationRequest
) -> ElicitationResult:
    """``answer`` to ``shown`` (:func:`withheld_from` ``asked``) as ``asked``'s asker gets
    it: each field under its own name, and a value that comes back as it was shown as
    ``asked`` holds it there (its page's default, the agent's value)."""
    if shown is asked or answer.content is None:
        return answer
    names = dict(zip(shown.fields, asked.fields, strict=False))
    as_shown = shown.starting_values()
    as_written = asked.starting_values()
    content: dict[str, Any] = {}
    for name, value in answer.content.items():
        own = names.get(name, name)
        if name in as_shown and own in as_written and _same(value, as_shown[name]):
            value = as_written[own]
        content[own] = value
    return answer.model_copy(update={"content": content})


def _same(a: Any, b: Any) -> bool:
    """JSON equality (``true`` is not ``1``)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
