"""The reliability report's tables keep their columns whatever a fault's detail holds (a
line break, a pipe, a backslash before a pipe: what a hostile page's error can say), as the
experiments' tables do: one cell function for both (found from outside in the experiments'
tables; the selftest's had the same `replace("|", "\\|")`)."""

from __future__ import annotations

from harness.selftest.faults import FaultResult
from harness.selftest.report import ReliabilityReport


def test_a_fault_detail_stays_in_its_cell() -> None:
    fault = FaultResult(
        name="hostile",
        group="pages",
        survived=True,
        outcome="thrown",
        detail="Tool error: a\\|b\n| forged | row |",
        seconds=1,
    )
    report = ReliabilityReport(
        mode="quick", faults=[fault], inputs=[], load=None, trace_valid=True, leaks=0,
        canaries=[], peak_rss_mb={}, seconds=1,
    )  # fmt: skip
    lines = report.markdown().splitlines()
    header = lines.index("| scenario | group | ended as | survived | s | told |")
    [row] = [line for line in lines[header + 2 :] if line.startswith("| `hostile`")]
    unescaped = row.replace("\\\\", "").replace("\\|", "")
    assert unescaped.count("|") == header_cells(lines[header]) + 1, row
    assert row.endswith(" |") and "forged" in row, row  # the whole detail, in its cell


def header_cells(header: str) -> int:
    return header.count("|") - 1
