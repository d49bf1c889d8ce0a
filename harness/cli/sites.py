"""``webmcp-harness sites``: serve the bundled demo sites, or reset the running ones.

    webmcp-harness sites                      # todo 8101, keys 8102, mail 8103, shop 8104, …
    webmcp-harness sites todo --port 9000     # todo on 9000 (more sites: 9000, 9001, …)
    webmcp-harness sites --port todo=9100     # one site's port; --port 0: free ports
    webmcp-harness sites --reset todo         # the running todo site back to its first data

Each site keeps a fixed port (its origin stays the same from run to run), so the
README's URLs are what ``sites`` prints.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from harness.cli.options import EXIT_FAILED, EXIT_OK, UsageError
from harness.errors import HarnessError

RESET_TIMEOUT_S = 10.0


def add_parser(sub: Any) -> None:
    """The ``sites`` sub-command."""
    sites = sub.add_parser("sites", help="serve the bundled demo sites and print their URLs")
    sites.add_argument("names", nargs="*", metavar="SITE", help="sites to serve (default: all)")
    sites.add_argument(
        "--port",
        action="append",
        default=[],
        metavar="N|SITE=N",
        help="N: the first site's port (the others follow: N+1, …; 0: free ports); "
        "SITE=N: one site's port (repeatable). Default: each site's own (todo 8101, "
        "keys 8102, mail 8103, shop 8104, evil 8105, notes 8106, store 8107, attacker 8108, pantry 8109)",
    )
    sites.add_argument(
        "--reset",
        action="store_true",
        help="do not serve: restore the starting data of the sites already running there",
    )


def ports_of(names: Sequence[str], options: Sequence[str]) -> dict[str, int]:
    """Each named site's port, from the defaults and ``--port`` (a :class:`UsageError`
    for an unknown site or a malformed port)."""
    from harness.sites.server import SITES

    unknown = [n for n in names if n not in SITES]
    if unknown:
        raise UsageError(f"unknown site(s): {', '.join(unknown)}; bundled: {', '.join(SITES)}")
    ports = {name: SITES[name].port for name in names}
    for option in options:
        site, sep, value = option.rpartition("=")
        if not value.isdecimal() or int(value) > 65535:
            raise UsageError(f"--port {option!r}: give a port 0–65535, or SITE=PORT.")
        if not sep:
            base = int(value)
            ports = {name: base + i if base else 0 for i, name in enumerate(names)}
        elif site not in SITES:
            raise UsageError(f"--port {option!r}: no site {site!r}; bundled: {', '.join(SITES)}")
        elif site in ports:
            ports[site] = int(value)
    return ports


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C, or (``--reset``) reset the running sites."""
    from harness.sites.server import SITES

    names = list(dict.fromkeys(args.names)) or list(SITES)
    ports = ports_of(names, args.port)
    if args.reset:
        return reset(ports)
    try:
        asyncio.run(_serve(ports))
    except KeyboardInterrupt:
        return EXIT_OK
    except OSError as exc:
        raise HarnessError(
            f"Cannot serve the sites: {exc.strerror or exc}. Is `webmcp-harness sites` "
            "already running? Stop it, or pick other ports (--port N, --port 0 for free ones)."
        ) from exc
    return EXIT_OK


async def _serve(ports: dict[str, int]) -> None:
    from harness.sites.server import serve_sites

    async with serve_sites(list(ports), ports=ports) as sites:
        for name, url in sites.urls.items():
            print(f"{name:12} {url}", flush=True)
        print("Serving; press Ctrl-C to stop (`webmcp-harness sites --reset` resets).", flush=True)
        await asyncio.Event().wait()


def reset(ports: dict[str, int]) -> int:
    """``POST /__reset`` to each running site; exit 1 if one is not there."""
    failed = False
    for name, port in ports.items():
        if port == 0:
            raise UsageError("--reset needs the sites' ports; --port 0 picks free ones.")
        url = f"http://127.0.0.1:{port}/"
        request = urllib.request.Request(url + "__reset", method="POST")
        try:
            with urllib.request.urlopen(request, timeout=RESET_TIMEOUT_S):
                print(f"{name:12} {url} reset", flush=True)
        except (urllib.error.URLError, OSError) as exc:
            failed = True
            reason = getattr(exc, "reason", exc)
            print(
                f"webmcp-harness: {name}: nothing to reset at {url} ({reason}); is "
                "`webmcp-harness sites` running there?",
                file=sys.stderr,
                flush=True,
            )
    return EXIT_FAILED if failed else EXIT_OK
