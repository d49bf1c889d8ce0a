"""Elicitation: the user in the loop.

Every place the specs put a person between the agent and an action (a ``tool-elicit``
field, a form waiting for its submit, a policy escalation, a question a tool asks
mid-execution) becomes one :class:`ElicitationRequest`, answered by one
:class:`ElicitationHandler` with the shape of MCP's ``ElicitResult``.

- ``base``: requests, answers, :func:`ask`, the records, the auto handler and wrappers;
- ``withholding``: what a session withheld, replaced by its handles in every question it
  asks and every record of one;
- ``wording``: the harness's own sentences, and page text quoted as the page's (every
  display builds a question's lines there);
- ``answers``: answers files (YAML/JSON) and :class:`ScriptedHandler`;
- ``form``: the fields and rules of a question, and checking an answer against them;
- ``terminal``, ``browser``: a person answering at the terminal or in a browser tab;
- ``questions``: questions a tool asks from inside ``execute``;
- ``choice``: the handler an ``--elicit`` option names.

May import: the bottom layer only (``harness.models``, ``harness.errors``, ``harness.inputs``,
``harness.schemas``, ``harness.urls``): everything else asks the user through this package.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.elicitation.answers import (
        AnswersFile,
        ScriptedAnswer,
        ScriptedHandler,
        load_answers,
    )
    from harness.elicitation.base import (
        ACTIONS,
        DEFAULT_ELICITATION_TIMEOUT_S,
        Action,
        AutoHandler,
        ElicitationHandler,
        ElicitationRecord,
        ElicitationRequest,
        ElicitationResult,
        HandlerWrapper,
        Quoted,
        RecordingHandler,
        Source,
        TimeLimit,
        ask,
        close_handler,
        record_of,
    )
    from harness.elicitation.choice import ELICIT_CHOICES, handler_from_option
    from harness.elicitation.form import defaults_of

# The names below are imported on first use: a command's error line (which shows page text
# with harness.elicitation.wording) must not load the handlers, pydantic and rich.
_WHERE = {
    "AnswersFile": "answers",
    "ScriptedAnswer": "answers",
    "ScriptedHandler": "answers",
    "load_answers": "answers",
    "ELICIT_CHOICES": "choice",
    "handler_from_option": "choice",
    "defaults_of": "form",
}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{_WHERE.get(name, 'base')}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ACTIONS",
    "DEFAULT_ELICITATION_TIMEOUT_S",
    "ELICIT_CHOICES",
    "Action",
    "AnswersFile",
    "AutoHandler",
    "ElicitationHandler",
    "ElicitationRecord",
    "ElicitationRequest",
    "ElicitationResult",
    "HandlerWrapper",
    "Quoted",
    "RecordingHandler",
    "ScriptedAnswer",
    "ScriptedHandler",
    "Source",
    "TimeLimit",
    "ask",
    "close_handler",
    "defaults_of",
    "handler_from_option",
    "load_answers",
    "record_of",
]
