"""The fuzzer on pages the tests write, on both backends: each property fails on a tool
built to break it and holds on a correct one; failures are shrunk; writes are guarded."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from harness import Harness, Session
from harness.errors import ConfigError
from harness.qa import PROPERTY_NAMES
from harness.qa.fuzz import FuzzOptions, FuzzReport, fuzz
from harness.qa.properties import PROPERTIES
from tests.qa.pages import CANARY, ODD_TOOLS, PROPERTY_TOOLS, QAServer, page, serve


def test_the_parsers_property_names_are_the_fuzzers() -> None:
    # --property's choices and help come from harness.qa (no fuzzer stack for --help).
    assert tuple(PROPERTIES) == PROPERTY_NAMES


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[QAServer]:
    pages = {"/": page(PROPERTY_TOOLS), "/details": page("", "Details"), "/odd": page(ODD_TOOLS)}
    async with serve(pages) as qa:
        yield qa


@pytest.fixture
async def session(harness: Harness, server: QAServer) -> AsyncIterator[Session]:
    s = await harness.open(server.url("/"))
    yield s
    await s.close()


async def run(session: Session, prop: str, *tools: str, **options: object) -> FuzzReport:
    settings: dict[str, object] = {"examples": 8, "seed": 7, "database": None}
    settings.update(options)
    return await fuzz(session, FuzzOptions(tools=tools, properties=[prop], **settings))  # type: ignore[arg-type]


def status(report: FuzzReport, tool: str, prop: str) -> str:
    [found] = [t for t in report.tools if t.tool == tool]
    [result] = [r for r in found.results if r.property == prop]
    return result.status


def message(report: FuzzReport, tool: str) -> str:
    [found] = [t for t in report.tools if t.tool == tool]
    failure = found.failed[0].failure
    assert failure is not None
    return failure.message


@pytest.mark.parametrize(
    ("prop", "broken", "correct", "says", "writes"),
    [
        ("no-throw", "search_throws", "search_ok", "threw on valid input", False),
        ("output-schema", "count_bad_output", "search_ok", "/count: fails `type`", False),
        ("sensitive-marked", "token_leaks", "token_marked", "/structuredContent/token", False),
        ("read-only", "peek_posts", "peek_ok", "sent POST /api/hits (blocked)", False),
        ("read-only", "peek_stores", "peek_ok", "localStorage['last'] changed", False),
        ("idempotent", "bump", "set_counter", "localStorage['counter'] changed", True),
        ("no-navigation", "jumps", "redirects", "navigated the page", False),
        ("invalid-refused", "set_qty_unchecked", "set_qty_checked", "the tool accepted it", False),
    ],
)
async def test_each_property_fails_on_a_tool_built_to_break_it_and_holds_on_a_correct_one(
    session: Session,
    server: QAServer,
    prop: str,
    broken: str,
    correct: str,
    says: str,
    writes: bool,
) -> None:
    report = await run(session, prop, broken, correct, allow_writes=writes)
    assert status(report, correct, prop) == "passed", report.describe()
    assert status(report, broken, prop) == "failed", report.describe()
    assert says in message(report, broken)
    assert not report.ok
    assert [(tool, name) for tool, name, _ in report.failures()] == [(broken, prop)]
    assert server.hits == 0  # nothing reached the server's write endpoint
    assert CANARY not in report.model_dump_json() and CANARY not in report.describe()


async def test_a_failure_is_shrunk_to_a_minimal_input_with_its_reproduction(
    session: Session,
) -> None:
    report = await run(session, "output-schema", "count_bad_output", examples=30)
    [tool] = report.tools
    failure = tool.failed[0].failure
    assert failure is not None
    assert failure.arguments == {"n": 4}  # "many" past 3: the smallest n that breaks it
    assert failure.cli == (
        f"webmcp-harness fuzz {session.url} --tool count_bad_output --property output-schema "
        "--example '{\"n\": 4}'" + (" --backend native" if session.backend_name == "native" else "")
    )
    assert "webmcp.fuzz(tools=['count_bad_output'], properties=['output-schema'], " in (
        failure.pytest
    )
    assert "example={'n': 4})" in failure.pytest
    # The reproduction checks exactly that input again.
    again = await run(session, "output-schema", "count_bad_output", example={"n": 4})
    assert status(again, "count_bad_output", "output-schema") == "failed"
    fine = await run(session, "output-schema", "count_bad_output", example={"n": 3})
    assert status(fine, "count_bad_output", "output-schema") == "passed"


async def test_near_misses_are_refused_by_the_harness_before_execute(session: Session) -> None:
    # The checked tool throws on what it gets wrong; the harness never let a near-miss
    # through to it (its calls through the pipeline end as validation errors).
    report = await run(session, "invalid-refused", "set_qty_checked", examples=20)
    assert status(report, "set_qty_checked", "invalid-refused") == "passed"
    refused = [o for o in session.history if o.tool == "set_qty_checked"]
    assert refused and all(o.error_kind == "validation" for o in refused)


async def test_writes_only_with_allow_writes_and_only_to_the_page_s_origin(
    session: Session, server: QAServer
) -> None:
    without = await run(session, "no-throw", "post_home", "post_elsewhere")
    [skipped] = [t for t in without.tools if t.tool == "post_home"]
    assert skipped.skipped is not None and "--allow-writes" in skipped.skipped
    assert server.hits == 0
    home = await run(session, "no-throw", "post_home", allow_writes=True, examples=2)
    assert status(home, "post_home", "no-throw") == "passed"
    assert server.hits >= 1  # the page's own origin took the write
    elsewhere = await run(session, "read-only", "post_elsewhere", allow_writes=True, examples=2)
    assert "sent POST /collect to http://127.0.0.1:1 (blocked)" in message(
        elsewhere, "post_elsewhere"
    )
    server.hits = 0


async def test_the_session_s_policy_and_answers_come_back(session: Session) -> None:
    policy, handler = session.policy, session.elicitation
    await run(session, "no-throw", "search_ok", examples=2)
    assert session.policy is policy and session.elicitation is handler


async def test_unknown_tools_and_properties_say_what_to_do(session: Session) -> None:
    with pytest.raises(ConfigError, match=r"No tool named 'nope'.*--wait-for-tool"):
        await run(session, "no-throw", "nope")
    with pytest.raises(ConfigError, match="Unknown property bogus; choose from no-throw"):
        await fuzz(session, FuzzOptions(properties=["bogus"]))


async def test_the_example_database_brings_a_failure_back_first(
    session: Session, tmp_path: Path
) -> None:
    database = tmp_path / "examples"
    first = await run(session, "no-throw", "search_throws", seed=None, database=database)
    assert first.database == str(database) and any(database.rglob("*"))
    found = first.tools[0].failed[0].failure
    assert found is not None and found.arguments == {"query": ""}
    again = await run(session, "no-throw", "search_throws", seed=None, database=database)
    replayed = again.tools[0].failed[0].failure
    assert replayed is not None and replayed.arguments == {"query": ""}
    assert replayed.found_after == 1  # the kept failure is the first input tried
    assert json.dumps(replayed.arguments) in again.describe()


async def test_a_request_path_that_carries_a_secret_is_masked_in_the_report(
    session: Session,
) -> None:
    report = await run(session, "read-only", "peek_posts_key", examples=2)
    assert "sent POST «a secret-looking path» (blocked)" in message(report, "peek_posts_key")
    assert CANARY not in report.describe() and CANARY not in report.model_dump_json()


async def test_tools_it_cannot_search_are_skipped_with_why_and_the_others_still_tested(
    harness: Harness, server: QAServer
) -> None:
    # Each used to end the whole run: hypothesis's Unsatisfiable (no value fits), a recursive
    # $ref ("nests too deeply": not tested at all, and reported as holding), a usage error
    # (the tool gone), a no-throw failure blamed on number rules (the schema is invalid).
    session = await harness.open(server.url("/odd"))
    try:
        odd = ("impossible", "sum_list", "vanishes", "old_draft")
        report = await run(session, "no-throw", *odd, examples=6)
    finally:
        await session.close()
    results = {t.tool: t.results[0] for t in report.tools}
    assert {name: r.status for name, r in results.items()} == {
        "impossible": "skipped",
        "sum_list": "failed",
        "vanishes": "skipped",
        "old_draft": "skipped",
    }
    assert "may allow no value at all" in results["impossible"].reason
    assert (  # the keywords of the member nothing can be drawn for
        "nothing the generator draws fits /properties/n (`type`, `minimum`, `maximum`)"
        in results["impossible"].reason
    )
    assert "always broken" in message(report, "sum_list")
    assert "the tool left the page during the run" in results["vanishes"].reason
    assert "not a valid JSON Schema" in results["old_draft"].reason
    assert "exclusiveMinimum" in results["old_draft"].reason
    assert not report.ok and report.unchecked() == 3
    assert report.describe().endswith(
        "1 property failed; 3 could not be checked (skipped, above) (seed 7)"
    )


async def test_a_tool_whose_parameters_have_a_uuid_and_a_duration_format_is_fuzzed(
    harness: Harness, server: QAServer
) -> None:
    # hypothesis-jsonschema draws neither format: the tool was skipped whole ("the schema may
    # allow no value at all"), exit 0, and its planted bug never found.
    session = await harness.open(server.url("/odd"))
    try:
        report = await run(session, "no-throw", "get_order", examples=6)
    finally:
        await session.close()
    assert status(report, "get_order", "no-throw") == "failed", report.describe()
    assert "crashes" in message(report, "get_order")
    [tool] = report.tools
    failure = tool.failed[0].failure
    assert failure is not None
    assert str(uuid.UUID(failure.arguments["order_id"])) == failure.arguments["order_id"]
    assert failure.arguments["within"].startswith("P")


async def test_an_example_for_a_tool_whose_schema_is_refused_is_not_blamed_on_number_rules(
    harness: Harness, server: QAServer
) -> None:
    session = await harness.open(server.url("/odd"))
    try:
        report = await run(session, "no-throw", "old_draft", example={"n": 2})
    finally:
        await session.close()
    [result] = report.tools[0].results
    assert result.status == "skipped" and "not a valid JSON Schema" in result.reason
    assert report.describe().endswith("no property could be checked (1 skipped, above) (seed 7)")


async def test_a_run_that_checked_nothing_does_not_say_everything_held(
    harness: Harness, server: QAServer
) -> None:
    # `bump` is not read-only: without allow_writes it is not called, so nothing is checked.
    session = await harness.open(server.url("/"))
    try:
        report = await run(session, "no-throw", "bump")
    finally:
        await session.close()
    assert report.ok and report.checked() == 0 and report.tools[0].skipped
    assert report.describe().endswith(
        "no property was checked: none applied to the tools (above) (seed 7)"
    )
    empty = await harness.open(server.url("/details"))  # a page without tools
    try:
        nothing = await fuzz(empty, FuzzOptions(seed=7, database=None))
    finally:
        await empty.close()
    assert nothing.describe().endswith("no property was checked: no tool to fuzz (seed 7)")
