"""How long a check against a page's schema may take: one budget for all of its work.

A page's schema, or the value checked against it, can make a check take minutes: alternatives
nested in alternatives (``anyOf`` of two ``$ref``s, 17 levels: 2¹⁷ branches, 16 to 43 s), a
``pattern`` that backtracks on many strings (:mod:`harness.schemas.patterns`), ``uniqueItems``
over thousands of objects (jsonschema compares each pair: 3 000 objects, 14 s). So:

- :func:`within_budget` gives every check inside it one deadline (:data:`SCHEMA_BUDGET_S`);
  each validator from :func:`harness.schemas.validator_for` looks at the clock at every
  keyword and type check (:func:`on_time`) and stops past it (:class:`SchemaTimeout`);
- :func:`unique_items` sorts instead of comparing pairs;
- :func:`off_loop` runs a check in a worker thread, so that a check that takes its whole
  budget holds up only its own call, never the event loop every session shares.

May import: nothing of the harness.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import itertools
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple, ParamSpec, TypeVar

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

P = ParamSpec("P")
T = TypeVar("T")

SCHEMA_BUDGET_S = 2.0
"""How long one check of a value against a page's schema may take, all of its work
together (every keyword, every ``pattern`` match) when run :func:`within_budget`."""


class SchemaTimeout(Exception):
    """A check against a page's schema ran past its budget (:func:`within_budget`)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the schema could not be checked within {seconds:g} s")
        self.seconds = seconds
        """The budget the check had."""


class _Budget(NamedTuple):
    deadline: float  # time.monotonic()
    seconds: float


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar(
    "schema_budget", default=None
)


@contextlib.contextmanager
def within_budget(seconds: float | None = None) -> Iterator[None]:
    """Every check against a page's schema inside the block shares one deadline,
    ``seconds`` from now (default :data:`SCHEMA_BUDGET_S`, read now; an enclosing block's
    earlier deadline stays): past it, the next keyword, type check or ``pattern`` match
    raises :class:`SchemaTimeout`. A check outside every block is not bounded."""
    seconds = SCHEMA_BUDGET_S if seconds is None else seconds
    budget = _Budget(time.monotonic() + seconds, seconds)
    outer = _BUDGET.get()
    token = _BUDGET.set(budget if outer is None or budget.deadline < outer.deadline else outer)
    try:
        yield
    finally:
        _BUDGET.reset(token)


def time_left() -> float | None:
    """Seconds left of the current budget (at most 0 once spent); None outside any."""
    budget = _BUDGET.get()
    return None if budget is None else budget.deadline - time.monotonic()


def on_time() -> None:
    """Raise :class:`SchemaTimeout` when the current budget is spent: called by every
    keyword and type check of a validator from :func:`validator_for`, and by work that
    walks a page's schema on its own (redaction's walk)."""
    budget = _BUDGET.get()
    if budget is not None and time.monotonic() > budget.deadline:
        raise SchemaTimeout(budget.seconds)


def spent() -> SchemaTimeout:
    """The :class:`SchemaTimeout` of the current budget, for work that ran to its deadline."""
    budget = _BUDGET.get()
    return SchemaTimeout(SCHEMA_BUDGET_S if budget is None else budget.seconds)


_WORKERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="schema-check")


async def off_loop(check: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``check(*args, **kwargs)`` in a worker thread (with the caller's context), so that
    the event loop (every other session, every other MCP client) runs on meanwhile. The
    check bounds itself (:func:`within_budget`): a thread cannot be stopped from outside."""
    context = contextvars.copy_context()
    call = functools.partial(context.run, check, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_WORKERS, call)


_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")


def _keyword_on_time(keyword: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(keyword)
    def on_time_keyword(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        on_time()
        return keyword(validator, value, instance, schema)

    return on_time_keyword


@functools.cache
def bounded(cls: Any) -> Any:
    """``cls`` whose every keyword and every type check first looks at the clock (:func:`on_time`).

    jsonschema's own recursions pass through one or the other: a ``$ref`` or an ``anyOf``
    through the keywords of what it leads to, the walks of ``unevaluated*`` (which follow
    ``allOf`` and ``$ref`` without a keyword) through a type check of every subschema. So a
    check stops soon after its budget is spent, however its schema branches. ``uniqueItems``
    sorts (:func:`unique_items`)."""
    checker = cls.TYPE_CHECKER

    def typed(name: str) -> Callable[[Any, Any], bool]:
        def is_type(_checker: Any, instance: Any) -> bool:
            on_time()
            return bool(checker.is_type(instance, name))

        return is_type

    keywords = {**cls.VALIDATORS, "uniqueItems": unique_items}
    return validators.extend(  # type: ignore[no-untyped-call]
        cls,
        {name: _keyword_on_time(keyword) for name, keyword in keywords.items()},
        type_checker=checker.redefine_many({name: typed(name) for name in _TYPES}),
    )


_JSONSCHEMA_UNIQUE_ITEMS = Draft202012Validator.VALIDATORS["uniqueItems"]


def unique_items(
    validator: Any, unique: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    """``uniqueItems`` in O(n log n): the items sorted by a key that is equal exactly when
    JSON Schema calls two values equal (:func:`_equality_key`), neighbours compared.
    jsonschema compares objects pair by pair: 3 000 of them took 14 s, 8 000 took 97."""
    if not unique or not validator.is_type(instance, "array"):
        return
    fresh = itertools.count()
    try:
        keys = sorted(_equality_key(item, fresh) for item in instance)
    except TypeError:  # not JSON (a Python caller's own values): jsonschema's way
        yield from _JSONSCHEMA_UNIQUE_ITEMS(validator, unique, instance, schema)
        return
    if any(one == other for one, other in itertools.pairwise(keys)):
        yield ValidationError(f"{instance!r} has non-unique elements")


def _equality_key(value: Any, fresh: Iterator[int]) -> tuple[Any, ...]:
    """A key that sorts among every JSON value's, and is equal to another exactly when
    JSON Schema calls the two values equal: ``1`` and ``1.0`` alike, ``true`` and ``1``
    not; objects by their members whatever their order, arrays item by item. A NaN
    equals nothing (``fresh`` numbers it). Raises TypeError for what is not JSON."""
    if value is None:
        return (0,)
    if isinstance(value, bool):
        return (1, value)
    if isinstance(value, int | float):
        return (2, value) if value == value else (6, next(fresh))
    if isinstance(value, str):
        return (3, value)
    if isinstance(value, Mapping):
        return (5, tuple(sorted((key, _equality_key(v, fresh)) for key, v in value.items())))
    if isinstance(value, Sequence):
        return (4, tuple(_equality_key(item, fresh) for item in value))
    raise TypeError(f"not a JSON value: {type(value).__name__}")
