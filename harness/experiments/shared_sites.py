"""Outside sites that episodes share, and the queue that runs their episodes one at a time.

Each worker serves its own instances of the bundled sites, so their episodes run side by
side. A ``url`` task's site is not the harness's: every worker (every Ray actor, on any
node) reaches the one instance at its URL, and the task's ``reset`` URL restores that one
state. Two of its episodes at once reset it under each other and change the state the
other is judged on, so the table would depend on ``--workers`` and on timing. The
:class:`EpisodeQueue` both runners take episodes from hands out an episode of such a site
only while no other episode of that site runs; every other episode goes in grid order, on
any free worker, as before.

A site is shared by origin (scheme, host and port) of a ``reset`` URL: the reset restores
the server behind it, whatever its path. A ``url`` task without a ``reset`` that starts on
such an origin takes its turn there too (its calls change the state the others reset).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from harness.experiments.grid import EpisodeSpec
from harness.experiments.tasks import TaskSpec
from harness.urls import origin_of


def shared_sites(tasks: Iterable[TaskSpec]) -> dict[str, list[str]]:
    """The outside sites whose episodes run one at a time: each origin of a ``reset`` URL,
    with the ids of the tasks that use it (those that reset it, those that start on it)."""
    tasks = list(tasks)
    reset = {origin_of(t.reset) for t in tasks if t.reset}
    sites: dict[str, list[str]] = {}
    for task in tasks:
        for site in sorted(_sites_of(task, reset)):
            if task.id not in sites.setdefault(site, []):
                sites[site].append(task.id)
    return {site: sites[site] for site in sorted(sites)}


def _sites_of(task: TaskSpec, reset: set[str]) -> set[str]:
    """The shared outside sites ``task`` uses: the one its reset restores, the one it starts on."""
    found = {origin_of(task.reset)} if task.reset else set()
    if task.url is not None and origin_of(task.url) in reset:
        found.add(origin_of(task.url))
    return found


class EpisodeQueue:
    """The episodes left to run, handed out in grid order, except that two episodes of one
    shared outside site (:func:`shared_sites`) never run at the same time: a worker takes
    the first episode whose sites are free, and waits only when every episode left waits
    for a site."""

    def __init__(self, episodes: Iterable[EpisodeSpec]) -> None:
        self._pending = list(episodes)
        self.sites = shared_sites({spec.task.id: spec.task for spec in self._pending}.values())
        """The shared outside sites of the episodes queued, with their tasks' ids."""
        self._sites = {
            spec.id: frozenset(_sites_of(spec.task, set(self.sites))) for spec in self._pending
        }
        self._busy: set[str] = set()
        self._changed = asyncio.Condition()

    async def take(self) -> EpisodeSpec | None:
        """The next episode to run (its sites are then held until :meth:`finished`); None
        when none is left."""
        async with self._changed:
            while self._pending:
                for index, spec in enumerate(self._pending):
                    sites = self._sites[spec.id]
                    if not sites & self._busy:
                        del self._pending[index]
                        self._busy |= sites
                        return spec
                await self._changed.wait()
            return None

    async def finished(self, spec: EpisodeSpec) -> None:
        """``spec`` ended (with a result or not): its sites are free for the next episode."""
        async with self._changed:
            self._busy -= self._sites[spec.id]
            self._changed.notify_all()

    async def put_back(self, spec: EpisodeSpec) -> None:
        """``spec`` did not run to an end (its worker died; :meth:`finished` freed its
        sites): run it again later."""
        async with self._changed:
            self._pending.append(spec)
            self._changed.notify_all()

    def drain(self) -> list[EpisodeSpec]:
        """The episodes no worker took (every worker gone), removed from the queue."""
        left, self._pending = self._pending, []
        return left
