import numpy as np
import pytest

from voirdire.errors import ConfigError
from voirdire.systems import BM25, Perfect, Swap, oracle_ranking, oracle_rankings, parse_system

POOL = ["a", "b", "c", "d", "e", "f", "g", "h"]  # BM25 order
LABELS = {"a": 1, "b": 3, "c": 0, "d": 2, "e": 3, "g": 1}  # f, h unjudged (count as 0)
PERFECT = ["b", "e", "d", "a", "g", "c", "f", "h"]  # by label, ties in BM25 order


def test_parse_prints_and_slugs():
    assert parse_system("BM25") == BM25()
    assert parse_system("perfect") == Perfect()
    swap = parse_system("Swap[2, 1]")
    assert swap == Swap((1, 2))
    assert str(swap) == "Swap[1,2]"
    assert swap.slug == "swap-1-2"
    assert parse_system(swap.slug) == swap
    assert parse_system(str(swap)) == swap


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Swap[0]", "positions start at 1"),
        ("Swap[101]", "at most depth/2 = 50"),
        ("Swap[1,1]", "must be distinct"),
        ("Swap[]", "malformed swap spec"),
        ("Swap[a]", "malformed swap spec"),
        ("Swap[1,]", "malformed swap spec"),
        ("RankGPT", "unknown system"),
    ],
)
def test_bad_system_names(name, message):
    with pytest.raises(ConfigError, match=message.replace("[", "\\[")) as info:
        parse_system(name, depth=100, key="systems[3]")
    assert "config key 'systems[3]'" in str(info.value)


def test_perfect_sorts_by_label_stably():
    assert oracle_ranking(Perfect(), POOL, LABELS) == PERFECT


def test_swap_exchanges_rank_p_with_p_th_from_bottom():
    n = len(POOL)
    swap1 = oracle_ranking(Swap((1,)), POOL, LABELS)
    assert swap1 == ["h", "e", "d", "a", "g", "c", "f", "b"]
    swap3 = oracle_ranking(Swap((3,)), POOL, LABELS)
    assert swap3[2] == PERFECT[n - 3] and swap3[n - 3] == PERFECT[2]
    assert oracle_ranking(Swap((1, 2)), POOL, LABELS) == ["h", "f", "d", "a", "g", "c", "e", "b"]


def test_swap_beyond_half_of_a_short_pool_is_left_in_place():
    assert oracle_ranking(Swap((2,)), ["x", "y", "z"], {"x": 3}) == ["x", "y", "z"]


def test_random_tie_break_only_shuffles_within_equal_labels_and_is_reproducible():
    pools = {"q": POOL}
    qrels = {"q": LABELS}
    draws = [oracle_rankings(Perfect(), pools, qrels, tie_break="random", seed=7, draw=d)["q"] for d in range(20)]
    grades = [LABELS.get(x, 0) for x in PERFECT]
    for ranking in draws:
        assert [LABELS.get(x, 0) for x in ranking] == grades
    assert len({tuple(r) for r in draws}) > 1
    again = oracle_rankings(Perfect(), pools, qrels, tie_break="random", seed=7, draw=3)["q"]
    assert again == draws[3]


def test_random_tie_break_needs_rng():
    with pytest.raises(ValueError, match="needs an rng"):
        oracle_ranking(Perfect(), POOL, LABELS, tie_break="random")
    ranking = oracle_ranking(Perfect(), POOL, LABELS, tie_break="random", rng=np.random.default_rng(0))
    assert sorted(ranking) == sorted(POOL)
