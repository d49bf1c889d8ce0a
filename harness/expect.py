"""Expect-style assertions for WebMCP tests; they live in :mod:`harness.testing.expect`.

>>> from harness.expect import expect_no_leak, expect_result, expect_tool
"""

from harness.testing.expect import (
    ResultAssertions,
    ToolAssertions,
    expect_no_leak,
    expect_result,
    expect_tool,
    schema_subset_mismatch,
    subset_mismatch,
)

__all__ = [
    "ResultAssertions",
    "ToolAssertions",
    "expect_no_leak",
    "expect_result",
    "expect_tool",
    "schema_subset_mismatch",
    "subset_mismatch",
]
