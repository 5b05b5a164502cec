"""The Assistants experiment, inject -> recover: the balanced sample, the rewrite checks,
recorded rewrite corpora, and planted label, nDCG and score shifts of known sign and size.
Every expected number is computed here from what was planted."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from voirdire.assistants.checks import check_rewrite, check_rewrites, summarise_checks
from voirdire.assistants.experiments import label_shift, score_shift, substitution
from voirdire.assistants.figures import figure4, figure5
from voirdire.assistants.recorded import match_rewrites, read_recorded_rewrites
from voirdire.assistants.sample import balanced_sample
from voirdire.errors import InputError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

# ----------------------------------------------------------------------------- the sample


def qrels_with(counts: dict[int, int]) -> pd.DataFrame:
    """``counts[g]`` pairs of grade g, spread over 10 queries."""
    rows = [(f"q{i % 10}", f"d{g}_{i}", g) for g, count in counts.items() for i in range(count)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def test_balanced_sample_draws_per_grade_and_marks_a_short_grade():
    qrels = qrels_with({0: 120, 1: 80, 2: 30, 3: 5, 4: 7})
    sample, summary = balanced_sample(qrels, 25, seed=3)
    assert sample["human"].value_counts().to_dict() == {0: 25, 1: 25, 2: 25, 3: 5}
    assert summary["pairs"] == len(sample) == 80
    assert summary["other_grades"] == 7 and summary["without_text"] == 0
    assert summary["grades"]["3"] == {"available": 5, "drawn": 5, "short": True}
    assert summary["grades"]["0"] == {"available": 120, "drawn": 25, "short": False}
    assert list(sample.columns) == ["query_id", "doc_id", "human"]
    assert sample["human"].dtype.kind == "i"
    ordered = sample.sort_values(["human", "query_id", "doc_id"])
    assert sample.equals(ordered.reset_index(drop=True))
    # every drawn pair is a pair of the qrels with its own grade
    merged = sample.merge(qrels, on=["query_id", "doc_id"])
    assert len(merged) == len(sample) and (merged["human"] == merged["relevance"]).all()
    assert not sample.duplicated(["query_id", "doc_id"]).any()


def test_balanced_sample_is_seeded_and_independent_of_row_order():
    qrels = qrels_with({0: 200, 1: 200, 2: 200, 3: 200})
    shuffled = qrels.sample(frac=1, random_state=11).reset_index(drop=True)
    first, _ = balanced_sample(qrels, 20, seed=5)
    again, _ = balanced_sample(shuffled, 20, seed=5)
    other, _ = balanced_sample(qrels, 20, seed=6)
    assert first.equals(again)
    assert not first.equals(other)
    assert set(first["doc_id"]) != set(other["doc_id"])


def test_balanced_sample_excludes_pairs_without_text():
    qrels = qrels_with({0: 10, 1: 10, 2: 10, 3: 10})
    no_text = {f"d1_{i}" for i in range(4)} | {"d3_0"}
    has_text = set(qrels["doc_id"]) - no_text
    sample, summary = balanced_sample(qrels, 8, seed=1, has_text=has_text)
    assert summary["without_text"] == len(no_text)
    assert not set(sample["doc_id"]) & no_text
    assert summary["grades"]["1"] == {"available": 6, "drawn": 6, "short": True}
    assert summary["grades"]["3"] == {"available": 9, "drawn": 8, "short": False}


# ----------------------------------------------------------------------------- rewrite checks

ORIGINAL = (
    "The Amazon rainforest covers much of the Amazon basin of South America and is home "
    "to an enormous number of plant and animal species found nowhere else on earth."
)
PARAPHRASE = (
    "Much of South America's Amazon basin is covered by the Amazon rainforest, which "
    "shelters a huge variety of plants and animals that exist nowhere else on the planet."
)


def failed(result: dict) -> set[str]:
    checks = ("empty", "refusal", "copy", "length_out_of_range", "preamble")
    return {c for c in checks if result[c]}


def test_a_clean_paraphrase_is_not_flagged():
    result = check_rewrite(ORIGINAL, PARAPHRASE)
    assert failed(result) == set() and result["flagged"] is False
    assert result["length_ratio"] == len(PARAPHRASE.split()) / len(ORIGINAL.split())


@pytest.mark.parametrize("rewrite", [None, "", "   \n\t "])
def test_an_empty_rewrite_is_flagged_empty(rewrite):
    result = check_rewrite(ORIGINAL, rewrite)
    assert failed(result) == {"empty"} and result["flagged"]


def test_a_refusal_with_a_curly_apostrophe_is_flagged():
    refusal = "I can\u2019t rewrite this passage because it describes " + PARAPHRASE[40:]
    assert "refusal" in failed(check_rewrite(ORIGINAL, refusal))
    sorry = "I\u2019m sorry, but " + PARAPHRASE
    assert "refusal" in failed(check_rewrite(ORIGINAL, sorry))


def test_an_exact_copy_and_a_near_copy_are_flagged():
    spaced = "  " + ORIGINAL.upper().replace(" ", "  \n") + " "
    assert failed(check_rewrite(ORIGINAL, spaced)) == {"copy"}
    near = ORIGINAL.replace("enormous", "huge")
    assert near != ORIGINAL
    assert failed(check_rewrite(ORIGINAL, near)) == {"copy"}


def test_length_ratios_outside_the_range_are_flagged():
    words = ORIGINAL.split()
    short_words = PARAPHRASE.split()
    short = " ".join(short_words[: round(0.3 * len(words))])
    long = " ".join((short_words * 3)[: round(2.5 * len(words))])
    for text, ratio in ((short, 0.3), (long, 2.5)):
        result = check_rewrite(ORIGINAL, text)
        assert result["length_ratio"] == pytest.approx(ratio, abs=0.03)
        assert failed(result) == {"length_out_of_range"}


def test_chat_openings_and_closings_are_flagged_as_preamble():
    opening = "Sure! Here is the rewritten text:\n\n" + PARAPHRASE
    assert failed(check_rewrite(ORIGINAL, opening)) == {"preamble"}
    closing = PARAPHRASE + " Let me know if you need anything else."
    assert failed(check_rewrite(ORIGINAL, closing)) == {"preamble"}


def test_check_rewrites_names_the_reasons_and_summarises():
    frame = pd.DataFrame(
        {
            "doc_id": ["a", "b", "c", "d"],
            "original": [ORIGINAL] * 4,
            "text": [
                PARAPHRASE,
                None,
                ORIGINAL,
                "Sure! Here is the rewritten text: hi",
            ],
        }
    )
    checked = check_rewrites(frame)
    assert list(checked["doc_id"]) == ["a", "b", "c", "d"]
    assert list(checked["reasons"]) == [
        "",
        "empty",
        "copy",
        "length_out_of_range,preamble",
    ]
    summary = summarise_checks(checked)
    assert summary["rewrites"] == 4 and summary["flagged"] == 3
    assert (summary["empty"], summary["copy"], summary["preamble"]) == (1, 1, 1)
    assert summary["refusal"] == 0 and summary["length_out_of_range"] == 1
    ratios = [len(t.split()) / len(ORIGINAL.split()) for t in frame["text"][[0, 2, 3]]]
    assert summary["median_length_ratio"] == pytest.approx(float(np.median(ratios)))


# ----------------------------------------------------------------------------- recorded rewrites


def test_reads_a_beir_jsonl_corpus_and_a_tsv(write):
    records = [
        {"_id": "d1", "title": "A title", "text": "first rewrite"},
        {"_id": 2, "title": "", "text": "second\trewrite"},
    ]
    jsonl = write("rw/corpus.jsonl", "\n".join(json.dumps(r) for r in records) + "\n\n")
    assert read_recorded_rewrites(jsonl) == {
        "d1": "first rewrite",
        "2": "second\trewrite",
    }
    tsv = write("rw/rewrites.tsv", "d1\tfirst rewrite\n\nd2\tsecond\twith a tab\n")
    assert read_recorded_rewrites(tsv) == {
        "d1": "first rewrite",
        "d2": "second\twith a tab",
    }
    sniffed = write("rw/corpus.data", json.dumps(records[0]) + "\n")
    assert read_recorded_rewrites(sniffed) == {"d1": "first rewrite"}
    repeated = write("rw/same.tsv", "d1\tsame\nd1\tsame\n")
    assert read_recorded_rewrites(repeated) == {"d1": "same"}


def test_recorded_rewrite_errors_name_the_file_and_line(write):
    bad_json = write("bad.jsonl", '{"_id": "d1", "text": "ok"}\n\n{"_id": "d2", "text": \n')
    with pytest.raises(InputError, match=r"bad\.jsonl:3"):
        read_recorded_rewrites(bad_json)
    no_text = write("no_text.jsonl", '{"_id": "d1", "title": "t"}\n')
    with pytest.raises(InputError, match=r"no_text\.jsonl:1.*'_id' and 'text'"):
        read_recorded_rewrites(no_text)
    no_tab = write("no_tab.tsv", "d1\tfine\nd2 has no tab\n")
    with pytest.raises(InputError, match=r"no_tab\.tsv:2"):
        read_recorded_rewrites(no_tab)
    conflict = write("conflict.tsv", "d1\tone\nd2\ttwo\nd1\tanother\n")
    with pytest.raises(InputError, match=r"conflict\.tsv:3.*'d1'.*line 1"):
        read_recorded_rewrites(conflict)


def test_match_rewrites_rejects_unknown_ids_and_lists_missing_ones():
    rewrites = {"d1": "one", "zz9": "stray", "d2": "two", "zz10": "stray"}
    with pytest.raises(InputError) as caught:
        match_rewrites(rewrites, ["d1"], {"d1", "d2", "d3"}, "rw/corpus.jsonl")
    assert str(caught.value).startswith("rw/corpus.jsonl: 2 id(s)")
    assert "'zz9'" in str(caught.value)
    found, missing = match_rewrites({"d1": "one", "d3": "three", "d5": "five"}, ["d4", "d3", "d1", "d2"], None, "x")
    assert found == {"d1": "one", "d3": "three"}
    assert missing == ["d2", "d4"]


# ----------------------------------------------------------------------------- experiment 1


def planted_labels() -> pd.DataFrame:
    """200 pairs, 50 per human grade; the judge's original label is the human grade, except
    every 5th pair, which is one grade lower (or higher at grade 0)."""
    rows = []
    for grade in range(4):
        for i in range(50):
            original = grade if i % 5 else (grade - 1 if grade else 1)
            rows.append((f"q{i % 10}", f"d{grade}_{i}", grade, float(original)))
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "human", "original"])


def with_judge(base: pd.DataFrame, judge: str, rewritten) -> pd.DataFrame:
    return base.assign(dataset="dl19", assistant="llama", judge=judge, rewritten=rewritten)


def test_label_shift_recovers_an_inflating_judge_and_clears_a_neutral_one():
    base = planted_labels()
    original = base["original"].to_numpy()
    inflated = np.minimum(original + 1, 3)
    only_zero = np.where(base["human"] == 0, np.minimum(original + 1, 3), original)
    labels = pd.concat(
        [
            with_judge(base, "inflating", inflated),
            with_judge(base, "neutral", original),
            with_judge(base, "zero-only", only_zero),
        ],
        ignore_index=True,
    )
    table = label_shift(labels)
    assert list(dict.fromkeys(table["judge"])) == ["inflating", "neutral", "zero-only"]
    strata = ["all", "human=0", "human=1", "human=2", "human=3"]
    assert list(table.loc[table["judge"] == "neutral", "stratum"]) == strata

    def row(judge, stratum):
        return table[(table["judge"] == judge) & (table["stratum"] == stratum)].iloc[0]

    up = row("inflating", "all")
    at_top = int(np.sum(original == 3))  # these cannot rise
    assert up["n"] == up["pairs"] == 200 and up["unlabelled"] == 0
    assert up["up_share"] == (200 - at_top) / 200 and up["same"] == at_top and up["down"] == 0
    assert up["significant"] and up["direction"] == "up" and up["queries"] == 10
    assert up["shift_p"] == pytest.approx(2 / 2**10)  # all 10 queries rose: the exact sign-flip floor
    assert up["sign_p_pairs"] == pytest.approx(stats.binomtest(200 - at_top, 200 - at_top, 0.5).pvalue)
    assert up["mean_shift"] == pytest.approx((inflated - original).mean())
    for g in range(4):
        assert up[f"original_{g}"] == int(np.sum(original == g))
        assert up[f"rewritten_{g}"] == int(np.sum(inflated == g))
    assert up["homogeneity_p"] < 0.05  # the label distribution moved as a whole

    neutral = row("neutral", "all")
    assert neutral["shift_p"] == 1.0 and neutral["homogeneity"] == 0.0
    assert not neutral["significant"] and neutral["direction"] == "none"
    assert neutral["same_share"] == 1.0 and neutral["mean_shift"] == 0.0
    assert neutral["homogeneity_p"] == pytest.approx(1.0)

    zero = row("zero-only", "human=0")
    assert zero["n"] == 50 and zero["significant"] and zero["direction"] == "up"
    assert zero["up_share"] == np.mean(original[:50] < 3)
    top = row("zero-only", "human=3")
    assert not top["significant"] and top["direction"] == "none" and top["shift_p"] == 1.0
    # the flag column stands on all 15 rows (3 judges x 5 strata): chance alone flags about 0.75
    assert (table["tests"] == 15).all() and table["expected_false_flags"].eq(0.05 * 15).all()


def test_label_shift_takes_its_direction_from_the_statistic_it_tests():
    """20 pairs up by one and 7 down by three: more pairs rose (sign test p about 0.02), the
    mean label fell. The mean shift is what is tested; about 0 here, it is not significant."""
    base = pd.DataFrame(
        {
            "query_id": [f"q{i}" for i in range(27)],
            "doc_id": [f"d{i}" for i in range(27)],
            "human": 1,
            "original": [1.0] * 20 + [3.0] * 7,
        }
    )
    row = label_shift(with_judge(base, "j", [2.0] * 20 + [0.0] * 7)).iloc[0]
    assert row["sign_p_pairs"] == pytest.approx(stats.binomtest(20, 27, 0.5).pvalue) and row["sign_p_pairs"] < 0.05
    assert row["mean_shift"] == pytest.approx(-1 / 27)
    assert not row["significant"] and row["direction"] == "none"


def test_label_shift_of_queries_that_move_at_random_is_not_significant():
    """No shift on average: each query's rewrites move its labels one grade in a direction drawn
    per query. The pair-level sign test finds a shift in about 40% of such samples."""
    rng = np.random.default_rng(8)
    simulations, alpha, n = 200, 0.05, 160
    base = pd.DataFrame(
        {"query_id": [f"q{i % 20}" for i in range(n)], "doc_id": [f"d{i}" for i in range(n)], "human": np.nan}
    )
    significant = pair_level = 0
    for _ in range(simulations):
        original = rng.integers(1, 3, n).astype(float)
        step = rng.choice([-1, 1], 20)[np.arange(n) % 20] * (rng.random(n) < 0.5)  # query i % 20 moves together
        row = label_shift(with_judge(base.assign(original=original), "j", original + step), alpha=alpha).iloc[0]
        significant += row["significant"]
        pair_level += row["sign_p_pairs"] < alpha
    assert significant / simulations <= alpha + 2 * np.sqrt(alpha * (1 - alpha) / simulations)
    assert pair_level / simulations > 0.25


def test_label_shift_counts_unparsed_labels_as_unlabelled():
    base = planted_labels()
    rewritten = np.minimum(base["original"].to_numpy() + 1, 3)
    rewritten[::7] = np.nan  # unparsed rewrite labels
    original = base["original"].to_numpy().copy()
    original[1::11] = np.nan  # unparsed original labels
    labels = with_judge(base.assign(original=original), "j", rewritten)
    missing = np.isnan(original) | np.isnan(rewritten)
    table = label_shift(labels)
    overall = table[table["stratum"] == "all"].iloc[0]
    assert overall["pairs"] == 200
    assert overall["unlabelled"] == int(missing.sum()) > 0
    assert overall["n"] == 200 - int(missing.sum())
    kept = ~missing
    assert overall["mean_before"] == pytest.approx(original[kept].mean())
    assert sum(overall[f"original_{g}"] for g in range(4)) == overall["n"]
    per_grade = table[table["stratum"] != "all"]
    assert per_grade["unlabelled"].sum() == overall["unlabelled"]


def test_figure4_writes_png_and_pdf_for_one_and_for_three_panels(tmp_path):
    base = planted_labels()
    one = with_judge(base, "j1", np.minimum(base["original"] + 1, 3))
    three = pd.concat(
        [
            one,
            with_judge(base, "j2", base["original"]),
            with_judge(base, "j3", base["original"]),
        ]
    )
    for name, labels in (("one", one), ("three", three)):
        png, pdf = tmp_path / f"{name}.png", tmp_path / f"{name}-figure.pdf"
        figure4(labels, 50, png, pdf)
        assert png.read_bytes()[:8] == PNG_MAGIC
        assert pdf.read_bytes()[:5] == b"%PDF-"


# ----------------------------------------------------------------------------- experiment 2


def ndcg_table(systems: dict[str, np.ndarray], queries: int = 30) -> pd.DataFrame:
    rows = [
        ("dl19", "judge", system, f"q{i}", float(values[i]))
        for system, values in systems.items()
        for i in range(queries)
    ]
    return pd.DataFrame(rows, columns=["dataset", "judge", "system", "query_id", "ndcg"])


def test_substitution_finds_a_planted_shift_and_counts_dropped_queries():
    rng = np.random.default_rng(4)
    base = {s: rng.uniform(0.2, 0.7, 30) for s in ("bm25", "monot5", "rankgpt")}
    original = ndcg_table(base)
    shifted = dict(base)
    shifted["monot5"] = base["monot5"] + 0.05
    noisy = base["rankgpt"] + rng.normal(0.05, 0.01, 30)
    shifted["rankgpt"] = noisy
    rewritten = ndcg_table(shifted).assign(assistant="llama")
    rewritten = rewritten[~((rewritten["system"] == "bm25") & (rewritten["query_id"] == "q3"))]
    table = substitution(original, rewritten).set_index("system")
    assert list(table.index) == ["bm25", "monot5", "rankgpt"]
    assert (table["assistant"] == "llama").all()

    assert table.loc["monot5", "delta"] == pytest.approx(0.05)
    assert table.loc["monot5", "significant"] and table.loc["monot5", "p"] < 1e-6
    assert table.loc["rankgpt", "delta"] == pytest.approx((noisy - base["rankgpt"]).mean())
    assert table.loc["rankgpt", "significant"] and table.loc["rankgpt", "t"] > 0

    same = table.loc["bm25"]
    assert same["p"] == 1.0 and same["t"] == 0.0 and not same["significant"]
    assert same["queries"] == 29 and same["queries_dropped"] == 1
    assert same["ndcg_original"] == pytest.approx(np.delete(base["bm25"], 3).mean())
    assert (table.loc[["monot5", "rankgpt"], "queries_dropped"] == 0).all()
    assert (table["tests"] == 3).all() and table["expected_false_flags"].eq(0.05 * 3).all()


# ----------------------------------------------------------------------------- experiment 3


def score_table(diffs: np.ndarray, ranker: str = "monot5") -> pd.DataFrame:
    n = len(diffs)
    original = np.linspace(-2.0, 2.0, n)
    return pd.DataFrame(
        {
            "dataset": "dl19",
            "assistant": "llama",
            "ranker": ranker,
            "query_id": [f"q{i % 20}" for i in range(n)],
            "doc_id": [f"d{i}" for i in range(n)],
            "human": [i % 4 for i in range(n)],
            "original": original,
            "rewritten": original + diffs,
        }
    )


def test_score_shift_recovers_a_planted_rise_and_ties_zero_differences():
    # 60 pairs: 40 scored higher by 0.5, 12 lower by 0.2, 8 within the tolerance
    diffs = np.array([0.5] * 40 + [-0.2] * 12 + [0.004] * 8)
    up = score_shift(score_table(diffs))
    overall = up[up["stratum"] == "all"].iloc[0]
    assert (overall["higher"], overall["lower"], overall["n"]) == (40, 12, 60)
    assert overall["within_tolerance"] == pytest.approx(8 / 60)
    assert overall["mean_diff"] == pytest.approx(diffs.mean())
    assert overall["median_diff"] == pytest.approx(np.median(diffs))
    assert overall["significant"] and overall["direction"] == "up" and overall["shift_p"] < 0.001
    assert overall["queries"] == 20 and overall["sign_p_pairs"] == pytest.approx(stats.binomtest(40, 52).pvalue)
    assert (up["tests"] == 5).all() and up["expected_false_flags"].eq(0.05 * 5).all()
    assert list(up["stratum"]) == ["all", "human=0", "human=1", "human=2", "human=3"]
    assert up.loc[up["stratum"] != "all", "n"].sum() == 60

    flat = score_shift(score_table(np.zeros(40)))
    overall = flat[flat["stratum"] == "all"].iloc[0]
    assert overall["within_tolerance"] == 1.0 and overall["shift_p"] == 1.0
    assert (overall["higher"], overall["lower"]) == (0, 0)
    assert not overall["significant"] and overall["direction"] == "none"


def test_figure5_writes_png_and_pdf_for_one_and_for_three_panels(tmp_path):
    rng = np.random.default_rng(2)
    one = score_table(rng.normal(0.1, 0.3, 80))
    three = pd.concat(
        [
            one,
            score_table(rng.normal(0, 0.3, 80), "bm25"),
            score_table(np.zeros(80), "rankgpt"),
        ]
    )
    for name, scores in (("one", one), ("three", three)):
        png, pdf = tmp_path / f"{name}.png", tmp_path / f"{name}.pdf"
        figure5(scores, png, pdf)
        assert png.read_bytes()[:8] == PNG_MAGIC
        assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 1000
    assert not math.isnan(score_shift(three)["shift_p"].max())


def test_score_shift_of_queries_that_move_at_random_is_not_significant():
    """No shift on average: the ranker scores every rewrite of a query higher, or every one
    lower, by a coin flip per query. A sign test over pairs calls about half such samples shifted."""
    rng = np.random.default_rng(9)
    simulations, alpha, n = 200, 0.05, 160
    significant = pair_level = 0
    for _ in range(simulations):
        diffs = rng.choice([-1, 1], 20)[np.arange(n) % 20] * rng.uniform(0.05, 0.5, n)  # query i % 20
        row = score_shift(score_table(diffs).assign(human=np.nan), alpha=alpha).iloc[0]
        significant += row["significant"]
        pair_level += row["sign_p_pairs"] < alpha
    assert significant / simulations <= alpha + 2 * np.sqrt(alpha * (1 - alpha) / simulations)
    assert pair_level / simulations > 0.3  # about half
    planted = score_shift(score_table(np.where(np.arange(n) % 4, 0.3, -0.3)), alpha=alpha).iloc[0]
    assert planted["significant"] and planted["direction"] == "up" and planted["higher"] == 120
