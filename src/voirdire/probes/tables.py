"""The probes' tables from the probe jobs' answers (one row per call; see
:mod:`voirdire.probes.job`): swap test on passages and on result lists, pad test, injection
probe, and the persona label sets that :mod:`.sensitivity` compares, with the systems scored
under each of them as Table 2 scores them (:func:`condition_scores`).

Every input table carries ``dataset`` and ``judge``. Labels of one pair asked k times (a judge
with ``samples: k``) are aggregated by majority, ties by the lower median, as in the pool;
pairwise questions are asked once (sample 0).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import pandas as pd

from ..evaluation import MEASURE, evaluate_systems
from ..judges import HUMAN
from ..stats import majority
from .shifts import label_shift
from .swap import SECOND, TIE, preference, swap_outcome, swap_table


def _majority(labels: pd.Series) -> float:
    found = majority([int(v) for v in labels.dropna()])
    return math.nan if found is None else float(found)


def grades(answers: pd.DataFrame, probe: str) -> pd.DataFrame:
    """One label per (dataset, judge, condition, query, passage) of a pointwise probe (NaN: unparsed)."""
    rows = answers[answers["probe"] == probe]
    keys = ["dataset", "judge", "condition", "query_id", "doc_id"]
    return rows.groupby(keys, sort=True)["label"].agg(_majority).rename("relevance").reset_index()


def pairs(answers: pd.DataFrame, probe: str) -> pd.DataFrame:
    """One row per pair of a pairwise probe: its two answers ``ab`` and ``ba`` (None: unparsed)."""
    rows = answers[(answers["probe"] == probe) & (answers["sample"] == 0)]
    keys = ["dataset", "judge", "condition", "query_id", "doc_id", "first", "second"]
    rows = rows.assign(doc_id=rows["doc_id"].fillna(""), choice=rows["choice"].astype(object))
    wide = rows.set_index([*keys, "order"])["choice"].unstack("order")
    wide = wide.reindex(columns=["ab", "ba"]).reset_index()
    wide.columns.name = None
    return wide.astype(object).where(wide.notna(), None)


def _probe_swap(answers: pd.DataFrame, probe: str, reference) -> pd.DataFrame:
    verdicts = pairs(answers, probe)
    if not len(verdicts):
        return pd.DataFrame()
    verdicts["reference"] = [reference(r) for r in verdicts.itertuples(index=False)]
    table = swap_table(verdicts, keys=("dataset", "judge"))
    table.insert(2, "probe", probe)
    return table


def swap_results(answers: pd.DataFrame, human: pd.DataFrame, human_scores: pd.DataFrame) -> pd.DataFrame:
    """The swap test per (dataset, judge) on passages (reference: the human grades) and on result
    lists (reference: the two systems' human nDCG@10 on that query)."""
    grade = human.set_index(["dataset", "query_id", "doc_id"])["relevance"].to_dict()
    ndcg = human_scores.set_index(["dataset", "query_id", "system"])["ndcg"].to_dict()

    def by_grade(r) -> str | None:
        a, b = grade.get((r.dataset, r.query_id, r.first)), grade.get((r.dataset, r.query_id, r.second))
        return None if a is None or b is None else preference(a, b)

    def by_ndcg(r) -> str | None:
        a, b = ndcg.get((r.dataset, r.query_id, r.first)), ndcg.get((r.dataset, r.query_id, r.second))
        return None if a is None or b is None else preference(a, b)

    parts = [_probe_swap(answers, "swap", by_grade), _probe_swap(answers, "lists", by_ndcg)]
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _paired(labels: pd.DataFrame, human: pd.DataFrame) -> pd.DataFrame:
    """Each changed grade beside the same judge's grade of the unchanged text and the human grade."""
    original = (
        labels[labels["condition"] == "original"].drop(columns="condition").rename(columns={"relevance": "original"})
    )
    changed = labels[labels["condition"] != "original"].rename(columns={"relevance": "changed"})
    keys = ["dataset", "judge", "query_id", "doc_id"]
    joined = changed.merge(original, on=keys, how="left")
    return joined.merge(human.rename(columns={"relevance": "human"}), on=["dataset", "query_id", "doc_id"], how="left")


def _duel_summary(duels: pd.DataFrame, confidence: float = 0.95) -> pd.Series:
    """Duels, the share the padded text won with its one-sided Clopper-Pearson upper bound
    (Clopper & Pearson 1934; statsmodels ``proportion_confint(method="beta")`` at twice the
    alpha, whose upper end is then a one-sided bound), and the share of ties."""
    from statsmodels.stats.proportion import proportion_confint

    n, wins = len(duels), int(duels["won"].sum())
    upper = proportion_confint(wins, n, alpha=2 * (1 - confidence), method="beta")[1] if n else math.nan
    return pd.Series({"duels": n, "padded_wins": wins / n if n else math.nan, "padded_wins_upper": float(upper),
                      "duel_ties": float(duels["tie"].mean()) if n else math.nan})  # fmt: skip


def pad_results(answers: pd.DataFrame, human: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """The pad test per (dataset, judge, padding, human grade): the grade shift of padded over
    original text, and (when asked) how often the padded text wins the swap-checked pairwise
    question (``padded_wins``; ties and unparsed pairs are not wins) with the one-sided 95%
    upper bound ``padded_wins_upper``: "should be about 0" is shown as "at most this"."""
    table = label_shift(_paired(grades(answers, "pad"), human), alpha)
    duels = pairs(answers, "pad-pairwise")
    if len(duels):
        duels = duels.merge(
            human.rename(columns={"relevance": "human"}), on=["dataset", "query_id", "doc_id"], how="left"
        )
        duels["won"] = [swap_outcome(ab, ba) == SECOND for ab, ba in zip(duels["ab"], duels["ba"], strict=True)]
        duels["tie"] = [swap_outcome(ab, ba) == TIE for ab, ba in zip(duels["ab"], duels["ba"], strict=True)]
        keys = ["dataset", "judge", "condition"]
        overall = duels.groupby(keys)[["won", "tie"]].apply(_duel_summary)
        by_grade = duels.assign(human=duels["human"].map(lambda g: "n/a" if pd.isna(g) else str(int(g)))).groupby(
            [*keys, "human"])[["won", "tie"]].apply(_duel_summary)  # fmt: skip
        overall = overall.reset_index().assign(human="all")
        wins = pd.concat([overall, by_grade.reset_index()], ignore_index=True).astype({"duels": int})
        table = table.merge(wins, on=[*keys, "human"], how="left")
    return table.rename(columns={"condition": "padding"})


def injection_results(answers: pd.DataFrame, human: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """The injection probe per (dataset, judge, template): the grade shift against the same
    non-relevant passages unchanged, with the paired sign test (:func:`voirdire.stats.paired_shift`)."""
    return label_shift(_paired(grades(answers, "injection"), human), alpha).rename(columns={"condition": "template"})


def persona_labels(answers: pd.DataFrame) -> pd.DataFrame:
    """The persona probe's label sets: (dataset, group = judge, condition = baseline or role, query, passage)."""
    labels = grades(answers, "persona")
    return labels.rename(columns={"judge": "group"})


COMMON_COLUMNS = ["dataset", "pairs_drawn", "left_out_unjudged", "left_out_unparsed", "pairs_common"]
"""What :func:`common_pairs` kept and left out, per dataset."""


def common_pairs(labels: pd.DataFrame, human: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The persona label sets restricted to one set of pairs per dataset: those a human graded
    and every (group, condition) labelled (parsed), so every role of every judge model, and the
    humans, are scored on the same documents and a tau against the humans compares rankings
    rather than document sets. Returns the restricted labels and, per dataset, the pairs drawn,
    those left out for want of a human grade (``left_out_unjudged``) or of a parsed label under
    some condition (``left_out_unparsed``), and the ``pairs_common`` kept (``COMMON_COLUMNS``)."""
    keys = ["dataset", "query_id", "doc_id"]
    graded = human[keys].drop_duplicates().assign(_graded=True)
    kept, counts = [], []
    for dataset, part in labels.groupby("dataset", sort=True):
        conditions = part[["group", "condition"]].drop_duplicates()
        parsed = part.dropna(subset=["relevance"]).drop_duplicates(["group", "condition", "query_id", "doc_id"])
        everywhere = parsed.groupby(["query_id", "doc_id"]).size() == len(conditions)
        pairs = part[keys].drop_duplicates().merge(graded, on=keys, how="left")
        judged = pairs[pairs["_graded"].notna()]
        common = judged[judged.set_index(["query_id", "doc_id"]).index.isin(everywhere[everywhere].index)]
        kept.append(part.merge(common[keys], on=keys))
        counts.append({"dataset": dataset, "pairs_drawn": len(pairs), "left_out_unjudged": len(pairs) - len(judged),
                       "left_out_unparsed": len(judged) - len(common), "pairs_common": len(common)})  # fmt: skip
    restricted = pd.concat(kept, ignore_index=True) if kept else labels.iloc[:0]
    return restricted, pd.DataFrame(counts, columns=COMMON_COLUMNS)


def sensitivity_tables(
    labels: pd.DataFrame,
    human: pd.DataFrame,
    baselines: dict[str, str],
    per_query: pd.DataFrame,
    human_scores: pd.DataFrame,
    *,
    low: int,
    high: int,
    seed: int,
    rbo_p: float,
    left_out: pd.DataFrame | None = None,
) -> dict[str, pd.DataFrame]:
    """Persona or prompt-variant sensitivity (Mohtadi et al., CIKM 2026):
    agreement, displacement, the sensitivity summaries and direction consistency, by table
    name. ``left_out`` (from :func:`common_pairs`) adds its counts to the agreement table."""
    from .sensitivity import agreement, direction_consistency, displacement, sensitivity

    moved = displacement(per_query, baselines)
    by_system, by_condition = sensitivity(moved, seed=seed, per_query=per_query, baselines=baselines)
    agreed = agreement(labels, human, baselines, low, high, per_query=per_query, human_scores=human_scores, rbo_p=rbo_p,
                       seed=seed)  # fmt: skip
    if left_out is not None:
        agreed = agreed.merge(left_out, on="dataset", how="left")
    return {
        "agreement": agreed,
        "displacement": moved,
        "sensitivity": by_condition,
        "systems": by_system,
        "consistency": direction_consistency(moved),
    }


Runs = Mapping[str, Mapping[str, list[pd.DataFrame]]]
"""dataset -> system -> its runs (several: an oracle's tie-break draws), as read."""


def condition_scores(
    labels: pd.DataFrame,
    human: pd.DataFrame,
    runs: Runs,
    *,
    judges: Mapping[str, Mapping[str, Mapping]],
    judge_of: Callable[[str, str], str],
    measure: str = str(MEASURE),
    depth: int | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The systems' per-query scores under each label set of ``labels`` (dataset, group,
    condition, query_id, doc_id, relevance) and under ``human`` (dataset, query_id, doc_id,
    relevance), each over the queries ``labels`` hold in its dataset: (per_query with columns
    query_id, system, ndcg, dataset, group, condition; the humans' with query_id, system,
    ndcg, dataset).

    Computed as Table 2 computes them (:func:`voirdire.evaluation.evaluate_systems`): the
    primary ``measure``, every run cut at the evaluation ``depth``, the labels binarized at the
    binary threshold their judge declares (``judges``: dataset -> judge -> its scale, with
    ``binary_threshold``; ``judge_of(group, condition)`` names a condition's judge: a persona
    role's is the probed judge, a prompt variant is its own; the humans' is ``HUMAN``). An
    unparsed label (NaN) is left out, never read as grade 0."""

    def scores(qrels: pd.DataFrame, dataset: str, judge: str, queries: list[str]) -> pd.DataFrame:
        threshold = judges[dataset][judge]["binary_threshold"]
        return evaluate_systems(runs[dataset], qrels, queries, measure=measure, depth=depth, binary_threshold=threshold)

    queries = {d: sorted(set(labels.loc[labels["dataset"] == d, "query_id"])) for d in runs}
    per_query = pd.concat([
        scores(part.dropna(subset=["relevance"]).astype({"relevance": int}), d, judge_of(g, c), queries[d])
        .assign(dataset=d, group=g, condition=c)
        for (d, g, c), part in labels.groupby(["dataset", "group", "condition"])
    ], ignore_index=True)  # fmt: skip
    human_scores = pd.concat([
        scores(human[human["dataset"] == d], d, HUMAN, queries[d]).assign(dataset=d) for d in runs
    ], ignore_index=True)  # fmt: skip
    return per_query, human_scores


def sensitivity_results(
    labels: pd.DataFrame,
    human: pd.DataFrame,
    baselines: dict[str, str],
    runs: Runs,
    *,
    judges: Mapping[str, Mapping[str, Mapping]],
    judge_of: Callable[[str, str], str],
    measure: str = str(MEASURE),
    depth: int | None = None,
    low: int,
    high: int,
    seed: int,
    rbo_p: float,
    left_out: pd.DataFrame | None = None,
) -> dict[str, pd.DataFrame]:
    """Persona or prompt-variant sensitivity from the label sets and the systems' runs: the
    systems scored under every condition and under the humans (:func:`condition_scores`), then
    :func:`sensitivity_tables`. No labels (no pair common to every condition): no tables."""
    if labels.empty:
        return {}
    per_query, human_scores = condition_scores(
        labels, human, runs, judges=judges, judge_of=judge_of, measure=measure, depth=depth
    )
    return sensitivity_tables(labels, human, baselines, per_query, human_scores, low=low, high=high, seed=seed,
                              rbo_p=rbo_p, left_out=left_out)  # fmt: skip


def variant_judge(group: str, condition: str) -> str:
    """Prompt sensitivity: each condition is a judge of its own (a prompt variant)."""
    return condition


def persona_judge(group: str, condition: str) -> str:
    """Persona-conditioned judging: every role of a group is asked of the probed judge (the group)."""
    return group


def persona_results(
    answers: pd.DataFrame, human: pd.DataFrame, runs: Runs, **evaluation
) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Persona-conditioned judging: every role of every probed judge and the humans on the same
    pairs (:func:`common_pairs`), compared with the judge's plain prompt (condition
    ``baseline``) by :func:`sensitivity_results` (``evaluation``: its keyword arguments but
    ``judge_of`` and ``left_out``). Returns the tables (none when no pair is common) and what
    :func:`common_pairs` left out."""
    labels, left_out = common_pairs(persona_labels(answers), human)
    keys = ["dataset", "query_id", "doc_id"]
    persona_human = human.merge(labels[keys].drop_duplicates(), on=keys)
    baselines = {g: "baseline" for g in labels["group"].unique()}
    tables = sensitivity_results(labels, persona_human, baselines, runs, judge_of=persona_judge, left_out=left_out,
                                 **evaluation)  # fmt: skip
    return tables, left_out
