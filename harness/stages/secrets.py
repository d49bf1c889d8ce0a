"""What a secret looks like: key shapes and long random tokens, in any JSON value.

Used where the harness judges what a page *returned* without trusting its declarations:
the site audit's probes (a secret the tool did not declare) and the QA tools' property
checks (a secret-looking value outside an ``x-sensitive`` field). Nothing here ever
returns any part of a value: only where it was and what it looked like.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

KEY_SHAPES = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("an API key (sk-/pk-)", r"\b(?:sk|pk|rk)[-_](?:live|test|proj)?[-_]?[A-Za-z0-9]{16,}"),
        ("a GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"),
        ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        ("an AWS access key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        ("a Google API key", r"\bAIza[0-9A-Za-z_\-]{30,}"),
        ("a JWT", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        ("a private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    )
)
TOKEN = re.compile(r"[A-Za-z0-9_\-+/=]{24,}")
MIN_ENTROPY_BITS = 3.5


def entropy(text: str) -> float:
    """Shannon entropy of ``text`` in bits per character."""
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values()) if text else 0.0


def secret_kind(value: str) -> str | None:
    """What ``value`` looks like when it looks like a secret (a key shape, or a long random
    token), else None. Never returns any part of the value."""
    for kind, pattern in KEY_SHAPES:
        if pattern.search(value):
            return kind
    if re.match(r"\s*(?:https?://|/)", value):
        return None  # a URL or a path: a place, not a value
    for token in TOKEN.findall(value):
        has_digit = any(c.isdigit() for c in token)
        has_alpha = any(c.isalpha() for c in token)
        if has_digit and has_alpha and entropy(token) >= MIN_ENTROPY_BITS:
            return f"a {len(token)}-character random-looking token"
    return None


def secret_leaves(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(JSON pointer, kind) of every string in ``value`` that looks like a secret."""
    if isinstance(value, str):
        kind = secret_kind(value)
        if kind:
            yield path or "/", kind
    elif isinstance(value, dict):
        if value.get("type") == "secret_reference":
            return  # a reference is how a secret should travel: the redemption probes check it
        for key, item in value.items():
            key_kind = secret_kind(str(key))
            if key_kind:
                yield f"{path}/«key»", key_kind
            # A key that looks secret never appears in a path (evidence is written to reports).
            yield from secret_leaves(item, f"{path}/{'«key»' if key_kind else key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from secret_leaves(item, f"{path}/{index}")
