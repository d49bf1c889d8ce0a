"""The injected JS and the private channel it talks to Python through.

`injected_js/CHANNEL.md` is the contract. This module assembles the init script
(plain files concatenated inside one strict-mode IIFE, no build step), installs it
with the binding on a browser context, authenticates what the page sends, and
sends commands to a frame's private entry point.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from playwright.async_api import BrowserContext, Frame

Mode = Literal["polyfill", "native"]

# Order matters: later files use what earlier ones define.
FILES: tuple[str, ...] = (
    "primordials.js",
    "events.js",
    "model_context.js",
    "legacy.js",
    "native_layer.js",
    "channel.js",
)


def _js_dir() -> Path:
    """`injected_js/`, shipped inside the package as `harness.injected_js`."""
    return Path(str(resources.files("harness.injected_js")))


def read_js(files: tuple[str, ...] = FILES) -> str:
    """The concatenated source of the injected files (without the IIFE wrapper)."""
    base = _js_dir()
    parts = []
    for name in files:
        path = base / name
        if path.is_file():
            parts.append(f"// ---- {name} ----\n{path.read_text(encoding='utf-8')}")
    return "\n".join(parts)


@dataclass(frozen=True)
class ChannelKeys:
    """The per-Harness random names and secret that make the channel private."""

    secret: str = field(default_factory=lambda: secrets.token_hex(16))
    binding: str = field(default_factory=lambda: "__wmh_b_" + secrets.token_hex(6))
    entry: str = field(default_factory=lambda: "__wmh_e_" + secrets.token_hex(6))


def build_init_script(keys: ChannelKeys, mode: Mode) -> str:
    """The whole init script for one Harness and backend mode."""
    config = json.dumps(
        {"secret": keys.secret, "binding": keys.binding, "entry": keys.entry, "mode": mode}
    )
    return (
        f'(() => {{\n"use strict";\nconst HARNESS = Object.freeze({config});\n{read_js()}\n}})();\n'
    )


Message = dict[str, Any]
MessageHandler = Callable[[Frame, Message], Awaitable[None] | None]


class PageChannel:
    """Installs the injected JS on a context and carries authenticated messages.

    Messages that do not carry the secret are dropped and counted in
    :attr:`rejected`, so tests (and curious users) can see forgery attempts.
    """

    def __init__(self, keys: ChannelKeys, mode: Mode) -> None:
        self.keys = keys
        self.mode: Mode = mode
        self.rejected = 0
        self._handler: MessageHandler | None = None

    async def install(self, context: BrowserContext, handler: MessageHandler) -> None:
        """Expose the binding, then add the init script (which captures and hides it)."""
        self._handler = handler
        await context.expose_binding(self.keys.binding, self._on_binding)
        await context.add_init_script(build_init_script(self.keys, self.mode))

    async def _on_binding(self, source: dict[str, Any], payload: Any = None, *_: Any) -> None:
        message = self._authenticate(payload)
        frame = source.get("frame")
        if message is None or frame is None or self._handler is None:
            return
        outcome = self._handler(frame, message)
        if outcome is not None:
            await outcome

    def _authenticate(self, payload: Any) -> Message | None:
        if not isinstance(payload, str):
            self.rejected += 1
            return None
        try:
            message = json.loads(payload)
        except ValueError:
            self.rejected += 1
            return None
        if not isinstance(message, dict) or message.pop("secret", None) != self.keys.secret:
            self.rejected += 1
            return None
        return message

    async def command(self, frame: Frame, command: Message) -> Any:
        """Run one command on the frame's private entry point and return its answer."""
        return await frame.evaluate(
            "([e, s, c]) => window[e](s, c)", [self.keys.entry, self.keys.secret, command]
        )
