"""The vault: opaque handles, values hidden from repr, memory only, cleared on demand."""

from __future__ import annotations

import re

import pytest
from mcp.types import CallToolResult

from harness.errors import UnknownHandle
from harness.stages.vault import Revealed, SecretReference, SiteDefect, Vault, new_handle

SECRET = "HXCANARY-vault-secret"


def test_handles_are_random_and_say_only_their_kind() -> None:
    handles = {new_handle("field") for _ in range(1000)}
    assert len(handles) == 1000
    assert all(re.fullmatch(r"wmh-secret-[0-9a-f]{16}", h) for h in handles)
    assert re.fullmatch(r"wmh-ref-[0-9a-f]{16}", new_handle("secret_reference"))
    assert re.fullmatch(r"wmh-result-[0-9a-f]{16}", new_handle("result"))
    assert re.fullmatch(r"wmh-user-[0-9a-f]{16}", new_handle("user-content"))


def test_entries_keep_values_out_of_repr() -> None:
    vault = Vault()
    reference = SecretReference(
        label="API Key",
        origin="http://127.0.0.1:1",
        redeem_url=f"http://127.0.0.1:1/redeem/{SECRET}",
        reference_id=SECRET,
        ttl=60,
    )
    field = vault.put("field", label="secret", tool="t", call_id="c", path="/s", value=SECRET)
    ref = vault.put(
        "secret_reference", label="API Key", tool="t", call_id="c", path="/c/1", reference=reference
    )
    assert vault.get(field.handle).value == SECRET
    for text in (repr(field), repr(ref), repr(vault), str(vault.entries())):
        assert SECRET not in text
    revealed = Revealed(handle=field.handle, kind="field", label="secret", value=SECRET)
    assert SECRET not in repr(revealed) and SECRET not in str(revealed)
    assert revealed.value == SECRET


def test_defects_get_the_entry_s_handle_and_are_collected() -> None:
    vault = Vault()
    defect = SiteDefect(code="ttl-above-cap", message="too long", tool="t")
    entry = vault.put(
        "secret_reference", label="k", tool="t", call_id="c", path="", defects=(defect,)
    )
    assert entry.defects == (defect.model_copy(update={"handle": entry.handle}),)
    assert vault.defects == list(entry.defects)


def test_clear_forgets_values_and_user_views() -> None:
    vault = Vault()
    entry = vault.put("field", label="s", tool="t", call_id="c", path="/s", value=SECRET)
    vault.keep_user_view("c", CallToolResult(content=[]))
    assert entry.handle in vault and len(vault) == 1 and vault.user_view("c") is not None
    vault.clear()
    assert entry.handle not in vault and len(vault) == 0 and vault.user_view("c") is None
    with pytest.raises(UnknownHandle, match="forgotten when it closes"):
        vault.get(entry.handle)
