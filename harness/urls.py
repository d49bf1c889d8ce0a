"""URLs as the browser reads them: one WHATWG parser for every origin decision.

Python's ``urllib.parse`` and the browser disagree on URLs a page or an agent can
write: a backslash ends the host for the browser (``http://a.test\\@b.test/`` goes to
``a.test``; urllib reads ``b.test``), and so do tabs, newlines, userinfo and
percent-encoded dots. An origin check made with one parser and a request made with
another is a check of a different URL. So every URL the harness checks is parsed
here with ada (a WHATWG URL Standard parser, as Chromium and Playwright's Node side
parse), and what is then sent on — to ``page.goto``, to the HTTP client — is the
serialization this parser produced, which every WHATWG parser reads the same way.

Navigation consent (:mod:`harness.stages.navigation`), secret redemption
(:mod:`harness.stages.redemption`, :mod:`harness.stages.redaction`), seed-dialect
submissions (:mod:`harness.declarative.invocation`), frame origins and the origins an
answers file names (:mod:`harness.elicitation.answers`) use these functions and no other
parser.

May import: nothing of the harness (it sits at the bottom, so that every layer decides
origins with it).
"""

from __future__ import annotations

from functools import lru_cache

from ada_url import URL, join_url

HTTP_SCHEMES = ("http:", "https:")


def parse(url: str) -> URL | None:
    """The WHATWG parse of an absolute URL, or None when the browser would refuse it."""
    try:
        return URL(url)
    except ValueError:
        return None


@lru_cache(maxsize=4096)  # a pure function of the text, asked for on every call
def origin_of(url: str) -> str:
    """The serialized origin of a URL, as the browser computes it.

    ``null`` for anything that is not http(s) (about:blank, data:, file:, javascript:)
    and for text that is not a URL.
    """
    parsed = parse(url)
    if parsed is None or parsed.protocol not in HTTP_SCHEMES:
        return "null"
    return str(parsed.origin)


def worker_origin(url: str) -> str:
    """The origin of a worker whose script is at ``url``, as the browser gives it: an
    http(s) script's own; a ``blob:`` script's, the origin of the document that made it
    (the URL parser's reading: ``blob:http://a.test/…`` is ``http://a.test``'s); ``null``
    for anything else (a ``data:`` worker's origin is opaque)."""
    parsed = parse(url)
    if parsed is None or parsed.protocol not in (*HTTP_SCHEMES, "blob:"):
        return "null"
    origin = str(parsed.origin)
    return origin if origin_of(origin) == origin else "null"


def resolve(base: str, url: str) -> str | None:
    """``url`` resolved against ``base`` the way the browser resolves a link, serialized;
    None when the result is not a URL."""
    try:
        return str(join_url(base, url))
    except ValueError:
        return None


def http_url(url: str) -> str | None:
    """The serialized URL when it is http(s), else None."""
    parsed = parse(url)
    if parsed is None or parsed.protocol not in HTTP_SCHEMES:
        return None
    return str(parsed.href)


def scheme_of(url: str) -> str:
    """The scheme without its colon (``""`` for text that is not a URL)."""
    parsed = parse(url)
    return "" if parsed is None else str(parsed.protocol).rstrip(":")
