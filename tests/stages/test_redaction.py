"""Redaction: what the agent view keeps of sensitive results (seed 000).

The rules run on plain data here, without a browser; the last tests run a test page
through both backends.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from mcp.types import CallToolResult, TextContent

from harness import BrowserPool, Harness
from harness.models import CallRequest, Tool, dump_result
from harness.stages.normalization import normalize_value
from harness.stages.redaction import (
    MIN_SCRUB_LENGTH,
    REDACTED_META_KEY,
    REFERENCE_META_KEY,
    Redactor,
    pointer,
    redact,
    sensitive_paths,
    sensitivity_warnings,
)
from harness.stages.vault import Vault
from tests.conftest import PageServer

CANARY = "HXCANARY"
ORIGIN = "http://127.0.0.1:8300"
HANDLE = re.compile(r"wmh-[a-z]+-[0-9a-f]{16}")

SEED_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "name": {"type": "string"},
        "secret": {"type": "string", "x-sensitive": True},
    },
}


def tool(
    output_schema: dict[str, Any] | None = None, *, hint: bool | None = True, name: str = "t"
) -> Tool:
    annotations = {} if hint is None else {"sensitiveHint": hint}
    return Tool(
        name=name,
        description="a tool",
        outputSchema=output_schema,
        annotations=annotations,
        origin=ORIGIN,
        frame="main",
        frameUrl=ORIGIN + "/console/keys.html",
    )


def page_result(value: Any) -> CallToolResult:
    """What normalization makes of a tool's return value (as the page's JSON string)."""
    return normalize_value(json.dumps(value, separators=(",", ":")))


def agent(result: CallToolResult) -> str:
    return json.dumps(dump_result(result))


def listed(result: CallToolResult) -> list[dict[str, Any]]:
    return list((result.meta or {})[REDACTED_META_KEY])


# -- x-sensitive fields ------------------------------------------------------------------


def test_the_seed_example_withholds_the_secret_and_keeps_the_rest() -> None:
    vault = Vault()
    raw = page_result({"id": "key_123", "name": "production", "secret": f"plr_{CANARY}_abc"})
    redaction = redact(tool(SEED_SCHEMA), raw, vault, call_id="c1")
    out = redaction.result
    handle = out.structured_content["secret"]  # type: ignore[index]
    assert HANDLE.fullmatch(handle)
    assert out.structured_content == {"id": "key_123", "name": "production", "secret": handle}
    # The mirror text is rewritten from the redacted value.
    assert json.loads(out.content[0].text) == out.structured_content  # type: ignore[union-attr]
    assert listed(out) == [
        {"path": "/structuredContent/secret", "label": "secret", "handle": handle, "kind": "field"}
    ]
    assert CANARY not in agent(out)
    entry = vault.get(handle)
    assert entry.value == f"plr_{CANARY}_abc" and entry.call_id == "c1"
    assert CANARY not in repr(entry) and CANARY not in repr(vault)
    assert redaction.notes == [
        "redaction: withheld 1 item(s) from the agent: /structuredContent/secret (field)"
    ]


def test_handles_are_random_not_derived_from_the_value() -> None:
    vault = Vault()
    handles = [
        redact(
            tool(SEED_SCHEMA), page_result({"secret": "same value"}), vault
        ).result.structured_content["secret"]  # type: ignore[index]
        for _ in range(20)
    ]
    assert len(set(handles)) == 20
    assert all(HANDLE.fullmatch(h) for h in handles)
    assert all("same" not in h and "value" not in h for h in handles)
    # Different values, same shape of handle: nothing about the value shows.
    other = redact(tool(SEED_SCHEMA), page_result({"secret": "x" * 500}), vault)
    assert len(other.result.structured_content["secret"]) == len(handles[0])  # type: ignore[index]


NESTED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "$defs": {
        "credential": {
            "type": "object",
            "properties": {"user": {"type": "string"}, "password": {"$ref": "#/$defs/secret"}},
        },
        "secret": {"type": "string", "x-sensitive": True, "title": "Password"},
    },
    "properties": {
        "accounts": {"type": "array", "items": {"$ref": "#/$defs/credential"}},
        "pair": {
            "type": "array",
            "prefixItems": [{"type": "string"}, {"type": "string", "x-sensitive": True}],
        },
        "env": {"type": "object", "additionalProperties": {"type": "string", "x-sensitive": True}},
        "tokens": {
            "type": "object",
            "properties": {"public": {"type": "string"}},
            "patternProperties": {"^private_": {"x-sensitive": True}},
        },
        "combined": {
            "allOf": [
                {"properties": {"a": {"type": "string"}}},
                {"properties": {"b": {"type": "string", "x-sensitive": True}}},
            ]
        },
        "either": {"anyOf": [{"type": "null"}, {"properties": {"pin": {"x-sensitive": True}}}]},
        "one": {
            "oneOf": [
                {"type": "string"},
                {"type": "object", "properties": {"k": {"x-sensitive": True}}},
            ]
        },
        "whole": {"type": "object", "x-sensitive": True},
    },
}

NESTED_VALUE: dict[str, Any] = {
    "accounts": [
        {"user": "ana", "password": f"{CANARY}-pw-1"},
        {"user": "bo", "password": f"{CANARY}-pw-2"},
    ],
    "pair": ["visible", f"{CANARY}-pair"],
    "env": {"DB_PASSWORD": f"{CANARY}-env"},
    "tokens": {"public": "pub-1", "private_a": f"{CANARY}-tok"},
    "combined": {"a": "kept", "b": f"{CANARY}-b"},
    "either": {"pin": 73194821},
    "one": {"k": [f"{CANARY}-k"]},
    "whole": {"deep": {"deeper": f"{CANARY}-whole"}},
}


def test_the_schema_is_followed_everywhere_it_can_lead() -> None:
    vault = Vault()
    out = redact(tool(NESTED_SCHEMA), page_result(NESTED_VALUE), vault).result
    assert CANARY not in agent(out) and "73194821" not in agent(out)
    paths = {item["path"]: item["label"] for item in listed(out)}
    assert paths == {
        "/structuredContent/accounts/0/password": "Password",
        "/structuredContent/accounts/1/password": "Password",
        "/structuredContent/pair/1": "1",
        "/structuredContent/env/DB_PASSWORD": "DB_PASSWORD",
        "/structuredContent/tokens/private_a": "private_a",
        "/structuredContent/combined/b": "b",
        "/structuredContent/either/pin": "pin",
        "/structuredContent/one/k": "k",
        "/structuredContent/whole": "whole",
    }
    structured = out.structured_content
    assert structured is not None
    assert structured["accounts"][1]["user"] == "bo"
    assert structured["pair"][0] == "visible"
    assert structured["tokens"]["public"] == "pub-1"
    assert structured["combined"]["a"] == "kept"
    assert HANDLE.fullmatch(structured["whole"])
    assert vault.get(structured["whole"]).value == NESTED_VALUE["whole"]


def test_a_withheld_value_is_replaced_in_any_text_verbatim() -> None:
    secret = f'{CANARY}_"quoted"_ü'
    raw = CallToolResult.model_validate(
        {
            "content": [
                {"type": "text", "text": f"Your new key is {secret}. Keep it safe."},
                {"type": "text", "text": json.dumps({"note": f"also {secret}"})},
                {"type": "text", "text": json.dumps({"secret": secret}, ensure_ascii=True)},
                {
                    "type": "resource",
                    "resource": {
                        "uri": "mem://k",
                        "text": f"key={secret}",
                        "mimeType": "text/plain",
                    },
                },
            ],
            "structuredContent": {"id": "k1", "secret": secret},
            "_meta": {"debug": {"echo": secret}},
        }
    )
    out = redact(tool(SEED_SCHEMA), raw, Vault()).result
    text = agent(out)
    assert CANARY not in text and "quoted" not in text
    handle = out.structured_content["secret"]  # type: ignore[index]
    assert out.content[0].text == f"Your new key is {handle}. Keep it safe."  # type: ignore[union-attr]
    assert handle in out.content[3].resource.text  # type: ignore[union-attr]
    assert out.meta is not None and out.meta["debug"] == {"echo": handle}


def test_json_text_the_schema_describes_is_redacted_like_structured_content() -> None:
    raw = CallToolResult.model_validate(
        {
            "content": [{"type": "text", "text": json.dumps({"id": "k2", "secret": "abc"})}],
            "structuredContent": {"id": "k1", "secret": f"{CANARY}-1"},
        }
    )
    out = redact(tool(SEED_SCHEMA), raw, Vault()).result
    # "abc" is shorter than MIN_SCRUB_LENGTH, so only the schema can find it.
    assert json.loads(out.content[0].text)["id"] == "k2"  # type: ignore[union-attr]
    text = out.content[0].text  # type: ignore[union-attr]
    # Not in the text but for a random handle's hex digits, which may spell it.
    assert "abc" not in re.sub(r"wmh-[a-z]+-[0-9a-f]{16}", "", text), text
    assert [i["path"] for i in listed(out)] == [
        "/structuredContent/secret",
        "/content/0/text",
    ]


def test_short_values_are_withheld_where_the_schema_says_but_not_searched_for() -> None:
    raw = CallToolResult.model_validate(
        {
            "content": [{"type": "text", "text": "pin 42 and 4242 and abc"}],
            "structuredContent": {"pins": [42, 4242]},
        }
    )
    schema = {
        "type": "object",
        "properties": {"pins": {"type": "array", "items": {"x-sensitive": True}}},
    }
    out = redact(tool(schema), raw, Vault()).result
    assert all(HANDLE.fullmatch(p) for p in out.structured_content["pins"])  # type: ignore[index]
    text = out.content[0].text  # type: ignore[union-attr]
    assert MIN_SCRUB_LENGTH == 4
    assert text.startswith("pin 42 and wmh-secret-") and text.endswith(" and abc")


def test_x_sensitive_without_sensitive_hint_is_redacted_and_warned_about() -> None:
    unhinted = tool(SEED_SCHEMA, hint=None, name="sloppy")
    out = redact(unhinted, page_result({"secret": f"{CANARY}-x"}), Vault()).result
    assert CANARY not in agent(out)
    warnings = sensitivity_warnings([unhinted, tool(SEED_SCHEMA, name="fine")])
    assert [(w.code, w.tool) for w in warnings] == [("undeclared-sensitive", "sloppy")]
    assert "should add sensitiveHint: true" in warnings[0].message


def test_sensitive_hint_without_output_schema_withholds_the_whole_result() -> None:
    vault = Vault()
    raw = page_result({"codes": [f"{CANARY}-1", f"{CANARY}-2"]})
    redaction = redact(tool(None), raw, vault, call_id="c9")
    out = redaction.result
    assert CANARY not in agent(out)
    assert out.structured_content is None and len(out.content) == 1
    [item] = listed(out)
    assert item["kind"] == "result" and item["path"] == ""
    text = out.content[0].text  # type: ignore[union-attr]
    assert "without an outputSchema" in text and item["handle"] in text
    assert vault.get(item["handle"]).value == dump_result(raw)


def test_sensitive_hint_with_a_schema_that_marks_nothing_withholds_the_whole_result() -> None:
    schema = {"type": "object", "properties": {"codes": {"type": "array"}}}
    out = redact(tool(schema), page_result({"codes": [CANARY]}), Vault()).result
    assert CANARY not in agent(out) and listed(out)[0]["kind"] == "result"
    [warning] = sensitivity_warnings([tool(schema, name="codes")])
    assert warning.code == "sensitive-without-fields"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ({"id": 5, "secret": f"{CANARY}"}, "does not fit the tool's outputSchema"),
        ({"content": [{"type": "text", "text": f"key {CANARY}"}]}, "has no structuredContent"),
    ],
)
def test_a_result_whose_fields_cannot_be_found_is_withheld_whole(value: Any, reason: str) -> None:
    out = redact(tool(SEED_SCHEMA), page_result(value), Vault()).result
    assert CANARY not in agent(out)
    assert reason in out.content[0].text  # type: ignore[union-attr]


def test_a_sensitive_schema_whose_branches_multiply_withholds_the_result_within_the_budget() -> (
    None
):
    """16 levels of `anyOf: [{$ref: next}, {$ref: next}]` over an x-sensitive leaf: the walk
    and the fit check followed every branch, on the event loop (24 s for the fit check,
    doubling with each level). Both keep the schema budget now; what could not be read in
    it is withheld whole."""
    defs: dict[str, Any] = {
        f"a{i}": {"anyOf": [{"$ref": f"#/$defs/a{i + 1}"}, {"$ref": f"#/$defs/a{i + 1}"}]}
        for i in range(16)
    }
    defs["a16"] = {"type": "string", "minLength": 5, "x-sensitive": True}
    schema = {"type": "object", "properties": {"v": {"$ref": "#/$defs/a0"}}, "$defs": defs}
    out = redact(tool(schema, hint=None), page_result({"v": CANARY[:4]}), Vault()).result
    assert CANARY[:4] not in agent(out) and listed(out)[0]["kind"] == "result"
    assert "the schema could not be checked within" in out.content[0].text  # type: ignore[union-attr]


def test_a_key_pattern_that_backtracks_is_stopped_and_the_value_withheld() -> None:
    """The walk matched patternProperties with Python's `re`, which cannot be stopped:
    `^(a+)+$` on a key of 30 `a`s and a `!` held the whole harness for minutes (40: days).
    It matches as validation does now, in the matcher child; a match that runs out of time
    might have matched, so what it covers is withheld."""
    schema = {"type": "object", "patternProperties": {"^(a+)+$": {"x-sensitive": True}}}
    out = redact(tool(schema, hint=None), page_result({"a" * 30 + "!": CANARY}), Vault()).result
    assert CANARY not in agent(out)


def test_page_meta_does_not_survive_a_whole_withheld_result() -> None:
    raw = CallToolResult.model_validate(
        {
            "content": [{"type": "text", "text": "x"}],
            "_meta": {"webmcp-harness/anything": CANARY, "other": CANARY},
        }
    )
    out = redact(tool(None), raw, Vault()).result
    assert CANARY not in agent(out)
    assert set(out.meta or {}) == {REDACTED_META_KEY}


@pytest.mark.parametrize(
    ("schema", "hint"),
    [(SEED_SCHEMA, True), (SEED_SCHEMA, None), (None, True)],
    ids=["x-sensitive and sensitiveHint", "x-sensitive only", "sensitiveHint only"],
)
@pytest.mark.parametrize(
    "raw",
    [
        CallToolResult(
            content=[TextContent(type="text", text=f"Tool error: Error: key {CANARY}-1 expired")],
            is_error=True,
        ),
        CallToolResult.model_validate(
            {
                "content": [{"type": "text", "text": f"the key {CANARY}-2 was refused"}],
                "structuredContent": {"id": "k", "name": "n", "secret": f"{CANARY}-2"},
                "isError": True,
            }
        ),
    ],
    ids=["thrown", "returned with structuredContent"],
)
def test_an_error_of_a_sensitive_tool_is_withheld_whole(
    schema: dict[str, Any] | None, hint: bool | None, raw: CallToolResult
) -> None:
    # Seed 000 §1 ("MUST NOT forward raw sensitive values") has no exception for errors:
    # an error message can quote the secret, and nothing marks where.
    vault = Vault()
    out = redact(tool(schema, hint=hint), raw, vault).result
    assert out.is_error and CANARY not in agent(out)
    [item] = listed(out)
    assert item["kind"] == "result" and CANARY in json.dumps(vault.get(item["handle"]).value)
    assert "failed" in out.content[0].text  # type: ignore[union-attr]


def test_an_error_of_a_plain_tool_keeps_its_message() -> None:
    raw = CallToolResult(
        content=[TextContent(type="text", text="Tool error: Error: bad name")], is_error=True
    )
    assert redact(tool(hint=None), raw, Vault()).result is raw


def test_a_secret_used_as_a_key_elsewhere_is_replaced_there_too() -> None:
    schema = {
        "type": "object",
        "properties": {
            "secret": {"type": "string", "x-sensitive": True},
            "usage": {"type": "object", "additionalProperties": {"type": "integer"}},
        },
    }
    value = {"secret": f"{CANARY}-k", "usage": {f"{CANARY}-k": 3, "other": 1}}
    out = redact(tool(schema), page_result(value), Vault()).result
    assert CANARY not in agent(out)
    usage = out.structured_content["usage"]  # type: ignore[index]
    assert usage["other"] == 1 and [HANDLE.fullmatch(k) for k in usage if k != "other"]


def test_property_names_marked_x_sensitive_are_withheld() -> None:
    schema = {
        "type": "object",
        "properties": {
            "tokens": {
                "type": "object",
                "propertyNames": {"$ref": "#/$defs/token"},
                "additionalProperties": {"type": "string"},
            }
        },
        "$defs": {"token": {"type": "string", "x-sensitive": True, "title": "token"}},
    }
    value = {"tokens": {f"{CANARY}-a": "ci", f"{CANARY}-b": "deploy"}}
    raw = CallToolResult.model_validate(
        {
            "content": [
                {"type": "text", "text": json.dumps(value)},
                {"type": "text", "text": f"made {CANARY}-a"},
            ],
            "structuredContent": value,
        }
    )
    vault = Vault()
    out = redact(tool(schema), raw, vault).result
    assert CANARY not in agent(out)
    tokens = out.structured_content["tokens"]  # type: ignore[index]
    assert sorted(tokens.values()) == ["ci", "deploy"]
    revealed = {vault.get(handle).value for handle in tokens}
    assert revealed == {f"{CANARY}-a", f"{CANARY}-b"}
    assert {i["label"] for i in listed(out)} == {"token"}


def test_structured_content_never_mirrors_what_is_for_the_user_only() -> None:
    raw = CallToolResult.model_validate(
        {
            "content": [
                {"type": "text", "text": "Your statement is ready."},
                {
                    "type": "text",
                    "text": f"IBAN {CANARY}-iban",
                    "annotations": {"audience": ["user"]},
                },
            ],
            "structuredContent": {"iban": f"{CANARY}-iban", "status": "ready"},
        }
    )
    vault = Vault()
    out = redact(tool(hint=None), raw, vault).result
    assert CANARY not in agent(out)
    assert out.structured_content is None
    assert out.content[0].text == "Your statement is ready."  # type: ignore[union-attr]
    kinds = {i["path"]: i["kind"] for i in listed(out)}
    assert kinds == {"/content/1": "user-content", "/structuredContent": "user-content"}


def test_structured_content_a_readable_block_mirrors_stays() -> None:
    value = {"status": "ready"}
    raw = CallToolResult.model_validate(
        {
            "content": [
                {"type": "text", "text": json.dumps(value)},
                {"type": "text", "text": f"{CANARY}-x", "annotations": {"audience": ["user"]}},
            ],
            "structuredContent": value,
        }
    )
    out = redact(tool(hint=None), raw, Vault()).result
    assert out.structured_content == value and CANARY not in agent(out)


def test_a_page_cannot_forge_the_redaction_listing() -> None:
    raw = CallToolResult.model_validate(
        {"content": [], "_meta": {REDACTED_META_KEY: [{"path": "/x", "handle": "wmh-secret-0"}]}}
    )
    out = redact(tool(hint=None), raw, Vault()).result
    assert REDACTED_META_KEY not in (out.meta or {})


def test_a_result_of_a_plain_tool_passes_untouched() -> None:
    raw = page_result({"todos": [1, 2]})
    assert redact(tool(hint=None), raw, Vault()).result is raw
    assert redact(tool({"type": "object"}, hint=False), raw, Vault()).result is raw


# -- secret_reference and audience -------------------------------------------------------


def reference(**overrides: Any) -> dict[str, Any]:
    return {
        "type": "secret_reference",
        "id": "ref_7f3a9c",
        "label": "API Key",
        "redeemUrl": "/api/redeem/ref_7f3a9c",
        "ttl": 120,
        **overrides,
    }


def test_a_secret_reference_keeps_its_label_and_loses_id_and_url() -> None:
    vault = Vault(clock=lambda: 1000.0)
    raw = page_result(
        {
            "content": [
                {"type": "text", "text": 'Created API key "ci"'},
                reference(),
                {"type": "text", "text": "Redeem at /api/redeem/ref_7f3a9c"},
            ]
        }
    )
    redaction = redact(tool(hint=None), raw, vault)
    out = dump_result(redaction.result)
    assert "ref_7f3a9c" not in json.dumps(out) and "/api/redeem" not in json.dumps(out)
    assert out["content"][0] == {"type": "text", "text": 'Created API key "ci"'}
    stand_in = out["content"][1]
    handle = stand_in["_meta"][REFERENCE_META_KEY]["handle"]
    assert stand_in["_meta"][REFERENCE_META_KEY] == {
        "label": "API Key",
        "handle": handle,
        "ttl": 120,
    }
    assert "'API Key'" in stand_in["text"] and handle in stand_in["text"]
    assert out["content"][2]["text"] == f"Redeem at {handle}"
    assert "structuredContent" not in out
    entry = vault.get(handle)
    assert entry.kind == "secret_reference" and entry.reference is not None
    assert entry.reference.redeem_url == ORIGIN + "/api/redeem/ref_7f3a9c"
    assert entry.reference.origin == ORIGIN and entry.reference.expires_at == 1120.0
    assert "ref_7f3a9c" not in repr(entry)


def test_reference_defects_are_flagged_on_arrival() -> None:
    vault = Vault(clock=lambda: 0.0)
    raw = page_result(
        {
            "content": [
                reference(ttl=86400),
                reference(label="Mirror", redeemUrl="http://localhost:8300/api/redeem/x"),
                reference(label="No URL", redeemUrl=None),
            ]
        }
    )
    redaction = redact(tool(hint=None), raw, vault, ttl_cap=600)
    codes = [d.code for d in vault.defects]
    assert codes == ["ttl-above-cap", "redeem-url-cross-origin", "reference-without-url"]
    first = vault.get(listed(redaction.result)[0]["handle"])
    assert first.reference is not None and first.reference.expires_at == 600.0
    assert any("http://localhost:8300, not on http://127.0.0.1:8300" in n for n in redaction.notes)


def test_a_reference_inside_structured_content_is_withheld_too() -> None:
    raw = page_result({"token": reference(), "name": "ci"})
    out = redact(tool(hint=None), raw, Vault()).result
    assert "ref_7f3a9c" not in agent(out) and "/api/redeem" not in agent(out)
    token = out.structured_content["token"]  # type: ignore[index]
    assert token["type"] == "secret_reference" and token["label"] == "API Key"
    assert HANDLE.fullmatch(token["handle"])


def test_content_for_the_user_only_never_reaches_the_agent() -> None:
    vault = Vault()
    raw = CallToolResult.model_validate(
        {
            "content": [
                {
                    "type": "text",
                    "text": f"recovery: {CANARY}",
                    "annotations": {"audience": ["user"]},
                },
                {
                    "type": "text",
                    "text": "both",
                    "annotations": {"audience": ["user", "assistant"]},
                },
                {
                    "type": "text",
                    "text": "for the model",
                    "annotations": {"audience": ["assistant"]},
                },
            ]
        }
    )
    out = redact(tool(hint=None), raw, vault).result
    assert CANARY not in agent(out)
    assert [c.text for c in out.content] == ["both", "for the model"]  # type: ignore[union-attr]
    [item] = listed(out)
    assert item["kind"] == "user-content" and item["path"] == "/content/0"
    assert vault.get(item["handle"]).value["text"] == f"recovery: {CANARY}"


# -- the stage -------------------------------------------------------------------------------


async def test_the_stage_keeps_the_user_view_and_skips_calls_that_never_ran() -> None:
    vault = Vault()
    stage = Redactor(vault)
    raw = page_result({"secret": CANARY})
    ran = CallRequest(tool=tool(SEED_SCHEMA), arguments={}, timeout=1)
    await stage.before_execute(ran)
    out = await stage(ran, raw)
    assert CANARY not in agent(out) and vault.user_view(ran.call_id) is raw
    assert ran.notes and CANARY not in " ".join(ran.notes)
    refused = CallRequest(tool=tool(SEED_SCHEMA), arguments={}, timeout=1)
    message = CallToolResult(
        content=[TextContent(type="text", text="Invalid arguments")], is_error=True
    )
    assert await stage(refused, message) is message
    assert vault.user_view(refused.call_id) is None
    vault.clear()
    assert vault.user_view(ran.call_id) is None and len(vault) == 0


def test_sensitive_paths_reports_refs_it_cannot_follow() -> None:
    schema = {"properties": {"a": {"$ref": "https://elsewhere.example/schema.json"}}}
    assert sensitive_paths(schema, {"a": 1}) == ([], {"https://elsewhere.example/schema.json"})
    hinted = tool(
        {"type": "object", "properties": {"s": {"x-sensitive": True}, **schema["properties"]}}
    )
    out = redact(hinted, page_result({"a": CANARY, "s": "x"}), Vault()).result
    assert CANARY not in agent(out) and "cannot follow" in out.content[0].text  # type: ignore[union-attr]


def test_anchors_and_dynamic_refs_are_followed() -> None:
    schema = {
        "$defs": {
            "s": {"$anchor": "pw", "x-sensitive": True},
            "d": {"$dynamicAnchor": "tok", "x-sensitive": True},
        },
        "properties": {
            "a": {"$ref": "#pw"},
            "b": {"$dynamicRef": "#tok"},
            "c": {"$ref": "#/$defs/s"},
        },
    }
    paths, unresolved = sensitive_paths(schema, {"a": 1, "b": 2, "c": 3, "d": 4})
    assert sorted(pointer(p) for p, _ in paths) == ["/a", "/b", "/c"] and unresolved == set()


def test_a_recursive_schema_terminates() -> None:
    schema = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "secret": {"x-sensitive": True},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                },
                "allOf": [{"$ref": "#/$defs/node"}],
            }
        },
        "$ref": "#/$defs/node",
    }
    tree = {"secret": "a1b2c3", "children": [{"secret": "d4e5f6", "children": []}]}
    paths, _ = sensitive_paths(schema, tree)
    assert sorted(pointer(p) for p, _ in paths) == ["/children/0/secret", "/secret"]


# -- property: random schemas, random matching results ------------------------------------

Leaf = tuple[dict[str, Any], Any]

LEAVES: st.SearchStrategy[Leaf] = st.one_of(
    st.text(max_size=12).map(lambda v: ({"type": "string"}, v)),
    st.integers().map(lambda v: ({"type": "integer"}, v)),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda v: ({"type": "number"}, v)),
    st.booleans().map(lambda v: ({"type": "boolean"}, v)),
    st.just(({"type": "null"}, None)),
)
KEYS = st.text(min_size=1, max_size=6)


class Built:
    """A generated schema, a value that fits it, and where the sensitive values are."""

    def __init__(self) -> None:
        self.defs: dict[str, Any] = {}
        self.sensitive: dict[tuple[Any, ...], Any] = {}


SHALLOW = st.sampled_from(["leaf", "sensitive", "object", "array", "tuple", "split"])
DEEP = st.sampled_from(["leaf", "sensitive"])
ROOT = st.sampled_from(["object", "split"])
HOW = st.sampled_from(["inline", "ref", "allOf", "anyOf", "oneOf"])
TWO_KEYS = st.lists(KEYS, min_size=2, max_size=2, unique=True)
SOME_KEYS = st.lists(KEYS, max_size=3, unique=True)
COUNT = st.integers(1, 3)
COIN = st.booleans()


def node(
    draw: st.DrawFn,
    built: Built,
    path: tuple[Any, ...],
    depth: int,
    kinds: st.SearchStrategy[str] | None = None,
) -> Leaf:
    """One schema node and a value that fits it; sensitive paths go to ``built``."""
    if kinds is None:
        kinds = SHALLOW if depth < 4 else DEEP
    kind = draw(kinds)
    if kind == "leaf":
        return draw(LEAVES)
    if kind == "sensitive":
        schema, value = node(draw, built, path, depth + 1)
        built.sensitive = {p: v for p, v in built.sensitive.items() if p[: len(path)] != path}
        built.sensitive[path] = value
        how = draw(HOW)
        if how == "inline":
            return {**schema, "x-sensitive": True}, value
        if how == "ref":
            name = f"d{len(built.defs)}"
            built.defs[name] = {**schema, "x-sensitive": True}
            return {"$ref": f"#/$defs/{name}"}, value
        if how == "allOf":
            return {**schema, "allOf": [{"x-sensitive": True}]}, value
        # The other branch matches nothing, so the value fits exactly one branch.
        return {how: [{**schema, "x-sensitive": True}, False]}, value
    if kind == "array":
        schema, value = node(draw, built, (*path, 0), depth + 1)
        return {"type": "array", "items": schema}, [value]
    if kind == "tuple":
        items = [node(draw, built, (*path, i), depth + 1) for i in range(draw(COUNT))]
        return (
            {"type": "array", "prefixItems": [s for s, _ in items], "items": False},
            [v for _, v in items],
        )
    if kind == "split":
        a, b = ("f_" + k for k in draw(TWO_KEYS))
        sa, va = node(draw, built, (*path, a), depth + 1)
        sb, vb = node(draw, built, (*path, b), depth + 1)
        return {"allOf": [{"properties": {a: sa}}, {"properties": {b: sb}}]}, {a: va, b: vb}
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    value: dict[str, Any] = {}
    for key in ("f_" + k for k in draw(SOME_KEYS)):
        schema["properties"][key], value[key] = node(draw, built, (*path, key), depth + 1)
    if draw(COIN):
        key = "p_" + draw(KEYS)
        sub, value[key] = node(draw, built, (*path, key), depth + 1)
        schema["patternProperties"] = {"^p_": sub}
    if draw(COIN):
        key = "a_" + draw(KEYS)
        schema["additionalProperties"], value[key] = node(draw, built, (*path, key), depth + 1)
    return schema, value


@st.composite
def sensitive_results(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any], Built]:
    built = Built()
    schema, value = node(draw, built, (), 0, ROOT)
    assume(built.sensitive)
    schema = {**schema, "type": "object"}
    if built.defs:
        schema["$defs"] = built.defs
    return schema, value, built


def leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in leaves(v, (*path, k))]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in leaves(v, (*path, i))]
    return [(path, value)]


def at(value: Any, path: tuple[Any, ...]) -> Any:
    for token in path:
        value = value[token]
    return value


def at_rewritten(value: Any, path: tuple[Any, ...], secrets: list[str]) -> Any:
    """``at``, where an object key that held one of ``secrets`` is found rewritten with a
    handle in the secret's place."""
    pattern = re.compile("|".join(re.escape(t) for t in sorted(secrets, key=len, reverse=True)))
    for token in path:
        if isinstance(token, str) and token not in value and secrets:
            wanted = pattern.sub("\0", token)
            [token] = [k for k in value if HANDLE.sub("\0", k).rstrip("#") == wanted]
        value = value[token]
    return value


def declared(schema: Any) -> set[str]:
    """Every property name a schema declares (public words: not withheld with an object)."""
    if isinstance(schema, list):
        return {name for item in schema for name in declared(item)}
    if not isinstance(schema, dict):
        return set()
    names = set(schema["properties"]) if isinstance(schema.get("properties"), dict) else set()
    return names | {name for member in schema.values() for name in declared(member)}


def needles(value: Any, public: set[str] | None = None) -> list[str]:
    """The texts a withheld value is searched for by: its leaves, and the keys of objects
    in it that the schema does not declare (``public``)."""
    found = []
    texts = [leaf for _, leaf in leaves(value)]
    if public is not None:
        texts += [k for path, _ in leaves(value) for k in path if isinstance(k, str)]
        texts = [t for t in texts if not (isinstance(t, str) and t in public)] + [
            leaf for _, leaf in leaves(value) if isinstance(leaf, str) and leaf in public
        ]
    for leaf in texts:
        if leaf is None or isinstance(leaf, bool):
            continue
        text = leaf if isinstance(leaf, str) else json.dumps(leaf)
        if len(text) >= MIN_SCRUB_LENGTH:
            found.append(text)
    return found


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sensitive_results())
def test_no_sensitive_value_survives_and_every_other_value_does(
    generated: tuple[dict[str, Any], dict[str, Any], Built],
) -> None:
    schema, value, built = generated
    assert Draft202012Validator(schema).is_valid(value)  # the generator makes fitting values
    public = declared(schema)
    secret_texts = [n for v in built.sensitive.values() for n in needles(v, public)]
    free_text = "values: " + " | ".join(secret_texts)
    raw = CallToolResult.model_validate(
        {
            "content": [
                {"type": "text", "text": json.dumps(value, separators=(",", ":"))},
                {"type": "text", "text": free_text},
            ],
            "structuredContent": value,
        }
    )
    vault = Vault()
    out = redact(tool(schema), raw, vault).result
    structured = out.structured_content
    assert structured is not None

    # Every sensitive value is replaced by a handle the vault resolves to it, and listed.
    expected = {"/structuredContent" + pointer(p) for p in built.sensitive}
    assert {item["path"] for item in listed(out)} == expected

    def seen_at(path: tuple[Any, ...]) -> Any:
        """The agent's value at ``path``, following keys that held a withheld text (keys
        are text too: such a key is rewritten with the handle in its place)."""
        return at_rewritten(structured, path, secret_texts)

    for path, original in built.sensitive.items():
        handle = seen_at(path)
        assert HANDLE.fullmatch(handle)
        assert vault.get(handle).value == original

    # Every other value survives unchanged, unless it contained a withheld text.
    for path, original in leaves(value):
        if any(path[: len(p)] == p for p in built.sensitive):
            continue
        kept = seen_at(path)
        if isinstance(original, str) and any(n in original for n in secret_texts):
            continue
        assert kept == original and type(kept) is type(original)

    # No withheld text is left in any string the agent sees (handles aside).
    assert json.loads(out.content[0].text) == structured  # type: ignore[union-attr]
    seen = [out.content[1].text]  # type: ignore[union-attr]
    seen += [leaf for _, leaf in leaves(structured) if isinstance(leaf, str)]
    seen += [k for path, _ in leaves(structured) for k in path if isinstance(k, str)]
    for text in seen:
        stripped = HANDLE.sub("\0", text)
        assert not [n for n in secret_texts if n in stripped]


# -- through a browser, on both backends ---------------------------------------------------


@pytest.fixture(scope="module", params=["polyfill", "native"])
async def harness(
    browser_pool: BrowserPool, request: pytest.FixtureRequest
) -> AsyncIterator[Harness]:
    async with Harness(browsers=browser_pool, backend=request.param, call_timeout=10) as h:
        yield h


async def test_a_page_s_nested_secrets_and_user_only_content_stay_with_the_user(
    harness: Harness, page_server: PageServer
) -> None:
    session = await harness.open(page_server.url("r_sensitive.html"))
    try:
        warnings = [(w.code, w.tool) for w in session.warnings]
        assert ("undeclared-sensitive", "nested_report") in warnings
        outcome = await session.call("nested_report")
        text = json.dumps(outcome.agent_json())
        assert CANARY not in text
        assert {i["path"] for i in listed(outcome.result)} == {
            "/structuredContent/accounts/0/password",
            "/structuredContent/env/API_TOKEN",
            "/structuredContent/pin",
        }
        assert outcome.result.structured_content["accounts"][0]["user"] == "ana"  # type: ignore[index]
        user_view = session.user_view(outcome)
        assert user_view is not None and CANARY in json.dumps(dump_result(user_view))

        note = await session.call("user_note")
        assert CANARY not in json.dumps(note.agent_json())
        [item] = listed(note.result)
        revealed = await session.reveal(item["handle"])
        assert CANARY in revealed.value["text"] and CANARY not in repr(revealed)
        assert CANARY not in repr(session.history) and CANARY not in str(session.history)
        assert all(CANARY not in o.model_dump_json() for o in session.history)
    finally:
        await session.close()
    assert session.user_view(outcome) is None and len(session.vault) == 0
