"""A value withheld earlier in the session comes back percent-encoded the way the web
platform writes it — ``encodeURIComponent``, ``encodeURI``, the URL Standard's
serializer (``new URL(...).href``, ``location``, the page's URL the harness quotes after
``history.replaceState``), ``URLSearchParams`` — and reaches the agent as its handle.
Found from outside: the scrubber searched for Python's ``quote()``/``quote_plus()``
forms only, so ``HXCANARY maple river stone (7)!`` passed as
``HXCANARY%20maple%20river%20stone%20(7)!``.

The reference encoders below are written from the standards' own definitions (the URL
Standard's percent-encode sets, ECMA-262's ``encodeURIComponent``/``encodeURI``), apart
from the harness's; the page test runs the browser's own encoders.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable

import mcp.types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.client.client import Client

from harness import Harness
from harness.mcp.server import McpBridge
from harness.stages.scrubbing import HANDLE, Scrubber
from harness.stages.vault import new_handle
from tests.conftest import serve_pages

HANDLE_1 = new_handle("field")
PHRASE = "HXCANARY maple river stone (7)!"
PUNCTUATION = "HXCANARY-ünï €😀 !\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ end"

# The URL Standard (url.spec.whatwg.org, "Percent-encoded bytes"): each set is the C0
# controls, every code point above U+007E, and these.
FRAGMENT = ' "<>`'
QUERY = ' "#<>'
SPECIAL_QUERY = QUERY + "'"
PATH = QUERY + "?^`{}"
USERINFO = PATH + "/:;=@[\\]|"
COMPONENT = USERINFO + "$%&+,"
FORM_URLENCODED = COMPONENT + "!'()~"
# ECMA-262: what encodeURIComponent and encodeURI leave as they are.
URI_UNESCAPED = string.ascii_letters + string.digits + "-_.!~*'()"
URI_RESERVED = ";/?:@&=+$,"


def utf8_percent_encode(
    text: str, encode_set: str, *, space_as_plus: bool = False, digits: str = "%{:02X}"
) -> str:
    """The URL Standard's "UTF-8 percent-encode" of ``text`` using a percent-encode set."""
    out = []
    for byte in text.encode("utf-8"):
        if space_as_plus and byte == 0x20:
            out.append("+")
        elif byte < 0x20 or byte > 0x7E or chr(byte) in encode_set:
            out.append(digits.format(byte))
        else:
            out.append(chr(byte))
    return "".join(out)


def ecma_encode(text: str, unescaped: str) -> str:
    """ECMA-262's Encode: every UTF-8 byte escaped but the code points ``unescaped``."""
    return "".join(
        chr(byte) if chr(byte) in unescaped else f"%{byte:02X}" for byte in text.encode("utf-8")
    )


ENCODERS: dict[str, Callable[[str], str]] = {
    "encodeURIComponent": lambda text: ecma_encode(text, URI_UNESCAPED),
    "encodeURI": lambda text: ecma_encode(text, URI_UNESCAPED + URI_RESERVED + "#"),
    "C0 control percent-encode set": lambda text: utf8_percent_encode(text, ""),
    "fragment percent-encode set": lambda text: utf8_percent_encode(text, FRAGMENT),
    "query percent-encode set": lambda text: utf8_percent_encode(text, QUERY),
    "special-query percent-encode set": lambda text: utf8_percent_encode(text, SPECIAL_QUERY),
    "path percent-encode set": lambda text: utf8_percent_encode(text, PATH),
    "userinfo percent-encode set": lambda text: utf8_percent_encode(text, USERINFO),
    "component percent-encode set": lambda text: utf8_percent_encode(text, COMPONENT),
    "application/x-www-form-urlencoded": lambda text: utf8_percent_encode(
        text, FORM_URLENCODED, space_as_plus=True
    ),
    # Chromium's serializer escapes a little more than the Standard (measured): | in paths,
    # ' in a username or password.
    "Chromium's path": lambda text: utf8_percent_encode(text, PATH + "|"),
    "Chromium's userinfo": lambda text: utf8_percent_encode(text, USERINFO + "'"),
}


def withholding(*texts: str) -> Scrubber:
    scrubber = Scrubber()
    for text in texts:
        scrubber.withhold(text, HANDLE_1)
    return scrubber


@pytest.mark.parametrize("encoder", sorted(ENCODERS))
@pytest.mark.parametrize("secret", [PHRASE, PUNCTUATION])
def test_a_withheld_value_is_found_as_the_web_platform_percent_encodes_it(
    encoder: str, secret: str
) -> None:
    shown = ENCODERS[encoder](secret)
    assert withholding(secret).text(f"see {shown} now") == f"see {HANDLE_1} now", shown


def test_a_percent_encoded_value_is_found_with_hex_digits_in_either_case() -> None:
    # Browsers write upper case; some servers lower case (.NET's UrlEncode).
    scrubber = withholding(PUNCTUATION)
    for encoder in ("encodeURIComponent", "application/x-www-form-urlencoded"):
        upper = ENCODERS[encoder](PUNCTUATION)
        lower = utf8_percent_encode(
            PUNCTUATION,
            COMPONENT if encoder == "encodeURIComponent" else FORM_URLENCODED,
            space_as_plus=encoder != "encodeURIComponent",
            digits="%{:02x}",
        )
        assert lower != upper and lower.lower() == upper.lower()
        assert scrubber.text(f"<{lower}>") == f"<{HANDLE_1}>", lower


def test_a_url_form_with_a_quote_or_backslash_is_found_json_escaped_too() -> None:
    # The query and C0 sets leave a backslash (and the C0 set a quote) as they are; a URL
    # in JSON text (a text block holding JSON) escapes them again.
    secret = 'HXCANARY "quoted" back\\slash ü'
    scrubber = withholding(secret)
    for shown in (utf8_percent_encode(secret, QUERY), utf8_percent_encode(secret, "")):
        assert "\\" in shown
        block = {"type": "text", "text": json.dumps({"url": f"http://h.test/?p={shown}"})}
        scrubbed = scrubber.scrub(block)
        assert json.loads(scrubbed["text"]) == {"url": f"http://h.test/?p={HANDLE_1}"}
        assert scrubber.scrub({"rows": [block]}) == scrubber._walk({"rows": [block]})


def test_a_value_is_found_as_the_url_parser_reads_it() -> None:
    # The URL parser drops tabs and newlines from a URL string, and reads a backslash in an
    # http(s) path as a slash: new URL("/p/" + secret, location).
    secret = "HXCANARY maple\nriver\\stone"
    scrubber = withholding(secret)
    for shown in ("HXCANARY%20mapleriver\\stone", "HXCANARY%20mapleriver/stone"):
        assert scrubber.text(f"/p/{shown}") == f"/p/{HANDLE_1}", shown


def test_a_value_under_four_characters_is_searched_for_in_no_form() -> None:
    # Found with the fix: "a b" was not searched for, but "a%20b" was.
    scrubber = withholding("a b", "é!", "x|y")
    assert not scrubber
    assert scrubber.text("a%20b a+b %C3%A9! x%7Cy") == "a%20b a+b %C3%A9! x%7Cy"


def test_no_form_of_a_whole_result_is_shorter_than_its_texts_must_be() -> None:
    # A whole withheld result gives its texts of 8 characters or more; the URL parser's
    # reading of one (no tabs or newlines) must not make a short word of it a secret.
    scrubber = Scrubber()
    scrubber.withhold_result({"content": [{"type": "text", "text": "\n\nread\n\n"}]}, HANDLE_1)
    assert scrubber.text("read the thread") == "read the thread"
    assert scrubber.text("?q=%0A%0Aread%0A%0A") == f"?q={HANDLE_1}"


# Spaces, every ASCII punctuation character, controls, non-ASCII (two, three and four UTF-8
# bytes), letters and digits; not "w" (a handle's start) nor the frame "¶".
TEXTS = st.text(
    alphabet=st.sampled_from([*" \t\n\x01\x7féü€😀HXab0", *string.punctuation]),
    min_size=4,
    max_size=16,
)


@settings(max_examples=300, deadline=None)
@given(text=TEXTS, encoder=st.sampled_from(sorted(ENCODERS)), lower=st.booleans())
def test_any_text_percent_encoded_by_any_encoder_is_replaced(
    text: str, encoder: str, lower: bool
) -> None:
    scrubber = withholding(text)
    shown = ENCODERS[encoder](text)
    if lower and "%" not in text:  # each "%" starts an escape: its hex digits in lower case
        first, *escapes = shown.split("%")
        shown = "%".join([first, *(part[:2].lower() + part[2:] for part in escapes)])
    assert scrubber.text(f"¶{shown}¶") == f"¶{HANDLE_1}¶", shown
    in_json = {"text": json.dumps({"url": shown})}  # a URL in JSON text, escaped again
    assert json.loads(scrubber.scrub(in_json)["text"]) == {"url": HANDLE_1}


# -- in the browser ------------------------------------------------------------------------

SECRET = "HXCANARY-maple river (7)! it's ü|^"
PAGE = """<!doctype html><meta charset=utf-8><script>
const SECRET = SECRET_JSON;
document.modelContext.registerTool({name: "show_recovery_phrase",
  description: "shows the account's recovery phrase",
  inputSchema: {type: "object", properties: {}},
  annotations: {sensitiveHint: true, readOnlyHint: true},
  execute: async () => {
    history.replaceState(null, "", "?p=" + SECRET);  // the page's URL holds it now
    return {phrase: SECRET};
  }});
document.modelContext.registerTool({name: "share_link", description: "declares nothing",
  inputSchema: {type: "object", properties: {}},
  execute: async () => {
    const user = new URL(location.href);
    user.username = SECRET;
    return {
      component: "/recover?p=" + encodeURIComponent(SECRET),
      uri: encodeURI("/recover?p=" + SECRET),
      query: new URL("/p?x=" + SECRET, location).href,
      path: new URL("/p/" + SECRET, location).href,
      fragment: new URL("/p#" + SECRET, location).href,
      user: user.href,
      form: new URLSearchParams({x: SECRET}).toString(),
      location: location.href,
    };
  }});
</script>""".replace("SECRET_JSON", json.dumps(SECRET))
OTHER = """<!doctype html><meta charset=utf-8><script>
history.replaceState(null, "", "/other?p=" + SECRET_JSON);
</script>""".replace("SECRET_JSON", json.dumps(SECRET))
# The browser's own encoders, for texts with every ASCII punctuation character, non-ASCII,
# tabs and newlines: run in the page, their results searched with each text withheld.
BROWSER_TEXTS = [
    PHRASE,
    SECRET,
    PUNCTUATION,
    "HXCANARY\ttab\nnewline\\back",
]
BROWSER_ENCODERS = """(text) => {
  const at = (base, set) => { const url = new URL(base); set(url); return url.href; };
  return [
    encodeURIComponent(text), encodeURI(text), new URLSearchParams({x: text}).toString(),
    at("http://h.test/", (u) => { u.pathname = text; }),
    at("http://h.test/", (u) => { u.search = text; }),
    at("http://h.test/", (u) => { u.hash = text; }),
    at("http://h.test/", (u) => { u.username = text; }),
    at("http://h.test/", (u) => { u.password = text; }),
    at("foo://h.test/", (u) => { u.pathname = text; }),
    at("foo://h.test/", (u) => { u.search = text; }),
  ];
}"""


async def test_the_browser_s_own_encoders_write_no_form_the_scrubber_misses(
    backend_harness: Harness,
) -> None:
    async with serve_pages({"": PAGE}) as origin, await backend_harness.open(origin) as session:
        for text in BROWSER_TEXTS:
            scrubber = withholding(text)
            for shown in await session.page.evaluate(BROWSER_ENCODERS, text):
                assert "HXCANARY" not in scrubber.text(shown), shown


async def test_a_later_tool_and_the_page_s_url_give_the_agent_the_handle_not_the_value(
    backend_harness: Harness,
) -> None:
    # A later tool hands the withheld value on encoded; the harness's own messages quote
    # the page's URL after history.replaceState put it there.
    pages = {"": PAGE, "other": OTHER}
    async with serve_pages(pages) as origin, await backend_harness.open(origin) as session:
        bridge = McpBridge(session)
        async with bridge, Client(bridge.server, mode="legacy") as client:
            seen = [await client.call_tool("show_recovery_phrase", {})]
            seen.append(shared := await client.call_tool("share_link", {}))
            seen.append(reloaded := await client.call_tool("harness.reload", {}))
            seen.append(await client.call_tool("harness.navigate", {"url": f"{origin}/other"}))
    texts = [result.model_dump_json() for result in seen]
    assert [result.is_error for result in seen] == [False] * 4, texts
    assert "Reloaded" in texts[2] and "Navigated" in texts[3], texts
    leaked = [text for text in texts if "HXCANARY" in text]
    assert leaked == []
    framed = _text(shared)  # no outputSchema: the page's JSON, in a text block
    links = json.loads(framed[framed.index("{") : framed.rindex("}") + 1])
    assert len(links) == 8 and all(HANDLE.search(value) for value in links.values()), links
    assert "?p=wmh-" in _text(reloaded) and "/other?p=wmh-" in texts[3], texts


def _text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))
