"""The trace writer: a run directory, ``trace.jsonl`` written as events happen, and artifacts.

``trace.jsonl`` holds only events (:mod:`harness.trace.events`), built from the agent view,
with what the sessions it records withheld replaced by their handles (:meth:`TraceRecorder.watch`).
The artifacts (a Playwright ``trace.zip``, screenshots, a HAR) record the page as the
*user* sees it, so they are off by default.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Literal

from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError
from pydantic import BaseModel, ConfigDict

from harness.errors import ConfigError, file_in_the_way
from harness.stages.scrubbing import Scrubber
from harness.trace.events import (
    HAR_FILE,
    PLAYWRIGHT_TRACE_FILE,
    SCREENSHOT_DIR,
    TRACE_FILE,
    E,
    ErrorOccurred,
    ScreenshotTaken,
    TraceEvent,
)


def check_run_dir(run_dir: Path) -> None:
    """A :class:`ConfigError` unless ``run_dir`` is new or empty (a run never overwrites one)
    and can be made (no file where one of its directories should be)."""
    blocked = file_in_the_way(run_dir)
    if blocked is not None:
        raise ConfigError(
            f"The trace directory {run_dir} cannot be made: {blocked} is a file, not a "
            "directory; give a path in a directory."
        )
    if run_dir.exists() and not run_dir.is_dir():
        raise ConfigError(
            f"The trace directory {run_dir} is a file; give a new or empty directory."
        )
    if run_dir.exists() and any(run_dir.iterdir()):
        raise ConfigError(
            f"The trace directory {run_dir} exists and is not empty; give each run a new directory."
        )


ArtifactMode = Literal["off", "on", "retain-on-failure"]


class TraceOptions(BaseModel):
    """Which user-view artifacts a run keeps besides ``trace.jsonl`` (all off by default)."""

    model_config = ConfigDict(frozen=True)

    playwright: ArtifactMode = "off"
    screenshots: bool = False
    har: bool = False

    def requested(self) -> list[str]:
        """The artifacts asked for, as ``run-started`` lists them."""
        wanted = [f"playwright:{self.playwright}"] if self.playwright != "off" else []
        return wanted + ["screenshots"] * self.screenshots + ["har"] * self.har


class TraceRecorder:
    """Numbers, timestamps, keeps and (with a run directory) writes trace events.

    ``listener`` sees every event as it is recorded (the CLI's live display).
    """

    def __init__(
        self,
        run_dir: str | Path | None = None,
        options: TraceOptions | None = None,
        *,
        listener: Callable[[TraceEvent], None] | None = None,
        withheld: Scrubber | None = None,
    ) -> None:
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self._withheld: list[Scrubber] = []
        if withheld is not None:
            self.watch(withheld)
        self.options = options or TraceOptions()
        self.events: list[TraceEvent] = []
        self.listener = listener
        self._started = time.perf_counter()
        self._file: IO[str] | None = None
        self._tracing = False
        if self.run_dir is not None:
            check_run_dir(self.run_dir)
            self.run_dir.mkdir(parents=True, exist_ok=True)
            self._file = (self.run_dir / TRACE_FILE).open("w", encoding="utf-8")
        elif self.options != TraceOptions():
            raise ConfigError(
                "Artifacts (Playwright trace, screenshots, HAR) need a trace directory."
            )

    def elapsed_ms(self) -> float:
        """Milliseconds since the recorder was made (the run's clock)."""
        return (time.perf_counter() - self._started) * 1000

    def record(self, event: E) -> E:
        """Number and timestamp ``event``, keep it, write it, and show it to the listener."""
        stamped = self._scrubbed(event).model_copy(
            update={"seq": len(self.events) + 1, "at_ms": round(self.elapsed_ms(), 1)}
        )
        self.events.append(stamped)  # type: ignore[arg-type]
        if self._file is not None:
            self._file.write(stamped.model_dump_json(exclude_none=True) + "\n")
            self._file.flush()
        if self.listener is not None:
            self.listener(stamped)  # type: ignore[arg-type]
        return stamped

    def watch(self, withheld: Scrubber) -> None:
        """Write every event from now on with the texts ``withheld`` holds (a session's
        scrubber) replaced by their handles: a tool list, a URL, a tool name or an argument
        that repeats one. Every recorder of a session's events watches its scrubber; one that
        records several sessions (a conformance file, the selftest) watches each."""
        if not any(known is withheld for known in self._withheld):
            self._withheld.append(withheld)

    def _scrubbed(self, event: E) -> E:
        active = [w for w in self._withheld if w]  # nothing withheld yet: nothing to look for
        if not active:
            return event
        data = event.model_dump(mode="json")
        scrubbed = data
        for withheld in active:
            scrubbed = withheld.scrub(scrubbed)
        return event if scrubbed is data else type(event).model_validate(scrubbed)

    # -- user-view artifacts ----------------------------------------------------
    async def start_artifacts(self, context: BrowserContext) -> None:
        """Start the Playwright trace and the HAR, as the options ask."""
        if self.run_dir is None:
            return
        if self.options.playwright != "off":
            await context.tracing.start(screenshots=True, snapshots=True)
            self._tracing = True
        if self.options.har:
            # Records every request into the HAR; Playwright writes it when the context closes.
            await context.route_from_har(
                self.run_dir / HAR_FILE, update=True, update_content="embed", update_mode="full"
            )

    async def screenshot(self, page: Page, step: int) -> None:
        """A screenshot after a call, when the options ask for it."""
        if self.run_dir is None or not self.options.screenshots:
            return
        relative = f"{SCREENSHOT_DIR}/step-{step:03d}.png"
        try:
            await page.screenshot(path=self.run_dir / relative)
        except PlaywrightError as exc:
            self.record(
                ErrorOccurred(step=step, where="harness", message=f"no screenshot: {exc.message}")
            )
            return
        self.record(ScreenshotTaken(step=step, path=relative))

    async def finish_artifacts(self, context: BrowserContext, *, ok: bool) -> list[str]:
        """Stop the Playwright trace (kept per the options); the files kept beside the trace,
        by path relative to the run directory."""
        kept: list[str] = []
        if self.run_dir is None:
            return kept
        if self._tracing:
            self._tracing = False
            keep = self.options.playwright == "on" or not ok
            try:
                if keep:
                    await context.tracing.stop(path=self.run_dir / PLAYWRIGHT_TRACE_FILE)
                    kept.append(PLAYWRIGHT_TRACE_FILE)
                else:
                    await context.tracing.stop()
            except PlaywrightError as exc:
                self.record(
                    ErrorOccurred(where="harness", message=f"no Playwright trace: {exc.message}")
                )
        if self.options.har:
            kept.append(HAR_FILE)  # written when the browser context closes
        if self.options.screenshots and (self.run_dir / SCREENSHOT_DIR).is_dir():
            shots = sorted((self.run_dir / SCREENSHOT_DIR).glob("*.png"))
            kept += [f"{SCREENSHOT_DIR}/{shot.name}" for shot in shots]
        return kept

    def close(self) -> None:
        """Close ``trace.jsonl``."""
        if self._file is not None:
            self._file.close()
            self._file = None


def append_event(run_dir: Path, event: E, *, at_ms: float) -> E:
    """Add ``event`` after the last of a closed trace's events (numbered after it; at
    ``at_ms`` or the last event's time, whichever is later): what the run's owner alone
    knows once the run is over — that it was cut at its time limit, say."""
    path = run_dir / TRACE_FILE
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    last: dict[str, object] = {}
    for line in reversed(lines):
        try:
            found = json.loads(line)
        except ValueError:
            continue
        if isinstance(found, dict):
            last = found
            break
    seq, at = last.get("seq"), last.get("at_ms")
    stamped = event.model_copy(
        update={
            "seq": (seq if isinstance(seq, int) else len(lines)) + 1,
            "at_ms": round(max(at_ms, at if isinstance(at, int | float) else 0.0), 1),
        }
    )
    run_dir.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as file:
        file.write(stamped.model_dump_json(exclude_none=True) + "\n")
    return stamped
