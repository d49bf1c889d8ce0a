"""CPU time of a start's processes: what two cores can and cannot hide.

A cold start runs several processes at once (Python, Playwright's Node driver, Chromium's
browser, GPU, network and renderer processes). On a machine with ``n`` cores no start can
take less wall time than its CPU time divided by ``n``, however well its steps overlap: the
CPU time is the bound the wall time is measured against.

Read from Linux's ``/proc`` (elsewhere nothing is measured): every process descended from
this one that was not there before the start, its user and system time so far, by kind.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

PROC = Path("/proc")
TICKS_PER_S = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

KINDS = ("Python", "Node", "Chromium", "other")


@dataclass
class TreeCpu:
    """Milliseconds of CPU (user + system) of a start's processes, by kind."""

    by_kind: dict[str, float] = field(default_factory=dict)

    @property
    def total(self) -> float:
        """Every process's, together."""
        return sum(self.by_kind.values())


def _kind(name: str) -> str:
    lowered = name.lower()
    if lowered.startswith("python"):
        return "Python"
    if lowered.startswith("node"):
        return "Node"
    if lowered.startswith(("chrom", "headless")):
        return "Chromium"
    return "other"


def _processes() -> dict[int, tuple[int, str, float]]:
    """pid → (parent pid, command name, CPU ms) of every process readable now."""
    found: dict[int, tuple[int, str, float]] = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="utf-8", errors="replace")
        except OSError:  # it ended meanwhile
            continue
        # "pid (name) state ppid …": the name may hold spaces and parentheses.
        name = stat[stat.find("(") + 1 : stat.rfind(")")]
        fields = stat[stat.rfind(")") + 2 :].split()
        try:
            ppid = int(fields[1])
            ticks = int(fields[11]) + int(fields[12])  # utime, stime
        except (IndexError, ValueError):
            continue
        found[int(entry.name)] = (ppid, name, ticks * 1000 / TICKS_PER_S)
    return found


def measurable() -> bool:
    """Whether this system shows processes' CPU time (Linux's ``/proc``)."""
    return (PROC / "self" / "stat").is_file()


def descendants() -> set[int]:
    """The processes descended from this one, now (empty where nothing is measurable)."""
    if not measurable():
        return set()
    return set(_tree(_processes()))


def _tree(processes: dict[int, tuple[int, str, float]]) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in processes.items():
        children.setdefault(ppid, []).append(pid)
    found: list[int] = []
    stack = [os.getpid()]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def started_since(before: set[int]) -> TreeCpu | None:
    """The CPU time so far of this process's descendants that ``before`` (from
    :func:`descendants`) did not hold; None where nothing is measurable."""
    if not measurable():
        return None
    processes = _processes()
    cpu = TreeCpu({kind: 0.0 for kind in KINDS})
    for pid in _tree(processes):
        if pid not in before:
            _, name, ms = processes[pid]
            cpu.by_kind[_kind(name)] += ms
    return cpu


def process_cpu_ms(argv: list[str]) -> float:
    """Run ``argv`` to its end; its CPU time (user + system), in ms."""
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{argv[:3]}… exited with status {process.returncode}")
    return (usage.ru_utime + usage.ru_stime) * 1000
