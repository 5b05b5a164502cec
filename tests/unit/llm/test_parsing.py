import pytest

from voirdire.llm_judge.parsing import parse_grade


@pytest.mark.parametrize(
    ("text", "label", "rule"),
    [
        ("Intent: ... M=2 T=1 O=2\n##final score: 2", 2, "strict"),
        ("##Final Score:3", 3, "strict"),
        ("## final score : 0\n", 0, "strict"),
        ("##final score: 1\nthen again ##final score: 1", 1, "strict"),
        ("After thinking, the Final score: 2.", 2, "final-score"),
        ("**Final Score** = 1", 1, "final-score"),
        ("M: 2\nT: 2\nO: 2", 2, "overall"),
        ("2", 2, "bare-number"),
        (" 3. ", 3, "bare-number"),
    ],
)
def test_strict_then_fallbacks(text, label, rule):
    parsed = parse_grade(text)
    assert (parsed.label, parsed.rule) == (label, rule)
    assert parsed.ok


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty answer"),
        ("The passage is somewhat relevant.", "no grade found"),
        ("##final score: 2\n##final score: 3", "conflicting final scores [2, 3]"),
        ("##final score: 7", "strict: grade 7 outside 0..3"),
        ("Final score: 1 or final score: 2", "final-score: conflicting grades [1, 2]"),
        ("I would give it a 2 out of 3", "no grade found"),
    ],
)
def test_unparsed_is_explicit_never_zero(text, reason):
    parsed = parse_grade(text)
    assert parsed.label is None and parsed.rule == "unparsed" and not parsed.ok
    assert parsed.reason == reason


def test_scale_is_the_judges_own():
    assert parse_grade("##final score: 1", 0, 1).label == 1
    assert parse_grade("##final score: 2", 0, 1).label is None
