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
