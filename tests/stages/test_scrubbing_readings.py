"""A withheld value comes back written through escapes the scrubber cannot list in advance,
and still reaches the agent as its handle: JSON escapes as servers write them (PHP's ``\\/``,
Go's ``\\u0026``, .NET's and Java's upper-case ``\\u00E9``, any character as ``\\uXXXX``),
JSON inside JSON, any bytes percent-encoded in either hex case, a URL encoded twice, a URL
in JSON text. Found from outside: only ``json.dumps``'s escapes and a list of percent-encode
sets were searched for, so ``{"key":"sk_live\\/…"}`` — a PHP server's reply a tool quoted —
showed the key whole, on both backends, even beside the tool's own redacted result.

Each string is read (as JSON text, as a URL reads it, one reading after another) and what a
reading finds is replaced where the string writes it; the readings are checked here against
encoders written in the test, and in the browser on both backends.
"""

from __future__ import annotations

import json
import string
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import Harness
from harness.stages import redaction
from harness.stages.scrubbing import Scrubber
from harness.stages.vault import new_handle
from tests.conftest import serve_pages

HANDLE_1 = new_handle("field")
SECRET = "HXCANARY sk_live/9f+3é&<key>"


def scrubbed(secret: str, written: str) -> str:
    scrubber = Scrubber()
    scrubber.withhold(secret, HANDLE_1)
    return scrubber.text(f"reply: {written} (end)")


def php(text: str) -> str:  # json_encode's default: "/" as "\/", non-ASCII as \uxxxx
    return json.dumps(text)[1:-1].replace("/", "\\/")


def go(text: str) -> str:  # encoding/json's default: <, >, & as \u003c…, non-ASCII as is
    escaped = json.dumps(text, ensure_ascii=False)[1:-1]
    return escaped.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def dotnet(text: str) -> str:  # System.Text.Json: non-ASCII and HTML-sensitive ones, upper case
    return "".join(
        f"\\u{ord(c):04X}" if ord(c) > 0x7E or c in "<>&'+`\"" else c
        for c in json.dumps(text)[1:-1].encode().decode("unicode_escape")
    )


def every_char(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


@pytest.mark.parametrize(
    "encode",
    [
        php,
        go,
        dotnet,
        every_char,
        lambda t: json.dumps(json.dumps(t))[1:-1],  # JSON in JSON
        lambda t: php(json.dumps(php(t))[1:-1]),  # JSON in JSON, PHP's both times
        lambda t: quote(quote(t, safe=""), safe=""),  # a URL in a URL's query
        lambda t: php("https://x.test/?k=" + quote(t, safe="")),  # a URL in JSON
        lambda t: quote(t, safe="").lower(),  # lower-case hex (and the text)
    ],
    ids=[
        "php",
        "go",
        "dotnet",
        "every-char",
        "json-in-json",
        "php-twice",
        "url-twice",
        "url-in-json",
        "lower-hex",
    ],
)
def test_a_withheld_value_written_through_escapes_is_replaced(encode: object) -> None:
    assert callable(encode)
    written = encode(SECRET)
    assert written != SECRET
    shown = scrubbed(SECRET, written)
    if written.islower() and "%" in written:  # lower-cased text is another text: the hex only
        shown = scrubbed(SECRET, quote(SECRET, safe="").replace("%C3%A9", "%c3%a9"))
    assert HANDLE_1 in shown and shown.startswith("reply: ") and shown.endswith(" (end)"), shown
    # The handle is random hex: it may hold "9f" itself (one process in about sixteen did).
    left = shown.replace(HANDLE_1, "")
    assert "sk_live" not in left and "9f" not in left, shown


@settings(max_examples=300, deadline=None)
@given(
    secret=st.text(
        alphabet=st.sampled_from([*" \t\n\x01é€😀%+HXab0", *string.punctuation]),
        min_size=4,
        max_size=16,
    ).filter(lambda t: t.strip(" \t\n") == t and len(t.translate({9: None, 10: None})) >= 4),
    data=st.data(),
)
def test_any_bytes_percent_encoded_in_either_case_are_read(
    secret: str, data: st.DataObject
) -> None:
    # Any encoder: each byte written as itself or escaped (upper or lower hex), or form
    # encoding's spaces as "+" (and its "+" escaped) — as long as "%" itself is escaped whenever the text's own "%" would read
    # as an escape (no encoder leaves "%41" ambiguous: the URL Standard's sets keep "%",
    # and then the text is searched for as read).
    plus = data.draw(st.booleans(), label="form encoding: every space a '+'")
    written = []
    for byte in secret.encode():
        char = chr(byte)
        how = data.draw(st.sampled_from(["as-is", "upper", "lower"]))
        if plus and char == " ":
            written.append("+")
        elif byte > 0x7E or char in "\t\n\x01" or (plus and char == "+") or how != "as-is":
            written.append(f"%{byte:02X}" if how != "lower" else f"%{byte:02x}")
        else:
            written.append(char)
    shown = scrubbed(secret, "".join(written))
    assert HANDLE_1 in shown, (secret, "".join(written), shown)


def test_what_a_reading_finds_is_replaced_where_it_is_written_and_nothing_else() -> None:
    scrubber = Scrubber()
    scrubber.withhold("sk_live/9f3", HANDLE_1)
    text = 'a\\u0041 {"key":"sk_live\\/9f3","other":"\\/path%2Fx"} %41'
    assert scrubber.text(text) == f'a\\u0041 {{"key":"{HANDLE_1}","other":"\\/path%2Fx"}} %41'
    nothing = {"note": "C:\\\\temp\\\\new", "url": "https://x.test/a%20b"}
    assert scrubber.scrub(nothing) is nothing  # read, nothing found: the same object


def test_a_text_that_writes_percent_escapes_itself_is_found_in_a_url_path() -> None:
    # The URL Standard's path set keeps "%": "/a%41b é" is written "/a%41b%20%C3%A9", and a
    # reading decodes the text's own "%41" with the rest.
    scrubber = Scrubber()
    scrubber.withhold("HX%41b é-key", HANDLE_1)
    assert scrubber.text("https://x.test/HX%41b%20%C3%A9-key") == f"https://x.test/{HANDLE_1}"


PAGE = """<!doctype html><script>
const mc = document.modelContext;
mc.registerTool({name: "export_keys", description: "All keys.",
  annotations: {readOnlyHint: true, sensitiveHint: true},
  inputSchema: {type: "object", properties: {}},
  execute: async () => ({keys: Array.from({length: 400}, (_, i) => `HXCANARY/key-${i}-padding`)})});
mc.registerTool({name: "server_reply", description: "Quotes the server's JSON reply.",
  annotations: {readOnlyHint: true},
  inputSchema: {type: "object", properties: {}},
  execute: async () => 'Server said: {"key":"HXCANARY\\\\/key-7-padding"}'});
mc.registerTool({name: "weather", description: "Weather.", annotations: {readOnlyHint: true},
  inputSchema: {type: "object", properties: {}}, execute: async () => "sunny"});
</script>"""


async def test_a_session_past_its_search_limit_withholds_every_later_result(
    backend_harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A sensitive result of more texts than the session can search for (a hostile page:
    # 80 000 strings held the event loop for 26 s and took 1.9 GB): what is left over cannot
    # be searched for, so nothing the page returns later reaches the agent unread.
    from harness.stages import scrubbing

    monkeypatch.setattr(scrubbing, "MAX_SEARCHED_TEXTS", 100)
    async with serve_pages({"": PAGE}) as origin, await backend_harness.open(origin) as session:
        first = await session.call("export_keys")
        assert "HXCANARY" not in json.dumps(first.agent_json())
        for name in ("server_reply", "weather"):
            later = await session.call(name)
            shown = json.dumps(later.agent_json())
            assert "HXCANARY" not in shown and "sunny" not in shown, shown
            assert redaction.FULL_REASON in later.result.content[0].text  # type: ignore[union-attr]
        assert "weather" in [tool.name for tool in await session.tools()]  # the session goes on


async def test_a_quoted_server_reply_that_escapes_the_key_shows_its_handle(
    backend_harness: Harness,
) -> None:
    async with serve_pages({"": PAGE}) as origin, await backend_harness.open(origin) as session:
        await session.call("export_keys")
        reply = await session.call("server_reply")
        shown = json.dumps(reply.agent_json())
        assert "HXCANARY" not in shown and "wmh-result-" in shown, shown
