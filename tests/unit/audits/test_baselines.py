import pandas as pd
import pytest

from voirdire.baselines import null_labels, terms

TOPICS = {"q": "how tall is the eiffel tower"}
TEXTS = {
    "a": "tower",  # 1 word, 1/3 terms (tall, eiffel, tower)
    "b": "the eiffel tower is tall indeed",  # 6 words, 3/3
    "c": "eiffel tower facts and more facts here now",  # 8 words, 2/3
    "d": "unrelated words only here",  # 4 words, 0/3
}
PAIRS = pd.DataFrame({"query_id": ["q"] * 4, "doc_id": list("abcd")})


def grades(method):
    labels = null_labels(method, PAIRS, TEXTS, TOPICS)
    return dict(zip(labels["doc_id"], labels["relevance"], strict=True))


def test_terms_drop_stopwords():
    assert terms(TOPICS["q"]) == {"tall", "eiffel", "tower"}


def test_length_judge_grades_by_length_quartile_within_query():
    # lengths a=1 < d=4 < b=6 < c=8 -> quartiles 0, 1, 2, 3
    assert grades("length") == {"a": 0, "d": 1, "b": 2, "c": 3}


def test_overlap_judge_grades_by_fraction_of_query_terms():
    # floor(4 f): a 4/3 -> 1, b 4 -> capped 3, c 8/3 -> 2, d 0
    assert grades("overlap") == {"a": 1, "b": 3, "c": 2, "d": 0}


def test_unknown_method():
    with pytest.raises(ValueError, match="unknown null judge method"):
        null_labels("coin", PAIRS, TEXTS, TOPICS)
