"""Every exception the harness raises, in one hierarchy.

Tool failures are not exceptions: a tool that throws, times out or gets bad
arguments yields a result with ``isError``. Exceptions are for the caller's
mistakes and for the environment (no browser, unreachable page).
"""

from __future__ import annotations

from pathlib import Path

# The largest input file (plan, grid, policy, answers, baseline, report) the harness reads:
# far beyond any real one, and small enough that a wrong path (a disk image, a log) is
# refused at once instead of parsed for minutes.
MAX_INPUT_FILE_BYTES = 10 * 1024 * 1024


class HarnessError(Exception):
    """Base class: every error the harness raises on purpose."""


DOCTOR_HINT = (
    "`webmcp-harness doctor` shows which Chromium the harness finds, its flags, and what "
    "WebMCP a page gets there."
)
"""Said by every error about the browser or its WebMCP: the command that looks into it."""


class BrowserNotFound(HarnessError):
    """No Chromium executable could be found or installed."""


class NativeWebMCPUnavailable(HarnessError):
    """The ``native`` backend was asked for, but this Chromium has no native WebMCP."""


class PageUnreachable(HarnessError):
    """The page could not be loaded (connection refused, DNS error, bad URL)."""


class UnknownTool(HarnessError):
    """A call named a tool the page has not registered."""

    def __init__(self, name: str, available: list[str], hint: str = "") -> None:
        """``hint``: what the caller can do about it (e.g. the CLI's waiting options)."""
        self.name = name
        self.available = available
        listed = ", ".join(available) if available else "none"
        said = f"No tool named {name!r} on this page (available: {listed})."
        super().__init__(f"{said} {hint}" if hint else said)


class SessionClosed(HarnessError):
    """The session (or its page) was closed; open a new one."""


class PageCrashed(SessionClosed):
    """The session's page crashed (its renderer died) or its browser went away; the
    message says how to recover (a new session; a new Harness when the browser is gone)."""


class ConfigError(HarnessError):
    """A harness option or input file is invalid; the message says which and why."""


class ReportsNotWritten(HarnessError):
    """A run's reports, or the baseline it updates, could not be written once the run was
    done (a full disk, a directory made read-only meanwhile: what the command checked
    before the run had changed); the message names the file, the reason and what was
    written. ``reports``: the directory of the reports when they were written."""

    def __init__(self, message: str, reports: Path | None = None) -> None:
        super().__init__(message)
        self.reports = reports


class AgentStopped(HarnessError):
    """An agent ended its run early; ``reason`` becomes the run's stop reason.

    The scripted agent raises it for an unmet ``expect`` (``expect-failed``) or a
    step the page refused (``step-failed``); the replay agent for results that
    differ from the recording (``replay-diverged``).
    """

    def __init__(self, reason: str, detail: str) -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(detail)


class ProviderError(AgentStopped):
    """An LLM agent's provider failed: an HTTP error, no connection, or an unusable answer.

    The run stops with reason ``provider-error``; the message names the endpoint
    and what it said (API keys are never in it).
    """

    def __init__(self, detail: str) -> None:
        super().__init__("provider-error", detail)


class CassetteError(AgentStopped):
    """A cassette is missing or unreadable, or the run's requests differ from the recorded ones.

    The run stops with reason ``cassette-error``; record the cassette again.
    """

    def __init__(self, detail: str) -> None:
        super().__init__("cassette-error", detail)


class RevealError(HarnessError):
    """A withheld value could not be revealed to the user; the message says why and what to do."""


class UnknownHandle(RevealError):
    """No withheld value has that handle in this session."""

    def __init__(self, handle: str) -> None:
        self.handle = handle
        super().__init__(
            f"No withheld value has the handle {handle!r} in this session. Handles belong to "
            "the session whose call produced them and are forgotten when it closes: reveal "
            "before closing it."
        )


class RedemptionRefused(RevealError):
    """The harness refused to redeem a secret reference, and sent no request for it."""


class ReferenceExpired(RedemptionRefused):
    """The reference's ttl has passed; the harness refused it without asking the site."""


class ReferenceGone(RevealError):
    """The site answered 410 Gone: the reference was already redeemed, or has expired."""


class RedemptionUnauthorized(RevealError):
    """The site answered 401 or 403: this session is not logged in there, or not allowed."""


class ReferenceNotFound(RevealError):
    """The site answered 404: it does not know the reference."""


class RedemptionRateLimited(RevealError):
    """The site answered 429; ``retry_after`` is its ``Retry-After`` in seconds, if it sent one."""

    def __init__(self, message: str, retry_after: float | None) -> None:
        self.retry_after = retry_after
        super().__init__(message)


class RedemptionFailed(RevealError):
    """Redemption failed otherwise: another status, a malformed answer, or no connection."""

    def __init__(self, message: str, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class PolicyError(ConfigError):
    """A policy file cannot be used; the one-line message names the file, the rule and why."""


class ExperimentError(HarnessError):
    """An experiment cannot run: its output directory, a resume of a changed grid, or its runner."""


def file_in_the_way(path: Path) -> Path | None:
    """The nearest existing ancestor of ``path`` when it is a file (so nothing can be made
    at ``path``), else None."""
    for parent in path.parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def read_input_file(path: str | Path, what: str, error: type[ConfigError] = ConfigError) -> str:
    """The text of a file the user named (``what``: "plan", "the grid", …), or ``error``
    in one line naming the file and the problem: missing, a directory, unreadable, over
    :data:`MAX_INPUT_FILE_BYTES`, or not UTF-8 text. Every loader of the harness's input
    files reads through here, so that each answers the same way, never with a traceback.
    """
    file = Path(path)
    head = f"Cannot read {what} {file}"
    try:
        if file.is_dir():
            raise error(f"{head}: it is a directory; give the file's path.")
        size = file.stat().st_size
        if size > MAX_INPUT_FILE_BYTES:
            raise error(
                f"{head}: it is {size:,} bytes, over the {MAX_INPUT_FILE_BYTES:,} an input file "
                "may have; is it the right file?"
            )
        data = file.read_bytes()
    except OSError as exc:
        raise error(f"{head}: {exc.strerror or exc}.") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(
            f"{head}: it is not UTF-8 text (byte {exc.start:,} is {data[exc.start]:#04x}); "
            "is it the right file?"
        ) from None


def parse_problem(error: BaseException) -> str:
    """A YAML, JSON or TOML parser's complaint in one line, with its line and column (a
    YAML error's own text spans lines and quotes the file)."""
    problem = getattr(error, "problem", None)
    mark = getattr(error, "problem_mark", None)
    if isinstance(problem, str) and mark is not None:
        context = getattr(error, "context", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}"
        return f"{context + ': ' if isinstance(context, str) else ''}{problem} ({where})"
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__
