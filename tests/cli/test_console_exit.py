"""The console script ends its process without tearing the interpreter down
(harness.cli.console): its output is all there, its exit status is the command's, the
atexit handlers ran; a thread still working is waited for."""

from __future__ import annotations

import subprocess
import sys

# An object whose finalizer only a torn-down interpreter runs (a module global's), an atexit
# handler, then the console script with the given arguments.
SCRIPT = """
import atexit, sys, threading

class Finalized:
    def __del__(self):
        print("interpreter torn down", flush=True)

kept = Finalized()
atexit.register(lambda: print("atexit ran", flush=True))
if "--with-thread" in sys.argv:
    sys.argv.remove("--with-thread")
    def work():
        # Still working whenever the command ends, however long it takes: it ends once the
        # interpreter's shutdown has stopped the main thread (a process ended with
        # os._exit never gets there, and never prints).
        threading.main_thread().join()
        print("thread finished", flush=True)
    threading.Thread(target=work).start()
sys.argv[0] = "webmcp-harness"
from harness.cli import console
console()
"""


def _console(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, *argv], capture_output=True, text=True, timeout=60
    )


def test_the_console_script_exits_with_its_output_and_status_without_teardown() -> None:
    done = _console("tools", "--settle", "-1", "http://127.0.0.1:9/")
    assert done.returncode == 2, done.stderr  # a usage error's status
    assert "--settle" in done.stderr
    assert done.stdout.splitlines() == ["atexit ran"]

    listed = _console("doctor", "--help")
    assert listed.returncode == 0
    assert "usage: webmcp-harness doctor" in listed.stdout


def test_a_thread_still_working_is_waited_for() -> None:
    done = _console("tools", "--settle", "-1", "http://127.0.0.1:9/", "--with-thread")
    assert done.returncode == 2, done.stderr
    assert done.stdout.splitlines() == ["thread finished", "atexit ran", "interpreter torn down"]
