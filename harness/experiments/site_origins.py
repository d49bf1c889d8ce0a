"""The bundled sites' fixed origins: how an experiment's answers files name them.

``webmcp-harness sites`` serves each bundled site on a fixed port — the store on
``http://127.0.0.1:8107`` — and the README and answers files name the sites by those
origins. An experiment's workers serve instances of their own on free ports (resetting
one never disturbs another worker's episode), so there the store asks its questions from
``http://127.0.0.1:43427``, and from another port on the next worker or Ray actor.
:func:`served_as_fixed` maps the origins one worker serves to the fixed ones, for its
episodes' answers to match by (the question and the trace keep the origin it really has);
:func:`origin_warnings` says, when a grid loads, which entries name an origin that no page
of its episodes has.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from harness.elicitation.answers import answers_from_data
from harness.inputs import parse_input
from harness.urls import origin_of, parse

if TYPE_CHECKING:
    from harness.experiments.tasks import TaskSpec

ALIAS_HOST = "localhost"
"""A bundled site's second origin, on the same port: the evil and keys sites' frames and
references are served to ``localhost``."""


def _origin(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def served_as_fixed(sites: Any) -> dict[str, str]:
    """Each origin ``sites`` (a worker's ``RunningSites``) serves a bundled site at → the
    site's origin on its fixed port: ``http://127.0.0.1:43427`` → ``http://127.0.0.1:8107``,
    and the same as ``localhost``."""
    from harness.sites.server import SITES

    mapped: dict[str, str] = {}
    for name, running in sites.sites.items():
        fixed = SITES[name].port if name in SITES else 0
        if fixed:
            for host in (running.host, ALIAS_HOST):
                mapped[_origin(host, running.port)] = _origin(host, fixed)
    return mapped


def _fixed(name: str) -> list[str]:
    """The bundled site ``name``'s origins on its fixed port (none: it has no fixed port)."""
    from harness.sites.server import DEFAULT_HOST, SITES

    port = SITES[name].port
    return [_origin(host, port) for host in (DEFAULT_HOST, ALIAS_HOST)] if port else []


def fixed_origins(names: Iterable[str]) -> dict[str, str]:
    """The fixed origins of the bundled sites ``names`` and of those served along with them
    (an attack site's attacker) → each site's name."""
    from harness.sites.server import SITES

    wanted = list(dict.fromkeys(names))
    for name in list(wanted):
        wanted.extend(r for r in SITES[name].requires if r not in wanted)
    return {origin: name for name in wanted for origin in _fixed(name)}


def _is_loopback(origin: str) -> bool:
    url = parse(origin)
    host = url.hostname.strip("[]") if url is not None else ""
    if host == ALIAS_HOST or host.endswith(f".{ALIAS_HOST}"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


CAN_ONLY_ANSWER = {
    "origin": "a page an agent reaches by navigating there",
    "destination": "a navigation to a site outside the grid",
}


class AnswersSource(Protocol):
    """An answers file as a grid holds it (:class:`harness.experiments.grid.NamedSource`,
    which imports this module: named by its shape, not imported)."""

    @property
    def name(self) -> str: ...
    @property
    def path(self) -> str | None: ...
    @property
    def text(self) -> str | None: ...


def origin_warnings(answers: Iterable[AnswersSource], tasks: list[TaskSpec]) -> list[str]:
    """What the answers files of a grid name that its episodes never ask from: an
    ``origin`` that is neither a bundled site of the grid (by its fixed origin) nor where
    a ``url`` task starts, and a ``destination`` that is such an origin on loopback (an
    outside destination is an agent's to choose). Such an entry never answers the grid's
    pages, and the cells of its file would measure ``cancel`` under the file's name."""
    from harness.sites.server import SITES

    sites = fixed_origins(name for task in tasks for name in task.sites())
    starts = sorted({origin_of(task.url) for task in tasks if task.url is not None})
    shown = [f"{name} {origin}" for origin, name in sites.items() if ALIAS_HOST not in origin]
    grid_has = (
        f"its bundled sites are {', '.join(shown) or 'none'} (each worker serves them on ports "
        "of its own, and an answers file names them by these origins, as `webmcp-harness "
        "sites` serves them)"
    )
    if starts:
        grid_has += f"; its url tasks start at {', '.join(starts)}"
    found: list[str] = []
    for source in answers:
        if source.text is None:
            continue
        label = source.path or source.name
        data = parse_input(source.text, "yaml", f"the answers file {label}")
        for number, entry in enumerate(answers_from_data(data, label), 1):
            for key, can in CAN_ONLY_ANSWER.items():
                value = getattr(entry, key)
                if value in (None, "null") or value in sites or value in starts:
                    continue
                if key == "destination" and not _is_loopback(value):
                    continue
                other = next((n for n in SITES if value in _fixed(n)), None)
                what = (
                    f"the {other} site's, which this grid does not serve"
                    if other is not None
                    else "no site of this grid"
                )
                found.append(
                    f"{label}: entry #{number}: {key} {value!r} is {what}; {grid_has}. "
                    f"The entry can answer only {can}."
                )
    return found
