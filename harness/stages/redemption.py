"""Revealing withheld values to the user, and redeeming secret references (seed 000 §4a).

This is the user's side of redaction: :meth:`Session.reveal` calls :func:`reveal`,
never an agent. A withheld field, result or user-only block comes out of the vault.
A ``secret_reference`` is redeemed the way the seed's contract says:

- GET only, to a ``redeemUrl`` on the origin of the page that registered the tool; any
  other URL is refused before a request is sent;
- with the browser context's cookies (the page's login), through Playwright's
  ``APIRequestContext``; a redirect is followed only within that origin;
- 200 ``{"value": string}`` → the value (a 200 without ``Cache-Control: no-store`` is
  flagged as a site defect); 410 → used or expired; 401/403 → not authorized;
  404 → not found; 429 → rate limited, with ``Retry-After`` (never retried here);
  anything else → an error naming the status;
- a reference past its ttl is refused without a request.
"""

from __future__ import annotations

import email.utils
import json
import logging
import time
from dataclasses import dataclass

from mcp_types import CallToolResult
from playwright.async_api import APIRequestContext, APIResponse
from playwright.async_api import Error as PlaywrightError

from harness.errors import (
    RedemptionFailed,
    RedemptionRateLimited,
    RedemptionRefused,
    RedemptionUnauthorized,
    ReferenceExpired,
    ReferenceGone,
    ReferenceNotFound,
    RevealError,
)
from harness.stages.redaction import WithheldItem, withheld_items
from harness.stages.vault import Revealed, SecretReference, SiteDefect, Vault, VaultEntry
from harness.urls import http_url, origin_of, resolve

log = logging.getLogger("harness.stages.redemption")

MAX_REDIRECTS = 5
"""Same-origin redirects followed before giving up."""
REDEEM_TIMEOUT_MS = 15_000
"""How long one redemption request may take."""
_REDIRECTS = (301, 302, 303, 307, 308)


async def reveal(vault: Vault, handle: str, http: APIRequestContext) -> Revealed:
    """The value behind ``handle``: from the vault, or redeemed from the site.

    Raises :class:`~harness.errors.UnknownHandle`, or another
    :class:`~harness.errors.RevealError` saying why a reference could not be redeemed.
    """
    entry = vault.get(handle)
    if entry.kind != "secret_reference":
        return Revealed(
            handle=handle,
            kind=entry.kind,
            label=entry.label,
            value=entry.value,
            defects=list(entry.defects),
        )
    if entry.reference is None:
        raise RedemptionRefused(
            f"The secret reference {entry.label!r} (from {entry.tool}) has no redeemUrl, so "
            "it cannot be redeemed; the site has to fix the tool."
        )
    value, defects = await redeem(entry, entry.reference, vault, http)
    vault.defects.extend(defects)
    for defect in defects:
        log.info("site defect (%s): %s", defect.code, defect.message)
    return Revealed(
        handle=handle,
        kind=entry.kind,
        label=entry.label,
        value=value,
        defects=[*entry.defects, *defects],
    )


async def redeem(
    entry: VaultEntry, reference: SecretReference, vault: Vault, http: APIRequestContext
) -> tuple[str, list[SiteDefect]]:
    """Redeem one reference: its value and the site defects seen on the way."""
    what = f"The secret reference {entry.label!r} (from {entry.tool})"
    if reference.expires_at is not None and vault.clock() >= reference.expires_at:
        raise ReferenceExpired(
            f"{what} expired (its ttl was {reference.ttl:g} s); the harness did not ask the "
            "site. Call the tool again for a new reference."
        )
    # The URL the HTTP client gets is the one checked: parsed and serialized by the same
    # WHATWG parser the client (and the browser) uses, so no parser differential can
    # make a URL look same-origin here and go elsewhere there.
    url = http_url(reference.redeem_url) or reference.redeem_url
    where = origin_of(url)
    if where != reference.origin:
        raise RedemptionRefused(
            f"{what} points to {_describe(where, url)}, not to {reference.origin} (the page "
            "that registered the tool), so the harness refused to redeem it and sent no "
            "request. Only the site can fix this."
        )
    for _ in range(MAX_REDIRECTS + 1):
        response = await _get(http, url, what)
        try:
            if response.status not in _REDIRECTS:
                return await _answer(response, what, entry)
            location = response.headers.get("location")
            if not location:
                raise RedemptionFailed(
                    f"{what}: the site answered HTTP {response.status} without a Location.",
                    response.status,
                )
            url = resolve(url, location) or location
            if origin_of(url) != reference.origin:
                raise RedemptionRefused(
                    f"{what}: the site redirected to {_describe(origin_of(url), url)}; a "
                    f"redirect away from {reference.origin} is not followed."
                )
        finally:
            await response.dispose()
    raise RedemptionFailed(f"{what}: more than {MAX_REDIRECTS} redirects; gave up.")


async def _get(http: APIRequestContext, url: str, what: str) -> APIResponse:
    try:
        return await http.get(
            url,
            headers={"Accept": "application/json"},
            max_redirects=0,
            timeout=REDEEM_TIMEOUT_MS,
        )
    except PlaywrightError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RedemptionFailed(
            f"{what}: the site could not be reached ({first}). Is it still running?"
        ) from exc


async def _answer(
    response: APIResponse, what: str, entry: VaultEntry
) -> tuple[str, list[SiteDefect]]:
    status = response.status
    if status == 200:
        try:
            body = json.loads(await response.text())
        except ValueError:
            body = None
        value = body.get("value") if isinstance(body, dict) else None
        if not isinstance(value, str):
            raise RedemptionFailed(
                f'{what}: the site answered 200 but not with {{"value": string}}.', status
            )
        defects = []
        if not _no_store(response.headers.get("cache-control", "")):
            defects.append(
                SiteDefect(
                    code="redeem-missing-no-store",
                    message=(
                        f"{entry.tool}: the redemption endpoint for {entry.label!r} answered "
                        "without Cache-Control: no-store, so the secret may be cached."
                    ),
                    tool=entry.tool,
                    handle=entry.handle,
                )
            )
        return value, defects
    if status == 410:
        raise ReferenceGone(
            f"{what} was already redeemed or has expired (HTTP 410). Call the tool again for "
            "a new one."
        )
    if status in (401, 403):
        raise RedemptionUnauthorized(
            f"{what} was refused: not authorized (HTTP {status}). Redemption sends this "
            "session's cookies; log in to the site in this session and try again."
        )
    if status == 404:
        raise ReferenceNotFound(f"{what} is unknown to the site (HTTP 404).")
    if status == 429:
        retry_after = _retry_after(response.headers.get("retry-after"))
        when = f"in {retry_after:g} s" if retry_after is not None else "later"
        raise RedemptionRateLimited(
            f"{what}: the site is rate limiting redemptions (HTTP 429); try again {when}.",
            retry_after,
        )
    raise RedemptionFailed(f"{what}: the site answered HTTP {status}.", status)


def _no_store(cache_control: str) -> bool:
    return any(part.strip().lower() == "no-store" for part in cache_control.split(","))


def _retry_after(header: str | None) -> float | None:
    """``Retry-After`` in seconds: delta-seconds or an HTTP date."""
    if not header:
        return None
    text = header.strip()
    if text.isdecimal():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _describe(origin: str, url: str) -> str:
    return origin if origin != "null" else f"a URL that is not http(s) ({url.split(':', 1)[0]}:)"


@dataclass(frozen=True)
class RevealAttempt:
    """One withheld item of a result and what revealing it gave: a value or an error."""

    item: WithheldItem
    revealed: Revealed | None = None
    error: RevealError | None = None


async def reveal_all(
    vault: Vault, result: CallToolResult, http: APIRequestContext
) -> list[RevealAttempt]:
    """Reveal every item an agent view lists as withheld, in order; failures are kept too."""
    attempts: list[RevealAttempt] = []
    for item in withheld_items(result):
        try:
            attempts.append(RevealAttempt(item, revealed=await reveal(vault, item.handle, http)))
        except RevealError as exc:
            attempts.append(RevealAttempt(item, error=exc))
    return attempts
