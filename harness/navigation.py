"""Agent navigations: leaving the start URL's origin needs the user's yes.

A navigation is a request like any other: an agent that puts data in a URL's
query can send it anywhere. Agents (the loop, MCP clients) navigate through
:func:`navigation_refusal`, so a cross-origin move is asked of the user — and
nobody there to answer means no.
"""

from __future__ import annotations

from harness.elicitation import ElicitationRequest, ask
from harness.frames import origin_of
from harness.session import Session

RULE = "navigate-cross-origin"


async def navigation_refusal(session: Session, start_url: str, target: str) -> str | None:
    """Why the agent may not open ``target`` (None: it may).

    Same-origin targets (with the start URL) are allowed; any other origin is put
    to the session's elicitation handler as a policy question.
    """
    home, there = origin_of(start_url), origin_of(target)
    if there == home:
        return None
    answer = await ask(
        session.elicitation,
        ElicitationRequest(
            source="policy",
            rule=RULE,
            message=f"The agent wants to leave {home} and open {target}. Allow it?",
            origin=home,
            tool="navigate",
            facts={"from": session.url, "to": target},
        ),
    )
    if answer.action == "accept":
        return None
    why = f" ({answer.reason})" if answer.reason else ""
    return (
        f"Not navigated: the user did not allow leaving {home} for {there} "
        f"(answer: {answer.action}{why})."
    )
