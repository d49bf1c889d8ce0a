"""``form-constraints``' advice for a value a form's ``pattern`` refused: anchoring makes JSON
Schema read the pattern as HTML does only when the flags agree too (HTML compiles it with
``v``, JSON Schema with ``u``); where they do not, the advice says so instead of promising
that the anchored pattern "reads alike"."""

from __future__ import annotations

from harness.qa.form_constraints import Control, mismatches


def refused(pattern: str, value: str) -> str:
    """The advice for ``value`` refused by an ``<input pattern>`` (patternMismatch)."""
    start = f'<input name="v" pattern="{pattern}">'
    control = Control("v", "input", "text", {"pattern": pattern}, start, ("patternMismatch",))
    (found,) = mismatches([control], {"v": value})
    return found


def test_an_unanchored_pattern_is_fixed_by_anchoring_it() -> None:
    advice = refused("[0-9]{3}", "x123x")
    assert 'write it anchored, pattern="^(?:[0-9]{3})$", so both read it alike' in advice


def test_a_pattern_the_v_flag_reads_otherwise_is_not_fixed_by_anchoring() -> None:
    # Under u, `[\w&&\d]` is a word character or "&": "abc" fits even anchored.
    advice = refused(r"[\w&&\d]+", "abc")
    assert "so both read it alike" not in advice
    assert (
        "v flag" in advice
        and "u flag" in advice
        and "even anchored, it accepts this value" in advice
    )


def test_a_pattern_only_the_v_flag_compiles_is_named_so() -> None:
    advice = refused(r"[[a-z]--[aeiou]]+", "abc")
    assert "so both read it alike" not in advice
    assert "no pattern at all" in advice and "Set operations (&&, --)" in advice
