"""The vault: what redaction withheld from the agent, kept for the user, in memory only.

One :class:`Vault` per agent session (a :class:`~harness.session.Session`), with the
session's :class:`~harness.stages.scrubbing.Scrubber`. Every withheld thing (a
sensitive field, a whole result, a ``secret_reference``, content meant for the user
alone) gets a *handle*: random, never derived from the value (no hash, no length, no
prefix of it), so the agent learns nothing from it. The vault also keeps each call's
user view (the result before redaction). Nothing here is ever written to disk or
logged: entries hide their values from ``repr``, and the session clears the vault
when it closes.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from mcp_types import CallToolResult
from pydantic import BaseModel, ConfigDict, Field

from harness.errors import UnknownHandle
from harness.stages.scrubbing import Scrubber

WithheldKind = Literal["field", "result", "secret_reference", "user-content"]
"""``field``: an ``x-sensitive`` value; ``result``: a whole result (``sensitiveHint``
without marked fields); ``secret_reference``: a reference the user redeems;
``user-content``: a content block annotated ``audience: ["user"]``."""

_HANDLE_WORD: dict[WithheldKind, str] = {
    "field": "secret",
    "result": "result",
    "secret_reference": "ref",
    "user-content": "user",
}


def new_handle(kind: WithheldKind) -> str:
    """A fresh opaque handle: ``wmh-<kind>-`` and 16 random hex digits."""
    return f"wmh-{_HANDLE_WORD[kind]}-{secrets.token_hex(8)}"


class SiteDefect(BaseModel):
    """Something a site does against the sensitive-output contract (seed 000).

    Found while redacting (a ttl above the cap, a cross-origin ``redeemUrl``) or while
    redeeming (a 200 without ``Cache-Control: no-store``). Defects never carry values.
    """

    model_config = ConfigDict(frozen=True)

    code: str
    message: str
    tool: str
    handle: str | None = None


@dataclass(frozen=True)
class SecretReference:
    """A page's ``secret_reference``, as the user agent keeps it for redemption."""

    label: str
    origin: str
    """The origin of the page that registered the tool: the only one ``redeem_url`` may use."""
    redeem_url: str = field(repr=False)
    """Absolute: the page's ``redeemUrl`` resolved against the document's URL."""
    reference_id: str = field(repr=False)
    ttl: float | None = None
    expires_at: float | None = None
    """On the vault's clock; ``None`` when the page gave no usable ttl."""


@dataclass(frozen=True)
class VaultEntry:
    """One withheld thing: its handle, what it is, and (hidden from ``repr``) its value."""

    handle: str
    kind: WithheldKind
    label: str
    tool: str
    call_id: str
    path: str
    """JSON pointer into the tool's own result (the user view) where it was."""
    value: Any = field(default=None, repr=False)
    reference: SecretReference | None = None
    defects: tuple[SiteDefect, ...] = ()


class Revealed(BaseModel):
    """What :meth:`Session.reveal` gives the user: the value behind a handle.

    ``value`` is a string for a redeemed reference, the field's JSON value for a
    field, and the MCP JSON of the result or content block otherwise. It is left out
    of ``repr``, so printing a :class:`Revealed` by accident shows no secret.
    """

    model_config = ConfigDict(frozen=True)

    handle: str
    kind: WithheldKind
    label: str
    value: Any = Field(repr=False)
    defects: list[SiteDefect] = Field(default_factory=list)


class Vault:
    """Per-session, in-memory store of withheld values and user views, by handle."""

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, scrubber: Scrubber | None = None
    ) -> None:
        self.clock = clock
        """Seconds, for ttl bookkeeping; replaceable in tests."""
        self.scrubber = scrubber if scrubber is not None else Scrubber()
        """The texts withheld, to be replaced wherever an agent would see them: the
        session's, shared by the vaults of all its agent sessions (a vault made alone
        has its own, cleared with it)."""
        self._owns_scrubber = scrubber is None
        self.defects: list[SiteDefect] = []
        """Every site defect seen in this session, in order."""
        self._entries: dict[str, VaultEntry] = {}
        self._user_views: dict[str, CallToolResult] = {}

    def put(
        self,
        kind: WithheldKind,
        *,
        label: str,
        tool: str,
        call_id: str,
        path: str,
        value: Any = None,
        reference: SecretReference | None = None,
        defects: tuple[SiteDefect, ...] = (),
    ) -> VaultEntry:
        """Keep one withheld thing under a new handle and return its entry."""
        handle = new_handle(kind)
        while handle in self._entries:  # astronomically unlikely, but handles must be unique
            handle = new_handle(kind)
        entry = VaultEntry(
            handle=handle,
            kind=kind,
            label=label,
            tool=tool,
            call_id=call_id,
            path=path,
            value=value,
            reference=reference,
            defects=tuple(d.model_copy(update={"handle": handle}) for d in defects),
        )
        self._entries[handle] = entry
        self.scrubber.note_handle(handle)
        self.defects.extend(entry.defects)
        return entry

    def get(self, handle: str) -> VaultEntry:
        """The entry for ``handle``, or :class:`~harness.errors.UnknownHandle`."""
        entry = self._entries.get(handle)
        if entry is None:
            raise UnknownHandle(handle)
        return entry

    def entries(self) -> list[VaultEntry]:
        """Every entry, oldest first."""
        return list(self._entries.values())

    def keep_user_view(self, call_id: str, result: CallToolResult) -> None:
        """Keep a call's result as the tool gave it (before redaction), for the user."""
        self._user_views[call_id] = result

    def user_view(self, call_id: str) -> CallToolResult | None:
        """A call's result before redaction, or None (unknown call, or cleared)."""
        return self._user_views.get(call_id)

    def clear(self) -> None:
        """Forget every entry and user view (the session closes). A shared scrubber stays:
        its session clears it, and what one agent had withheld stays withheld from the rest."""
        self._entries.clear()
        self._user_views.clear()
        if self._owns_scrubber:
            self.scrubber.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, handle: object) -> bool:
        return handle in self._entries

    def __repr__(self) -> str:
        return f"<Vault: {len(self._entries)} entries, {len(self._user_views)} user views>"
