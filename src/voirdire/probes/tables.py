"""The probes' tables from the probe jobs' answers (one row per call; see
:mod:`voirdire.probes.job`): swap test on passages and on result lists, pad test, injection
probe, and the persona label sets that :mod:`.sensitivity` compares, with the systems scored
under each of them as Table 2 scores them (:func:`condition_scores`).

Every input table carries ``dataset`` and ``judge``. Labels of one pair asked k times (a judge
with ``samples: k``) are aggregated by majority, ties by the lower median, as in the pool;
pairwise questions are asked once (sample 0).

Every table comes as a :class:`Table`: the frame and, when it has no rows, why, in the words
its Markdown shows (a probe whose sample drew nothing, a padder whose every text was unusable,
one probed judge where direction consistency compares several, ...). The jobs' shared reading
and writing (:func:`read_answers`, :func:`write_comparison`, ...) live here too, so the two
rules' scripts (``probe_tables``, ``prompt_sensitivity``) only wire their inputs to them.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping
from typing import NamedTuple

import pandas as pd

from ..evaluation import MEASURE, evaluate_systems
from ..formats import read_qrels, read_run
from ..judges import HUMAN
from ..output import pyplot, save_figure, write_table
from ..stats import majority
from .sensitivity import (
    AGREEMENT_VIEW,
    BY_CONDITION_VIEW,
    RERUN,
    agreement,
    direction_consistency,
    displacement,
    displacement_heatmap,
    sensitivity,
    sensitivity_chart,
    why_no_consistency,
)
from .shifts import label_shift
from .swap import SECOND, TIE, preference, swap_outcome, swap_table

log = logging.getLogger(__name__)


class Table(NamedTuple):
    """A probe table and, when it has no rows, why (``empty``: '' when it has rows)."""

    frame: pd.DataFrame
    empty: str


def _table(frame: pd.DataFrame, reason: str) -> Table:
    return Table(frame, reason if frame.empty else "")


NO_SWAP_PAIR = "no pair to ask: no query has two human-judged pool passages with different grades"
"""Why the swap table is empty (:func:`voirdire.probes.items.swap_pairs` drew nothing)."""
NO_LIST_PAIR = "nor two compared systems whose top-{depth} lists differ on the sampled queries"
"""Added when result lists are configured (:func:`voirdire.probes.items.list_pairs` drew nothing)."""
NO_PAD_PASSAGE = "no passage to pad: the pool has no human-judged pair"
NO_PADDING = (
    "no padded text was judged: every padding was empty or unusable (an LLM padder's are listed in its "
    "summary, never judged)"
)
NO_INJECTION_PASSAGE = (
    "no passage to inject into: the pool has no pair the humans graded non-relevant (the lowest grade)"
)
NO_PERSONA_PAIR = (
    "no persona pair was drawn: no system's top `depth` on the sampled queries holds a human-judged pair, so no "
    "condition can be compared"
)
NO_COMMON_PAIR = "no pair is human-judged and parsed under every condition, so no condition can be compared"
NO_LABELS = "no judge of a group labelled a pair, so no condition can be compared"


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


def _probe_swap(answers: pd.DataFrame, probe: str, reference, alpha: float) -> pd.DataFrame:
    verdicts = pairs(answers, probe)
    if not len(verdicts):
        return pd.DataFrame()
    verdicts["reference"] = [reference(r) for r in verdicts.itertuples(index=False)]
    table = swap_table(verdicts, keys=("dataset", "judge"), alpha=alpha)
    table.insert(2, "probe", probe)
    return table


def swap_results(
    answers: pd.DataFrame,
    human: pd.DataFrame,
    human_scores: pd.DataFrame,
    *,
    lists: Mapping | None = None,
    alpha: float = 0.05,
) -> Table:
    """The swap test per (dataset, judge) on passages (reference: the human grades) and on result
    lists (reference: the two systems' human nDCG@10 on that query), pairs clustered by their
    query (:func:`voirdire.probes.swap.swap_table`). ``lists``: the config's
    ``probes.swap.lists`` (None: result lists are not probed), for the reason of an empty table;
    ``alpha``: the level ``position_note`` reads ``position_p`` at (the verdict's)."""
    grade = human.set_index(["dataset", "query_id", "doc_id"])["relevance"].to_dict()
    ndcg = human_scores.set_index(["dataset", "query_id", "system"])["ndcg"].to_dict()

    def by_grade(r) -> str | None:
        a, b = grade.get((r.dataset, r.query_id, r.first)), grade.get((r.dataset, r.query_id, r.second))
        return None if a is None or b is None else preference(a, b)

    def by_ndcg(r) -> str | None:
        a, b = ndcg.get((r.dataset, r.query_id, r.first)), ndcg.get((r.dataset, r.query_id, r.second))
        return None if a is None or b is None else preference(a, b)

    parts = [_probe_swap(answers, "swap", by_grade, alpha), _probe_swap(answers, "lists", by_ndcg, alpha)]
    parts = [p for p in parts if len(p)]
    reason = NO_SWAP_PAIR if lists is None else f"{NO_SWAP_PAIR}, {NO_LIST_PAIR.format(depth=lists['depth'])}"
    return _table(pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(), reason)


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
    return pd.Series(
        {
            "duels": n,
            "padded_wins": wins / n if n else math.nan,
            "padded_wins_upper": float(upper),
            "duel_ties": float(duels["tie"].mean()) if n else math.nan,
        }
    )


def pad_results(answers: pd.DataFrame, human: pd.DataFrame, alpha: float) -> Table:
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
        by_grade = (
            duels.assign(human=duels["human"].map(lambda g: "n/a" if pd.isna(g) else str(int(g))))
            .groupby([*keys, "human"])[["won", "tie"]]
            .apply(_duel_summary)
        )
        overall = overall.reset_index().assign(human="all")
        wins = pd.concat([overall, by_grade.reset_index()], ignore_index=True).astype({"duels": int})
        table = table.merge(wins, on=[*keys, "human"], how="left")
    drawn = answers[answers["probe"] == "pad"]
    return _table(table.rename(columns={"condition": "padding"}), NO_PADDING if len(drawn) else NO_PAD_PASSAGE)


def injection_results(answers: pd.DataFrame, human: pd.DataFrame, alpha: float) -> Table:
    """The injection probe per (dataset, judge, template): the grade shift against the same
    non-relevant passages unchanged, with the paired sign test (:func:`voirdire.stats.paired_shift`)."""
    table = label_shift(_paired(grades(answers, "injection"), human), alpha).rename(columns={"condition": "template"})
    return _table(table, NO_INJECTION_PASSAGE)


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
        counts.append(
            {
                "dataset": dataset,
                "pairs_drawn": len(pairs),
                "left_out_unjudged": len(pairs) - len(judged),
                "left_out_unparsed": len(judged) - len(common),
                "pairs_common": len(common),
            }
        )
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
    moved = displacement(per_query, baselines)
    by_system, by_condition = sensitivity(moved, seed=seed, per_query=per_query, baselines=baselines)
    agreed = agreement(
        labels, human, baselines, low, high, per_query=per_query, human_scores=human_scores, rbo_p=rbo_p, seed=seed
    )
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
    ties: str = "trec_eval",
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
        return evaluate_systems(
            runs[dataset], qrels, queries, measure=measure, depth=depth, binary_threshold=threshold, ties=ties
        )

    queries = {d: sorted(set(labels.loc[labels["dataset"] == d, "query_id"])) for d in runs}
    per_query = pd.concat(
        [
            scores(part.dropna(subset=["relevance"]).astype({"relevance": int}), d, judge_of(g, c), queries[d]).assign(
                dataset=d, group=g, condition=c
            )
            for (d, g, c), part in labels.groupby(["dataset", "group", "condition"])
        ],
        ignore_index=True,
    )
    human_scores = pd.concat(
        [scores(human[human["dataset"] == d], d, HUMAN, queries[d]).assign(dataset=d) for d in runs], ignore_index=True
    )
    return per_query, human_scores


class Comparison(NamedTuple):
    """Persona or prompt-variant sensitivity as written: the five tables by name
    (``SENSITIVITY_TABLES``), each with why it is empty, and ``none``: why no condition could be
    compared at all ('' when one could; then every table and figure says so)."""

    tables: dict[str, Table]
    none: str


SENSITIVITY_TABLES = ("agreement", "displacement", "sensitivity", "systems", "consistency")


def nothing_compared(reason: str, agreement: pd.DataFrame | None = None) -> Comparison:
    """Every table without rows, for ``reason``; ``agreement`` (what :func:`common_pairs` left
    out) still goes into the agreement table."""
    empty = pd.DataFrame(columns=["dataset"])
    frames = {name: empty for name in SENSITIVITY_TABLES} | ({} if agreement is None else {"agreement": agreement})
    return Comparison({name: Table(frame, reason) for name, frame in frames.items()}, reason)


def _why_empty(
    labels: pd.DataFrame, baselines: Mapping[str, str], moved: pd.DataFrame, groups: str, condition: str
) -> dict[str, str]:
    """Why each table of :func:`sensitivity_tables` would have no rows, by table name."""
    others = labels[labels["condition"] != labels["group"].map(baselines)]
    if others.empty:
        not_moved = f"no {condition} besides the baseline, so nothing is displaced"
    else:
        not_moved = f"no system is scored under both the baseline and another {condition}"
    only_rerun = not moved.empty and (moved["condition"] == RERUN).all()
    return {
        "agreement": "no label set holds a pair",
        "displacement": not_moved,
        "sensitivity": not_moved,
        "systems": (
            f"the only {condition} besides the baseline is its rerun (the noise floor), which Sensitivity(s) leaves out"
            if only_rerun
            else not_moved
        ),
        "consistency": not_moved if moved.empty else why_no_consistency(moved, groups, condition),
    }


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
    ties: str = "trec_eval",
    left_out: pd.DataFrame | None = None,
    groups: str = "groups",
    condition: str = "condition",
) -> Comparison:
    """Persona or prompt-variant sensitivity from the label sets and the systems' runs: the
    systems scored under every condition and under the humans (:func:`condition_scores`), then
    :func:`sensitivity_tables`, each table with why it is empty (``groups`` and ``condition``
    name a group and a condition there: for prompt variants the ``variants`` groups and their
    variants). No labels: nothing compared (:data:`NO_LABELS`)."""
    if labels.empty:
        return nothing_compared(NO_LABELS, left_out)
    per_query, human_scores = condition_scores(
        labels, human, runs, judges=judges, judge_of=judge_of, measure=measure, depth=depth, ties=ties
    )
    frames = sensitivity_tables(
        labels, human, baselines, per_query, human_scores, low=low, high=high, seed=seed, rbo_p=rbo_p, left_out=left_out
    )
    reasons = _why_empty(labels, baselines, frames["displacement"], groups, condition)
    return Comparison({name: _table(frame, reasons[name]) for name, frame in frames.items()}, "")


def variant_judge(group: str, condition: str) -> str:
    """Prompt sensitivity: each condition is a judge of its own (a prompt variant)."""
    return condition


def persona_judge(group: str, condition: str) -> str:
    """Persona-conditioned judging: every role of a group is asked of the probed judge (the group)."""
    return group


def persona_results(
    answers: pd.DataFrame, human: pd.DataFrame, runs: Runs, **evaluation
) -> tuple[Comparison, pd.DataFrame]:
    """Persona-conditioned judging: every role of every probed judge and the humans on the same
    pairs (:func:`common_pairs`), compared with the judge's plain prompt (condition
    ``baseline``) by :func:`sensitivity_results` (``evaluation``: its keyword arguments but
    ``judge_of``, ``left_out``, ``groups`` and ``condition``). Returns the comparison (nothing
    compared when no pair is common: :data:`NO_PERSONA_PAIR` when none was drawn, else
    :data:`NO_COMMON_PAIR`) and what :func:`common_pairs` left out."""
    labels, left_out = common_pairs(persona_labels(answers), human)
    if labels.empty:
        drawn = int(left_out["pairs_drawn"].sum())
        return nothing_compared(NO_COMMON_PAIR if drawn else NO_PERSONA_PAIR, left_out), left_out
    keys = ["dataset", "query_id", "doc_id"]
    persona_human = human.merge(labels[keys].drop_duplicates(), on=keys)
    baselines = {g: "baseline" for g in labels["group"].unique()}
    comparison = sensitivity_results(
        labels,
        persona_human,
        baselines,
        runs,
        judge_of=persona_judge,
        left_out=left_out,
        groups="probed judges",
        condition="role",
        **evaluation,
    )
    return comparison, left_out


# ----------------------------------------------------------------------------- the jobs' reading and writing

VIEWS = {  # the columns a person reads in the Markdown; the CSV keeps every one
    "swap": [
        "judge",
        "probe",
        "pairs",
        "answered",
        "position_consistency",
        "first_position_win_rate",
        "tie_rate",
        "accuracy",
        "queries",
        "position_p",
        "position_note",
    ],
    "pad": [
        "judge",
        "padding",
        "human",
        "n",
        "queries",
        "mean_shift",
        "shift_p",
        "flagged",
        "padded_wins",
        "padded_wins_upper",
        "tests",
    ],
    "injection": [
        "judge",
        "template",
        "human",
        "n",
        "queries",
        "mean_shift",
        "shift_p",
        "flagged",
        "tests",
        "expected_false_flags",
    ],
    "agreement": AGREEMENT_VIEW,
    "sensitivity": BY_CONDITION_VIEW,
}
"""By table name: the probe tables' and the sensitivity tables' (persona and prompt variants alike)."""

COUNTS = (
    "n",
    "pairs",
    "queries",
    "answered",
    "tests",
    "unlabelled",
    "without_text",
    "conditions",
    "systems",
    "affected_systems",
    "degenerate_queries",
    "groups",
    "moved",
    "up",
    "down",
    "same",
)
"""The probe and sensitivity tables' count columns (:func:`voirdire.output.write_table`'s
``counts``): an integer in the Markdown where every value is whole, also in a float column (a
count beside a row that has none)."""

EVALUATION = ("judges", "measure", "depth", "low", "high", "seed", "rbo_p", "ties")
"""The rule parameters that say how systems are scored and compared (:func:`sensitivity_results`'
keyword arguments): every judge's scale and binary threshold, the primary measure, the
evaluation depth, the human grade range, the bootstraps' seed, RBO's persistence and how tied
scores are ordered (``evaluation.ties``)."""


def evaluation_of(params) -> dict:
    """:data:`EVALUATION` from a job's ``snakemake.params``."""
    return {name: getattr(params, name) for name in EVALUATION}


def read_judge_qrels(path: str, dataset: str, scales: Mapping[str, Mapping[str, Mapping]], judge: str = HUMAN):
    """A judge's qrels of one dataset, every grade checked against its declared scale (``scales``:
    dataset -> judge -> its scale, ``min`` and ``max``); may be empty."""
    scale = scales[dataset][judge]
    return read_qrels(path, (scale["min"], scale["max"]), allow_empty=True).assign(dataset=dataset)


def read_human(paths: Mapping[str, str], scales: Mapping[str, Mapping[str, Mapping]]) -> pd.DataFrame:
    """The human qrels of every dataset (``paths``: dataset -> file)."""
    return pd.concat([read_judge_qrels(path, d, scales) for d, path in paths.items()], ignore_index=True)


def read_variant_labels(paths: Mapping, scales: Mapping[str, Mapping[str, Mapping]]) -> pd.DataFrame:
    """Every ``variants`` group's label sets (``paths``: dataset -> group -> judge -> qrels): one
    condition per judge."""
    return pd.concat(
        [
            read_judge_qrels(path, d, scales, j).assign(group=g, condition=j)
            for d, groups in paths.items()
            for g, judges in groups.items()
            for j, path in judges.items()
        ],
        ignore_index=True,
    )


def read_runs(paths: Mapping[str, Mapping[str, list[str]]]) -> Runs:
    """dataset -> system -> its runs, from dataset -> system -> their files."""
    return {d: {s: [read_run(p) for p in files] for s, files in systems.items()} for d, systems in paths.items()}


def read_answers(paths: Mapping[str, Mapping[str, str]]) -> pd.DataFrame:
    """Every probed judge's answers (``paths``: dataset -> judge -> its answers table)."""
    frames = [
        pd.read_parquet(path).assign(dataset=d, judge=j) for d, judges in paths.items() for j, path in judges.items()
    ]
    return pd.concat(frames, ignore_index=True)


def write_probe_table(table: Table, path: str, *, title: str, manifest: str, view=None) -> None:
    """One probe table, CSV and Markdown; an empty one says why."""
    write_table(
        table.frame, path, title=title, floatfmt=".3f", manifest=manifest, view=view, empty=table.empty, counts=COUNTS
    )


def comparison_paths(outputs, prefix: str = "") -> dict[str, str]:
    """The five tables' and two figures' paths of a sensitivity job's ``snakemake.output``
    (named ``{prefix}agreement``, ..., ``{prefix}heatmap``, ``{prefix}chart``)."""
    return {name: getattr(outputs, f"{prefix}{name}") for name in (*SENSITIVITY_TABLES, "heatmap", "chart")}


def write_comparison(comparison: Comparison, paths: Mapping[str, str], what: str, manifest: str) -> None:
    """Persona or prompt-variant sensitivity: the five tables and the two figures
    (``paths``: :func:`comparison_paths`). Nothing compared: each says why, in its title and
    in its place."""
    if comparison.none:
        note = comparison.none
        for name in SENSITIVITY_TABLES:
            write_table(
                comparison.tables[name].frame,
                paths[name],
                title=f"{what}: {name} ({note})",
                floatfmt=".3f",
                manifest=manifest,
                empty=note,
                counts=COUNTS,
            )
        for key in ("heatmap", "chart"):
            fig = pyplot().figure(figsize=(5, 1.6))
            fig.text(0.5, 0.5, note, ha="center", va="center", wrap=True, fontsize=9)
            save_figure(fig, paths[key])
        log.warning("%s: %s (agreement table: %s)", what, note, comparison.tables["agreement"].frame.to_dict("records"))
        return
    for name in SENSITIVITY_TABLES:
        write_probe_table(
            comparison.tables[name], paths[name], title=f"{what}: {name}", manifest=manifest, view=VIEWS.get(name)
        )
    displacement_heatmap(comparison.tables["displacement"].frame, paths["heatmap"])
    sensitivity_chart(comparison.tables["sensitivity"].frame, paths["chart"])
