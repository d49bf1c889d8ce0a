"""Episode ids: a cell's coordinates as the name of its directory, its result row and its
cassette (``task.agent.policy.backend.answers[.attack.annotations].sSEED``).

Ids keep A–Z a–z 0–9 _ . - (a name can never steer a path), fit a file name, and are
unique: an agent's name that loses characters here gets a hash of itself, and two cells
that would still share one are refused when the grid loads
(:func:`harness.experiments.grid.clash` says why).
"""

from __future__ import annotations

import hashlib
import re

MAX_EPISODE_ID = 200
"""The longest episode id: it names a directory and a cassette (``<id>.json``), and a file
name has 255 bytes. A longer id keeps its first part and ends with a hash of the whole."""

NAME_SLUG = 80
"""The longest part of an episode id a name gives (what
:func:`~harness.experiments.tasks.slug` keeps)."""


def name_slug(name: str) -> str:
    """``name`` made fit for an episode id and a file name. A name of ASCII characters keeps
    its :func:`~harness.experiments.tasks.slug` (``GPT-4o mini`` → ``GPT-4o-mini``: ids as
    they always were); one with other characters, too long, or with nothing left gets what
    is left and a hash of the whole name (``агент`` → ``agent-1a2b3c4d``), so that two
    names never share one by losing what told them apart."""
    kept = re.sub(r"[^A-Za-z0-9_.]+", "-", name).strip("-.")
    if name.isascii() and 0 < len(kept) <= NAME_SLUG:
        return kept
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    head = kept[: NAME_SLUG - len(digest) - 1].rstrip("-.") or "agent"
    return f"{head}-{digest}"


def episode_id(parts: list[str], seed: int) -> str:
    """``task.agent.policy.backend.answers[.attack.annotations].sSEED``; past
    :data:`MAX_EPISODE_ID` its head is cut and a hash of the whole id keeps it unique."""
    whole = ".".join([*parts, f"s{seed}"])
    if len(whole) <= MAX_EPISODE_ID:
        return whole
    tail = f"-{hashlib.sha256(whole.encode()).hexdigest()[:12]}.s{seed}"
    return whole[: MAX_EPISODE_ID - len(tail)].rstrip(".-") + tail
