"""URLs as the browser reads them: where urllib and Chromium disagree, the harness sides
with Chromium (a WHATWG parser), and what it sends on is what it checked."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from harness.stages.navigation import resolve_url
from harness.urls import http_url, origin_of, resolve


@pytest.mark.parametrize(
    ("url", "browser_origin"),
    [
        ("http://evil.test\\@good.test/", "http://evil.test"),  # "\" ends the host
        ("http://good.test\\evil.test/", "http://good.test"),
        ("http://user:pw@good.test:80/x", "http://good.test"),
        ("http://goo\td.test/", "http://good.test"),  # tabs and newlines are dropped
        ("HTTP://GOOD.test:443/", "http://good.test:443"),
        ("http://0x7f.0.0.1/", "http://127.0.0.1"),
        ("file:///etc/passwd", "null"),
        ("javascript:alert(1)", "null"),
        ("not a url", "null"),
    ],
)
def test_origins_are_the_browser_s(url: str, browser_origin: str) -> None:
    assert origin_of(url) == browser_origin


def test_the_differential_that_python_got_wrong() -> None:
    url = "http://evil.test\\@good.test/"
    assert urlsplit(url).hostname == "good.test"  # what the harness used to believe
    assert origin_of(url) == "http://evil.test"
    assert http_url(url) == "http://evil.test/@good.test/"  # and what is sent on


def test_links_resolve_like_the_browser_s_and_only_http_is_opened() -> None:
    assert resolve("http://a.test/x/y", "\\\\evil.test/z") == "http://evil.test/z"
    assert resolve_url("http://a.test/x", "/archive") == "http://a.test/archive"
    with pytest.raises(ValueError, match="javascript: URL"):
        resolve_url("http://a.test/", "javascript:alert(1)")
