"""An experiment's ``js`` success checks judge a site the site cannot patch, within a time
limit (issue 24, point 6). The page (``tests/pages/x_check_hostile.html``) patches the DOM
method, ``JSON`` and ``Promise`` the checks use, then blocks its main thread; both backends."""

from __future__ import annotations

import asyncio

import pytest

from harness import Session
from harness.experiments import checks
from harness.experiments.checks import Evidence, evaluate
from harness.experiments.tasks import JsCheck

PAGE = "x_check_hostile.html"

pytestmark = pytest.mark.timeout(120)


def evidence(session: Session) -> Evidence:
    return Evidence(events=[], answer="", start_url=session.page.url, page=session.page)


async def judged(session: Session, js: str) -> checks.CheckOutcome:
    return await asyncio.wait_for(evaluate(JsCheck(js=js), evidence(session)), 30)


async def test_a_js_check_reads_the_page_as_it_is_not_as_it_patched_itself(
    page_session: Session,
) -> None:
    counted = await judged(page_session, "document.querySelectorAll('li.todo').length === 2")
    assert counted.passed, counted.why
    parsed = await judged(page_session, "JSON.parse('{\"done\": false}').done === false")
    assert parsed.passed, parsed.why
    awaited = await judged(page_session, "Promise.resolve(7).then((n) => n === 7)")
    assert awaited.passed, awaited.why
    lied = await judged(page_session, "JSON.parse('{}').done === true")
    assert not lied.passed  # the page's own JSON.parse would have said yes


async def test_a_js_check_on_a_page_that_never_yields_fails_in_time(
    page_session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checks, "CHECK_TIMEOUT_MS", 1000)
    await page_session.page.evaluate("wedge()")
    outcome = await judged(page_session, "document.title !== ''")
    assert not outcome.passed and "no answer within 1 s" in outcome.why


async def test_world_page_reads_the_page_s_script_state_and_still_ends_in_time(
    page_session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    await page_session.page.evaluate("window.checkedFlag = 'set by the page'")
    flag = "window.checkedFlag === 'set by the page'"
    isolated = await judged(page_session, flag)
    assert not isolated.passed  # the isolated world does not see the page's globals
    page_world = await asyncio.wait_for(
        evaluate(JsCheck(js=flag, world="page"), evidence(page_session)), 30
    )
    assert page_world.passed, page_world.why
    monkeypatch.setattr(checks, "CHECK_TIMEOUT_MS", 1000)
    await page_session.page.evaluate("wedge()")
    wedged = await asyncio.wait_for(
        evaluate(JsCheck(js="true", world="page"), evidence(page_session)), 30
    )
    assert not wedged.passed and "no answer within 1 s" in wedged.why
