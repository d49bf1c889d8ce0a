"""Finding (and, on Debian as root, installing) the Chromium the harness drives.

Playwright's own Chromium cannot be downloaded on offline machines, so the harness
uses a system Chromium through ``executable_path``. Lookup order:

1. ``$WEBMCP_CHROMIUM`` (an explicit choice always wins; a bad path is an error),
2. ``/usr/bin/chromium`` (Debian's package),
3. a Chromium that Playwright already manages (``~/.cache/ms-playwright``).

``python -m harness.browser.chromium --ensure`` additionally installs Debian's ``chromium``
with ``apt-get`` when none is found and the user is root. It never runs
``playwright install``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from harness.errors import DOCTOR_HINT, BrowserNotFound

ENV_VAR = "WEBMCP_CHROMIUM"
DEBIAN_PATH = Path("/usr/bin/chromium")

# Flags that keep Chromium quiet on a machine without internet access.
QUIET_FLAGS: tuple[str, ...] = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
)

# Chromium's own WebMCP: the page API, the CDP `WebMCP` domain, and the feature
# Playwright's `page.webmcp` checks for.
NATIVE_WEBMCP_FLAGS: tuple[str, ...] = (
    "--enable-experimental-web-platform-features",
    "--enable-features=WebMCP,WebMCPTesting",
)

# Chromium features Playwright's driver switches (its chromiumSwitches.ts, in the
# installed driver's lib/coreBundle.js). Chromium keeps only the last `--disable-features`
# and the last `--enable-features` of its command line, and Playwright puts a launch's own
# args after its own switches: a flag of ours alone would drop Playwright's list, so
# :func:`chromium_args` passes one of each with both. tests/browser/test_chromium.py reads
# the installed driver and fails when these fall out of step with it.
PLAYWRIGHT_DISABLED_FEATURES: tuple[str, ...] = (
    "AvoidUnnecessaryBeforeUnloadCheckSync",
    "DestroyProfileOnBrowserClose",
    "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable",
    "LensOverlay",
    "MediaRouter",
    "PaintHolding",
    "ThirdPartyStoragePartitioning",
    "AvoidCorsURLLoaderRestartOnRedirect",
    "TcpPortRandomizationWin",
    "OptimizationHints",
    "NetworkTimeServiceQuerying",
    "AimEnabled",
    "PreconnectToSearch",
    "msForceBrowserSignIn",
    "msEdgeUpdateLaunchServicesPreferredVersion",
)
PLAYWRIGHT_ENABLED_FEATURES: tuple[str, ...] = (
    "CDPScreenshotNewSurface",
    "SkipListAccountsWithoutGaiaCookies",
)

# Features the harness turns off: the omnibox's WebUI popups, which headless Chromium
# opens as two hidden pages (chrome://omnibox-popup.top-chrome, a renderer of their own)
# with every browser context; nothing the harness drives uses an address bar. Off, a
# context and its first page cost about a third less of the machine (README, Performance).
# And sandboxed iframes in a process of their own (IsolateSandboxedIframes): Playwright's
# init script reaches such a frame's process too late for a `srcdoc` document, whose scripts
# then run without the injected JS (no `document.modelContext` on the polyfill, no layer on
# native); in the embedder's process it runs first, as in every other frame. And the spare
# renderer (SpareRendererForSitePerProcess): after a context's first page loads, Chromium
# starts another renderer process for that context, kept warm for a navigation to another
# site that a session rarely makes; it is made and thrown away with every context (about a
# fifth of a context's CPU). A navigation that needs a new process starts one then. Site
# isolation (a process per site) stays as it is.
HARNESS_DISABLED_FEATURES: tuple[str, ...] = (
    "WebUIOmniboxPopup",
    "WebUIOmniboxAimPopup",
    "IsolateSandboxedIframes",
    "SpareRendererForSitePerProcess",
)

_DISABLE = "--disable-features="
_ENABLE = "--enable-features="


def chromium_args(*groups: Iterable[str]) -> list[str]:
    """The command line for Chromium from flag ``groups`` (the quiet flags, a backend's,
    a user's), with every feature switch merged into one `--disable-features` and one
    `--enable-features` at the end: Playwright's and the harness's features, then those
    the groups name. A feature a group enables is taken off the default disabled list,
    and one a group disables off the default enabled list: a caller's choice wins.
    """
    args: list[str] = []
    disabled: list[str] = []
    enabled: list[str] = []
    for arg in (arg for group in groups for arg in group):
        if arg.startswith(_DISABLE):
            disabled += [f for f in arg[len(_DISABLE) :].split(",") if f]
        elif arg.startswith(_ENABLE):
            enabled += [f for f in arg[len(_ENABLE) :].split(",") if f]
        else:
            args.append(arg)
    default_off = [*PLAYWRIGHT_DISABLED_FEATURES, *HARNESS_DISABLED_FEATURES]
    off = [f for f in default_off if f not in enabled] + disabled
    on = [f for f in PLAYWRIGHT_ENABLED_FEATURES if f not in disabled] + enabled
    args.append(_DISABLE + ",".join(dict.fromkeys(off)))
    if on:
        args.append(_ENABLE + ",".join(dict.fromkeys(on)))
    return args


HOW_TO_GET_ONE = (
    "No Chromium found. Install Debian's package (`apt-get install -y chromium`), "
    f"or point ${ENV_VAR} at a Chromium executable. {DOCTOR_HINT}"
)


def _playwright_managed() -> Path | None:
    root = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH", Path.home() / ".cache/ms-playwright"))
    if not root.is_dir():
        return None
    candidates = sorted(root.glob("chromium-*/chrome-linux*/chrome"), reverse=True)
    return next((c for c in candidates if os.access(c, os.X_OK)), None)


def find_chromium() -> Path:
    """Return the Chromium executable to launch, or raise :class:`BrowserNotFound`."""
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        path = Path(explicit)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise BrowserNotFound(
                f"${ENV_VAR} is set to {explicit!r}, which is not an executable. {DOCTOR_HINT}"
            )
        return path
    if DEBIAN_PATH.is_file() and os.access(DEBIAN_PATH, os.X_OK):
        return DEBIAN_PATH
    managed = _playwright_managed()
    if managed is not None:
        return managed
    raise BrowserNotFound(HOW_TO_GET_ONE)


def ensure_chromium() -> Path:
    """Find Chromium; install Debian's package first if that is possible here."""
    try:
        return find_chromium()
    except BrowserNotFound:
        if os.environ.get(ENV_VAR):
            raise
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        raise BrowserNotFound(HOW_TO_GET_ONE)
    print("webmcp-harness: installing Debian's chromium with apt-get …", file=sys.stderr)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run([apt, "update", "-qq"], check=True, env=env)
    subprocess.run([apt, "install", "-y", "-qq", "chromium"], check=True, env=env)
    return find_chromium()


def main(argv: list[str] | None = None) -> int:
    """``python -m harness.browser.chromium [--ensure]``: print the Chromium path."""
    args = sys.argv[1:] if argv is None else argv
    try:
        path = ensure_chromium() if "--ensure" in args else find_chromium()
    except (BrowserNotFound, subprocess.CalledProcessError) as exc:
        print(f"webmcp-harness: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
