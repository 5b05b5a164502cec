"""Judge audits, inject -> recover: a planted bias of known sign and size is found, a clean
judge is not flagged. Synthetic labels and scores, seeded; every expected number is computed
from what was planted."""

import numpy as np
import pandas as pd
import pytest

from voirdire.audits.labels import aligned, confusion, label_test
from voirdire.audits.length import by_decile, length_bias, with_lengths
from voirdire.audits.panel import leave_one_judge_out, self_preference
from voirdire.judges import Scale

RNG = np.random.default_rng(7)
N = 400
HUMAN = pd.DataFrame(
    {
        "query_id": [f"q{i % 20}" for i in range(N)],
        "doc_id": [f"d{i}" for i in range(N)],
        "relevance": RNG.integers(0, 4, N),
    }
)
SCALE = Scale()


def judge_from(grades):
    return HUMAN.assign(relevance=np.asarray(grades))


# ----------------------------------------------------------------------------- label test


def test_label_test_finds_a_planted_lenient_judge_and_a_planted_strict_one():
    human = HUMAN["relevance"].to_numpy()
    non_relevant = np.flatnonzero(human < 2)
    relevant = np.flatnonzero(human >= 2)
    lenient, strict = human.copy(), human.copy()
    promoted = non_relevant[: len(non_relevant) // 3]
    lenient[promoted] = 2  # leniency: a third of the non-relevant pairs called relevant
    demoted = relevant[: len(relevant) // 4]
    strict[demoted] = 1  # strictness: a quarter of the relevant pairs called non-relevant

    clean = label_test(aligned(HUMAN, judge_from(human)), SCALE, SCALE)
    assert clean["missed_failures"] == clean["false_alarms"] == 0 and clean["agreement_graded"] == 1.0
    assert (clean["binary_tp"], clean["binary_tn"]) == (len(relevant), len(non_relevant))

    found = label_test(aligned(HUMAN, judge_from(lenient)), SCALE, SCALE)
    assert found["missed_failures"] == len(promoted) and found["false_alarms"] == 0
    assert found["missed_failure_rate"] == pytest.approx(len(promoted) / len(non_relevant))
    assert found["mean_judge_grade_at_human_0"] > clean["mean_judge_grade_at_human_0"]

    found = label_test(aligned(HUMAN, judge_from(strict)), SCALE, SCALE)
    assert found["false_alarms"] == len(demoted) and found["missed_failures"] == 0
    assert found["false_alarm_rate"] == pytest.approx(len(demoted) / len(relevant))


def test_confusion_has_every_grade_of_both_scales_and_counts_every_pair():
    binary = Scale(0, 1, 1)
    judge = judge_from((HUMAN["relevance"] >= 2).astype(int))
    table = confusion(aligned(HUMAN, judge), SCALE, binary)
    assert table.shape == (4, 2) and table.to_numpy().sum() == N
    assert (table.loc[[0, 1], 1] == 0).all() and (table.loc[[2, 3], 0] == 0).all()
    row = label_test(aligned(HUMAN, judge), SCALE, binary)
    assert row["kappa_binary"] == 1.0 and np.isnan(row["kappa_graded"])


# ----------------------------------------------------------------------------- panels


def per_query_scores(means, queries=30, noise=0.02, seed=3):
    """Per-query nDCG around given (judge, system) means, with small seeded noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for (judge, system), mean in means.items():
        for q in range(queries):
            rows.append({"judge": judge, "system": system, "query_id": f"q{q}", "ndcg": mean + rng.normal(0, noise)})
    return pd.DataFrame(rows)


def test_leave_one_judge_out_names_the_judge_that_flips_a_pair():
    means = {}
    for judge in ("j1", "j2"):
        means |= {(judge, "A"): 0.8, (judge, "B"): 0.6, (judge, "C"): 0.5}
    means |= {("odd", "A"): 0.8, ("odd", "B"): 0.2, ("odd", "C"): 0.9}
    result = leave_one_judge_out(per_query_scores(means, noise=0.0), ["j1", "j2", "odd"])
    # full panel: A 0.8, C 0.633, B 0.467 -> adjacent pairs (A, C) and (C, B)
    pair = result[(result["upper"] == "C") & (result["lower"] == "B")].set_index("left_out")
    assert not pair.loc["odd", "order_kept"]  # without the odd judge, B is above C again
    assert pair.loc["odd", "margin_share"] == pytest.approx(-0.1 / (0.7333333333 - 0.5666666667), rel=1e-6)
    assert pair.loc["j1", "order_kept"] and pair.loc["j2", "order_kept"]
    assert pair.loc["odd", "tau_full_vs_reduced"] < 1 and pair.loc["j1", "tau_full_vs_reduced"] == 1


SYSTEMS = {"gpt-a": "gpt", "gpt-b": "gpt", "claude-a": "claude", "bm25": "bm25", "perfect": "oracle"}
BASE = {"gpt-a": 0.60, "gpt-b": 0.55, "claude-a": 0.58, "bm25": 0.50, "perfect": 0.90}


def panel(bias):
    """Judges' per-query scores: BASE plus each judge's planted bias per system."""
    means = {}
    for judge, shift in bias.items():
        means |= {(judge, s): BASE[s] + shift(s) for s in SYSTEMS}
    return per_query_scores(means, noise=0.03)


def test_self_preference_finds_a_planted_family_bonus_and_forgives_plain_strictness():
    bias = {
        "gpt-judge": lambda s: 0.10 if SYSTEMS[s] == "gpt" else 0.0,  # +0.1 to its own family
        "claude-judge": lambda s: -0.10,  # uniformly stricter, no self-preference
        "neutral": lambda s: 0.0,
        "llama-judge": lambda s: 0.0,
    }
    families = {"gpt-judge": "gpt", "claude-judge": "claude", "neutral": None, "llama-judge": "llama"}
    kinds = dict.fromkeys(families, "llm")
    found = self_preference(panel(bias), families, SYSTEMS, kinds, resamples=500).set_index("judge")
    gpt = found.loc["gpt-judge"]
    assert gpt["panel"] == "claude-judge, llama-judge"  # "neutral" declares no family: not in the panel
    # the panel gives gpt systems BASE except claude-judge's -0.1: the panel's mean = BASE - 0.1/2
    assert gpt["raw"] == pytest.approx(0.10 + 0.10 / 2, abs=0.02)
    assert gpt["strictness"] == pytest.approx(0.10 / 2, abs=0.02)
    assert gpt["corrected"] == pytest.approx(0.10, abs=0.02)  # the paper-comparable figure recovers the bonus
    claude = found.loc["claude-judge"]
    assert claude["raw"] < -0.05 and claude["strictness"] < -0.05  # strict everywhere ...
    assert abs(claude["corrected"]) < 0.03 and not claude["self_preferring"]  # ... is not self-preference
    # scores alone never flag: the flag is the within-grade estimate on labels (tests/unit/audits/test_self_preference.py)
    assert not gpt["self_preferring"] and "labels" in gpt["reason"]
    assert found.loc["neutral", "reason"] == "the judge declares no family"
    assert found.loc["llama-judge", "reason"] == "no system of family 'llama'"


# ----------------------------------------------------------------------------- length


def length_data(length_bonus, seed=5, n=2000):
    """Relevant passages are shorter here, so length and relevance are negatively related."""
    rng = np.random.default_rng(seed)
    human = rng.integers(0, 4, n)
    words = np.maximum(5, (120 - 25 * human + rng.normal(0, 15, n)).astype(int))
    noise = rng.choice([-1, 0, 0, 0, 1], n)  # a clean judge's disagreements, independent of length
    judge = human + noise
    if length_bonus:  # within each human grade, the longer half gets +1
        medians = pd.Series(words).groupby(human).transform("median").to_numpy()
        judge = human + (words > medians).astype(int)
    pairs = pd.DataFrame(
        {"query_id": "q", "doc_id": [f"d{i}" for i in range(n)], "human": human, "judge": np.clip(judge, 0, 3)}
    )
    texts = {f"d{i}": "w " * w for i, w in enumerate(words)}
    return with_lengths(pairs, texts)


def test_length_bias_is_found_within_grades_even_where_the_overall_sign_is_opposite():
    clean = length_bias(length_data(False))
    assert abs(clean["rho_within"]) < 0.05 and not clean["length_biased"] and not clean["simpson"]
    loving = length_bias(length_data(True))
    assert loving["rho_within"] > 0.4 and loving["length_biased"]  # longer -> higher, relevance fixed
    assert loving["rho_overall"] < 0  # across grades, longer passages are the less relevant
    assert loving["simpson"]
    deciles = by_decile(length_data(True))
    assert len(deciles) == 10 and deciles["human_0"].iloc[-1] > deciles["human_0"].iloc[0]


# ----------------------------------------------------------------------------- calibration


def calibration_data(judge_bias, seed=11, queries=40):
    """Oracles above LLM rankers under humans; the judge adds a planted bias per system."""
    from voirdire.audits.calibration import calibration_curve  # noqa: F401 - imported by the tests below

    rng = np.random.default_rng(seed)
    means = {"oracle-1": 0.90, "oracle-2": 0.82, "oracle-3": 0.74, "llm-a": 0.62, "llm-b": 0.55}
    query_effect = rng.normal(0, 0.08, queries)
    human = pd.DataFrame(
        {s: np.clip(m + query_effect + rng.normal(0, 0.05, queries), 0, 1) for s, m in means.items()},
        index=[f"q{i}" for i in range(queries)],
    )
    judge = human.copy()
    for system in judge.columns:
        judge[system] = human[system] + judge_bias(system) + rng.normal(0, 0.03, queries)
    return human, judge


def test_ppi_recovers_the_human_order_a_planted_inverting_judge_loses():
    from voirdire.audits.calibration import calibration_curve

    human, inverting = calibration_data(lambda s: 0.35 if s.startswith("llm") else 0.0)
    curve = calibration_curve(human, inverting, ks=(5, 20), draws=40).set_index("k")
    assert curve.loc[20, "tau_judge"] < 0.2  # the judge puts the LLM rankers above the oracles
    assert curve.loc[20, "tau_corrected"] > 0.8  # 20 human-labelled queries undo it
    assert curve.loc[20, "tau_corrected"] > curve.loc[5, "tau_corrected"] - 0.05
    assert curve.loc[20, "coverage_corrected"] >= 0.85  # the intervals stay honest


def test_ppi_with_a_clean_judge_is_as_right_as_the_humans_and_tighter():
    from voirdire.audits.calibration import calibration_curve

    human, clean = calibration_data(lambda s: 0.0)
    curve = calibration_curve(human, clean, ks=(5, 10), draws=40).set_index("k")
    assert np.allclose(curve["tau_judge"], 1.0) and (curve["tau_corrected"] > 0.95).all()
    assert (curve["ci_width_corrected"] < curve["ci_width_human_only"]).all()  # the judge's scores help


# ----------------------------------------------------------------------------- drift


def system_tables(order, queries=20, seed=6):
    """query x system per-query nDCG@10 around the given system means, with seeded noise."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {s: m + rng.normal(0, 0.05, queries) for s, m in order.items()}, index=[f"q{i}" for i in range(queries)]
    )


def test_drift_finds_a_planted_10_percent_flip_and_a_clean_rerun_is_still():
    from statsmodels.stats.proportion import proportion_confint

    from voirdire.audits.drift import drift

    first = HUMAN.copy()
    flipped = HUMAN.copy()
    chosen = np.random.default_rng(2).choice(N, size=N // 10, replace=False)
    flipped.loc[chosen, "relevance"] = (flipped.loc[chosen, "relevance"] + 1) % 4  # every chosen label changes
    systems = system_tables({"A": 0.8, "B": 0.6, "C": 0.4})
    reversed_ = system_tables({"A": 0.4, "B": 0.6, "C": 0.8}, seed=7)
    found = drift(
        {"run-1": first, "run-2": first.copy(), "run-3": flipped},
        SCALE,
        {"run-1": systems, "run-2": systems, "run-3": reversed_},
        resamples=400,
    )
    found = found.set_index("run")
    assert found.loc["run-2", "flips"] == 0 and found.loc["run-2", "kappa_graded"] == 1.0
    assert found.loc["run-2", "kappa_graded_ci_low"] == found.loc["run-2", "kappa_graded_ci_high"] == 1.0
    assert found.loc["run-3", "flips"] == N // 10 and found.loc["run-3", "flip_rate"] == pytest.approx(0.10)
    wilson = proportion_confint(N // 10, N, alpha=0.05, method="wilson")  # over pairs: descriptive
    assert (found.loc["run-3", "flip_rate_ci_low_wilson"], found.loc["run-3", "flip_rate_ci_high_wilson"]) == (
        pytest.approx(wilson)
    )
    assert found.loc["run-3", "flip_rate_ci_low"] < 0.10 < found.loc["run-3", "flip_rate_ci_high"]  # over queries
    assert found.loc["run-3", "queries"] == 20 and found.loc["run-3", "flip_rate_degenerate"] == 0
    assert found.loc["run-3", "kappa_graded"] < 0.95
    for kappa in ("kappa_graded", "kappa_binary", "kappa_quadratic"):  # over queries: the point is inside
        assert (
            found.loc["run-3", f"{kappa}_ci_low"] <= found.loc["run-3", kappa] <= found.loc["run-3", f"{kappa}_ci_high"]
        )
        assert found.loc["run-3", f"{kappa}_ci_high"] < 1.0
    assert found.loc["run-2", "tau_systems"] == pytest.approx(1.0) and found.loc["run-2", "tau_systems_ci_low"] == 1.0
    assert found.loc["run-3", "tau_systems"] == pytest.approx(-1.0)  # its labels reverse the systems
    assert found.loc["run-3", "tau_systems_ci_high"] == pytest.approx(-1.0)
    assert drift({"only": first}, SCALE).empty


def test_drift_kappa_from_confusion_counts_is_sklearns_kappa_on_the_same_labels():
    from sklearn.metrics import cohen_kappa_score

    from voirdire.stats import kappa_from_counts

    rng = np.random.default_rng(12)
    a = rng.integers(0, 4, 300)
    b = np.clip(a + rng.choice([-1, 0, 0, 1, 2], 300), 0, 3)
    counts = pd.crosstab(a, b).reindex(index=range(4), columns=range(4), fill_value=0).to_numpy(float)
    grades = np.arange(4)
    assert kappa_from_counts(counts, 1.0 - np.eye(4)) == pytest.approx(cohen_kappa_score(a, b))
    quadratic = np.subtract.outer(grades, grades) ** 2.0
    assert kappa_from_counts(counts, quadratic) == pytest.approx(cohen_kappa_score(a, b, weights="quadratic"))


def test_a_rerun_one_grade_kinder_is_a_paired_shift_and_a_clean_rerun_is_not():
    from scipy import stats

    from voirdire.audits.drift import CONTROL_COLUMNS, paired_shift

    first = HUMAN.copy()
    kinder = HUMAN.assign(relevance=np.minimum(HUMAN["relevance"] + 1, 3))  # a later run, one grade kinder
    harsher = HUMAN.assign(relevance=np.maximum(HUMAN["relevance"] - 1, 0))  # one grade harsher
    planted = float((kinder["relevance"] - first["relevance"]).mean())  # +1 except where the grade was 3
    sets = {"run-1": first, "run-2": first.copy(), "run-3": kinder, "run-4": harsher}
    table = paired_shift(sets, resamples=500).set_index("run")
    assert list(table.reset_index().columns) == CONTROL_COLUMNS
    shift = table.loc["run-3"]
    assert shift["mean_difference"] == pytest.approx(planted)
    assert shift["difference_ci_low"] <= planted <= shift["difference_ci_high"]
    assert shift["up"] == int((HUMAN["relevance"] < 3).sum()) and shift["down"] == 0 and shift["queries"] == 20
    assert shift["sign_p_pairs"] == pytest.approx(  # the pair-level sign test stays, descriptive
        stats.binomtest(int(shift["up"]), int(shift["up"] + shift["down"])).pvalue
    )
    assert shift["shifted"] and shift["direction"] == "up" and shift["shift_p"] < 0.001
    assert table.loc["run-4", "shifted"] and table.loc["run-4", "direction"] == "down"
    assert table.loc["run-4", "mean_difference"] == pytest.approx(-float((HUMAN["relevance"] > 0).mean()))
    clean = table.loc["run-2"]
    assert clean["mean_difference"] == 0 and clean["shift_p"] == 1.0 and not clean["shifted"]
    assert clean["direction"] == "none"
    # a rerun that moves 6 pairs up and 4 down is within chance
    noisy = first.copy()
    noisy.loc[:5, "relevance"] = noisy.loc[:5, "relevance"].where(
        noisy.loc[:5, "relevance"] == 3, noisy.loc[:5, "relevance"] + 1
    )
    ups = int((noisy["relevance"] > first["relevance"]).sum())
    downs_at = first.index[(first["relevance"] > 0) & (first.index > 5)][:4]
    noisy.loc[downs_at, "relevance"] -= 1
    row = paired_shift({"a": first, "b": noisy}).iloc[0]
    assert (row["up"], row["down"]) == (ups, 4)
    assert row["sign_p_pairs"] == pytest.approx(stats.binomtest(ups, ups + 4).pvalue) and not row["shifted"]
    assert paired_shift({"only": first}).empty


def test_reruns_whose_queries_move_at_random_are_not_flagged_as_shifted():
    """No drift on average: each query's labels move one grade in a direction drawn per query.
    A sign test over pairs flags about 40% of such reruns at nominal 5%; the test over queries
    about 5%."""
    from voirdire.audits.drift import paired_shift

    rng = np.random.default_rng(21)
    simulations, alpha = 200, 0.05
    queries = np.repeat([f"q{i}" for i in range(20)], 10)
    first = pd.DataFrame({"query_id": queries, "doc_id": [f"d{i}" for i in range(len(queries))]})
    shifted = pair_level = 0
    for _ in range(simulations):
        grades = rng.integers(1, 3, len(queries))
        step = np.repeat(rng.choice([-1, 1], 20), 10) * (rng.random(len(queries)) < 0.5)
        row = paired_shift(
            {"a": first.assign(relevance=grades), "b": first.assign(relevance=grades + step)},
            alpha=alpha,
            resamples=100,
        ).iloc[0]
        shifted += row["shifted"]
        pair_level += row["sign_p_pairs"] < alpha
    assert shifted / simulations <= alpha + 2 * np.sqrt(alpha * (1 - alpha) / simulations)
    assert pair_level / simulations > 0.25


def test_a_live_judges_label_sets_come_from_its_samples_or_its_model_versions():
    from voirdire.audits.drift import label_sets_from_answers

    answers = pd.DataFrame(
        {
            "query_id": ["q"] * 6,
            "doc_id": ["a", "b", "c", "a", "b", "c"],
            "sample": [0, 0, 0, 1, 1, 1],
            "label": [2, 1, None, 3, 1, 0],
            "status": ["ok", "ok", "unparsed", "ok", "ok", "ok"],
            "model_version": ["v1"] * 6,
        }
    )
    sets = label_sets_from_answers(answers)
    assert list(sets) == ["sample=0", "sample=1"] and len(sets["sample=0"]) == 2  # unparsed left out
    updated = answers.assign(sample=0, model_version=["v1", "v1", "v1", "v2", "v2", "v2"])
    assert list(label_sets_from_answers(updated)) == ["model_version=v1", "model_version=v2"]


# ----------------------------------------------------------------------------- circularity


def test_a_judge_without_signal_loves_its_own_ranking_and_the_humans_do_not():
    from voirdire.audits.circularity import circularity_table, judge_ranking
    from voirdire.evaluation import evaluate_systems

    rng = np.random.default_rng(4)
    queries = [f"q{i}" for i in range(15)]
    pool = pd.DataFrame(
        [(q, f"{q}-d{j}", j + 1, 100.0 - j) for q in queries for j in range(30)],
        columns=["query_id", "doc_id", "rank", "score"],
    )
    human = pool.assign(relevance=rng.integers(0, 4, len(pool)))[["query_id", "doc_id", "relevance"]]
    labels = {
        "human": human,
        "copy": human.copy(),  # agrees with the humans on every pair
        "noise": human.assign(relevance=rng.integers(0, 4, len(human))),  # no relevance signal
    }
    runs = {name: [judge_ranking(pool, qrels)] for name, qrels in labels.items()}
    labels["human@pool"] = human  # the humans label the whole pool here: human@pool is the humans
    first = runs["noise"][0][runs["noise"][0]["query_id"] == "q0"]
    grades = first.merge(labels["noise"], on=["query_id", "doc_id"])["relevance"].tolist()
    assert grades == sorted(grades, reverse=True)  # sorted by the judge's grade
    scores = pd.DataFrame(
        {
            judge: evaluate_systems(runs, qrels, queries).groupby("system")["ndcg"].mean()
            for judge, qrels in labels.items()
        }
    )
    table = circularity_table(scores).set_index("ranker")
    assert table.loc["copy", "self_score"] == pytest.approx(1.0) and table.loc["copy", "inflation"] == pytest.approx(
        0.0
    )
    assert table.loc["noise", "self_score"] == pytest.approx(1.0)  # perfect under its own labels ...
    assert table.loc["noise", "human_score"] < 0.8 and table.loc["noise", "inflation"] > 0.2  # ... not under humans


def test_length_across_systems_vs_within_a_tier_is_seed_004s_simpson_case():
    from voirdire.audits.length import system_lengths, tier_correlation

    texts = {f"d{n}": "w " * n for n in range(1, 200)}
    # tier "deep": long and good, but within it longer is a little worse; tier "shallow": short and weak
    plan = {
        "deep-1": (150, 0.80),
        "deep-2": (160, 0.78),
        "deep-3": (170, 0.76),
        "shallow-1": (20, 0.40),
        "shallow-2": (30, 0.42),
        "shallow-3": (40, 0.44),
    }
    runs = {
        s: [pd.DataFrame({"query_id": "q", "doc_id": [f"d{n}"] * 1, "rank": [1], "score": [1.0]})]
        for s, (n, _) in plan.items()
    }
    lengths = system_lengths(runs, texts, depth=10)
    assert lengths["deep-2"] == 160
    scores = pd.Series({s: score for s, (_, score) in plan.items()})
    tiers = {s: s.split("-")[0] for s in plan}
    found = tier_correlation(lengths, scores, tiers)
    assert found["r_all"] > 0.9  # across all systems, longer looks better ...
    assert found["r_within_deep"] < 0  # ... but not among peers; three systems give no interval, so no flag
    assert not found["simpson"] and found["r_within_deep_ci_low"] == -1
    clean = tier_correlation(lengths, pd.Series({s: n / 200 for s, (n, _) in plan.items()}), tiers)
    assert clean["r_all"] > 0.9 and not clean["simpson"]


def test_label_test_rates_carry_cluster_intervals_and_descriptive_wilson_ones_on_their_own_counts():
    from statsmodels.stats.proportion import proportion_confint

    human = HUMAN["relevance"].to_numpy()
    lenient = human.copy()
    non_relevant = np.flatnonzero(human < 2)
    lenient[non_relevant[: len(non_relevant) // 3]] = 2  # a planted leniency
    row = label_test(aligned(HUMAN, judge_from(lenient)), SCALE, SCALE)
    assert row["human_non_relevant"] == len(non_relevant) and row["human_relevant"] == N - len(non_relevant)
    assert row["queries"] == 20 and row["rate_degenerate"] == 0
    for name, successes, n in (
        ("missed_failure_rate", row["missed_failures"], row["human_non_relevant"]),
        ("false_alarm_rate", row["false_alarms"], row["human_relevant"]),
        ("agreement_binary", round(row["agreement_binary"] * N), N),
        ("agreement_graded", round(row["agreement_graded"] * N), N),
    ):
        expected = proportion_confint(successes, n, alpha=0.05, method="wilson")  # pairs independent: descriptive
        assert (row[f"{name}_ci_low_wilson"], row[f"{name}_ci_high_wilson"]) == pytest.approx(expected)
        assert row[f"{name}_ci_low"] <= row[name] <= row[f"{name}_ci_high"]  # over queries
    # the planted third is inside its interval; a clean judge's zero is at the interval's floor
    assert row["missed_failure_rate_ci_low"] <= 1 / 3 <= row["missed_failure_rate_ci_high"]
    clean = label_test(aligned(HUMAN, judge_from(human)), SCALE, SCALE)
    assert (
        clean["missed_failure_rate_ci_low"] == pytest.approx(0.0, abs=1e-12)
        and clean["missed_failure_rate_ci_high"] < 0.03
    )


def topic_lenient(rng, queries=40, per_query=20):
    """Human-non-relevant pairs only; the judge's leniency varies by topic: query q's pairs are
    called relevant with probability p_q ~ Beta(2, 8) (mean 0.2, the rate to recover)."""
    leniency = np.repeat(rng.beta(2, 8, queries), per_query)
    human = pd.DataFrame(
        {
            "query_id": np.repeat([f"q{i}" for i in range(queries)], per_query),
            "doc_id": [f"d{i}" for i in range(queries * per_query)],
            "relevance": rng.integers(0, 2, queries * per_query),
        }
    )
    judge = human.assign(relevance=np.where(rng.random(len(human)) < leniency, 2, human["relevance"]))
    return aligned(human, judge)


def test_the_missed_failure_interval_covers_a_topic_varying_leniency_and_wilsons_does_not():
    rng = np.random.default_rng(31)
    simulations, alpha, truth = 200, 0.05, 0.2
    missed = {"": 0, "_wilson": 0}
    widths = []
    for _ in range(simulations):
        row = label_test(topic_lenient(rng), SCALE, SCALE, resamples=400)
        for suffix in missed:
            missed[suffix] += not (
                row[f"missed_failure_rate_ci_low{suffix}"] <= truth <= row[f"missed_failure_rate_ci_high{suffix}"]
            )
        widths.append(
            (row["missed_failure_rate_ci_high"] - row["missed_failure_rate_ci_low"])
            / (row["missed_failure_rate_ci_high_wilson"] - row["missed_failure_rate_ci_low_wilson"])
        )
    assert missed[""] / simulations <= alpha + 2 * np.sqrt(alpha * (1 - alpha) / simulations)
    assert missed["_wilson"] / simulations > 0.15  # pairs counted as independent: far too narrow
    # a design effect of 1 + 19 x 1/11 (intra-query correlation of Beta(2, 8)): about 1.65 times as wide
    assert np.median(widths) > 1.4


def test_drift_takes_the_audits_scripts_per_query_tables_and_finds_a_rerun_that_reorders_systems():
    """The audits script hands drift the systems' per-query nDCG@10 under each label set
    (evaluate_systems, pivoted to query x system); a rerun that swaps two systems' labels loses tau."""
    from voirdire.audits.drift import drift, paired_shift
    from voirdire.evaluation import evaluate_systems

    queries = [f"q{i}" for i in range(12)]
    docs = [f"d{j}" for j in range(8)]  # grades 3, 3, 2, 2, 1, 1, 0, 0
    labels = pd.DataFrame(
        [(q, d, 3 - j // 2) for q in queries for j, d in enumerate(docs)], columns=["query_id", "doc_id", "relevance"]
    )
    order = {"good": docs, "middle": docs[2:] + docs[:2], "bad": docs[::-1]}
    runs = {
        s: [
            pd.DataFrame(
                [(q, d, r + 1, 10.0 - r) for q in queries for r, d in enumerate(ranked)],
                columns=["query_id", "doc_id", "rank", "score"],
            )
        ]
        for s, ranked in order.items()
    }
    rerun = labels.assign(relevance=3 - labels["relevance"])  # every grade reversed: the systems reverse
    sets = {"qrels": labels, "rerun-1": labels.copy(), "rerun-2": rerun}
    tables = {
        name: evaluate_systems(runs, qrels, queries).pivot_table(index="query_id", columns="system", values="ndcg")
        for name, qrels in sets.items()
    }
    found = drift(sets, SCALE, tables, resamples=200).set_index("run")
    assert found.loc["rerun-1", "tau_systems"] == pytest.approx(1.0)
    assert found.loc["rerun-2", "tau_systems"] == pytest.approx(-1.0) and found.loc["rerun-2", "queries"] == 12
    assert found.loc["rerun-2", "tau_systems_ci_high"] == pytest.approx(-1.0)
    shift = paired_shift(sets).set_index("run")
    assert shift.loc["rerun-2", "up"] == shift.loc["rerun-2", "down"] == 48  # 3->0, 2->1 as often as 0->3, 1->2
    assert not shift.loc["rerun-2", "shifted"] and not shift.loc["rerun-1", "shifted"]
