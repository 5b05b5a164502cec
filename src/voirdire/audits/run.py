"""Every audit from labels, for every dataset, as named tables: what the audits job computes.

The workflow's ``audits`` script reads the files, builds one :class:`DatasetInputs` per dataset,
calls :func:`audit_tables` and writes what it returns; this module is where the audits are put
together, so it is unit-tested on small frames (``tests/unit/audits/test_audits_run.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

import pandas as pd

from ..evaluation import MEASURE, cut, evaluate_systems_under, parse_measure
from ..judges import HUMAN, Scale, restrict
from .calibration import calibration_curve
from .circularity import HUMAN_POOL, circularity_table, judge_ranking
from .drift import drift, paired_shift
from .labels import TOPIC_COLUMNS, aligned, confusion, label_test, topic_agreement
from .length import (
    by_decile,
    length_bias,
    system_lengths_by_judge,
    tier_correlation,
    top_pairs_without_text,
    with_lengths,
)
from .panel import (
    LOJO_LABEL_COLUMNS,
    NULL_KINDS,
    leave_one_judge_out,
    leave_one_judge_out_labels,
    self_preference,
    top_documents,
)
from .ranking import RANKING_COLUMNS, judge_leaderboard
from .registry import Context, load


@dataclass
class DatasetInputs:
    """What the audits of one dataset read: every judge's scale, kind and family (humans
    first), the needed pairs, each judge's labels of them, the systems' runs, the base run the
    judges rerank, the texts (empty for a labels-only dataset), the topics, every judge's
    per-query scores under the primary measure (columns judge, system, query_id, ndcg), and
    each judge's label sets for the drift audit (judge -> name -> qrels; two or more).

    No systems (no runs, no base run): the audits of labels alone run (label test, leave one
    judge out on labels, length, drift without tau); those of systems have no row."""

    judges: Mapping[str, Mapping]
    pairs: pd.DataFrame
    labels: Mapping[str, pd.DataFrame]
    runs: Mapping[str, list[pd.DataFrame]]
    base: pd.DataFrame | None
    topics: Mapping[str, str]
    per_query: pd.DataFrame
    texts: Mapping[str, str] = field(default_factory=dict)
    label_sets: Mapping[str, Mapping[str, pd.DataFrame]] = field(default_factory=dict)
    pool_per_query: pd.DataFrame | None = None
    """The systems' per-query scores under ``human@pool`` (the columns of ``per_query``), the
    reference of the judges' leaderboard's tau; None: the humans' own scores."""

    def scale(self, judge: str) -> Scale:
        meta = self.judges[judge]
        return Scale(meta["min"], meta["max"], meta["binary_threshold"])


TABLES = (
    "label_test",
    "lojo",
    "lojo_labels",
    "self_preference",
    "length",
    "length_systems",
    "deciles",
    "drift",
    "control_chart",
    "circularity",
    "calibration",
    "topic_agreement",
    "judge_ranking",
)
"""The tables of the audits computed here; those declared beside their computation
(:mod:`voirdire.audits.registry`) follow them (:func:`all_tables`)."""


def all_tables() -> tuple[str, ...]:
    """Every audit table: :data:`TABLES`, then each registered audit's."""
    return (*TABLES, *(t.name for a in load().values() for t in a.tables))


def audit_tables(
    datasets: Mapping[str, DatasetInputs],
    *,
    system_families: Mapping[str, str | None],
    measure: str = str(MEASURE),
    seed: int = 42,
    alpha: float = 0.05,
    calibration: Mapping[str, object] | None = None,
    include_humans: bool = False,
    depth: int | None = None,
    ties: str = "trec_eval",
    constructed: Sequence[str] | None = None,
    settings: Mapping[str, Mapping[str, object]] | None = None,
) -> tuple[dict[str, pd.DataFrame], dict[tuple[str, str], pd.DataFrame]]:
    """The audit tables of :data:`TABLES` (each with a ``dataset`` column first) and the
    confusion matrix of every (dataset, judge).

    Every score an audit computes itself (the judges as rankers, the systems under each drift
    label set) is computed as Table 2's are: ``measure`` on every system cut at ``depth`` (the
    evaluation depth; None: uncut), binarized at the scoring judge's ``binary_threshold``. The
    length across systems is measured on the documents ``measure`` scores: each run cut at
    ``depth``, judged documents only for a judged-only measure, then the measure's cutoff, all
    in trec_eval's order.

    The judges' leaderboard ranks them by tau over the systems the user brought: every system of
    ``system_families`` but ``constructed`` (default: those of the family ``oracle``, Perfect and
    the swaps, as :func:`voirdire.systems.family_of` files them).

    Then every registered audit (:mod:`voirdire.audits.registry`) of each dataset, with its
    ``settings`` (``audits.<name>``; absent: its computation's defaults); one that needs systems
    has no row on a dataset without them."""
    registered = load()
    settings = settings or {}
    if constructed is None:
        constructed = [s for s, family in system_families.items() if family == ORACLE_FAMILY]
    user = [s for s in system_families if s not in set(constructed)]
    calibration = dict(calibration or {"ks": [3, 5, 10, 20], "draws": 50})
    primary = parse_measure(measure)
    top = primary["cutoff"] if isinstance(primary["cutoff"], int) else None
    judged_only = bool(primary.params.get("judged_only", False))
    rows: dict[str, list] = {name: [] for name in all_tables()}
    heatmaps: dict[tuple[str, str], pd.DataFrame] = {}
    for dataset, data in datasets.items():
        judges = list(data.judges)
        others = [j for j in judges if j != HUMAN]
        human = restrict(data.labels[HUMAN], data.pairs)  # human@pool: the human labels of the needed pairs
        threshold = {j: data.scale(j).binary_threshold for j in judges}
        scoring = dict(data.labels) | {HUMAN_POOL: human}
        threshold[HUMAN_POOL] = threshold[HUMAN]
        # systems under several label sets, as Table 2 scores them: every run cut at the evaluation
        # depth, the measure binarized at each label set's judge's threshold
        under_each = partial(evaluate_systems_under, query_ids=data.topics, measure=measure, depth=depth, ties=ties)
        systems = bool(data.runs)
        if data.base is not None:
            # every judge (the humans too) as a ranker of the base run, scored under every judge and human@pool
            rankings = {j: [judge_ranking(data.base, labels, depth)] for j, labels in data.labels.items()}
            under = under_each(rankings, scoring, threshold)
            scores = pd.DataFrame({j: frame.groupby("system")["ndcg"].mean() for j, frame in under.items()})
            scores = scores.loc[judges, [*judges, HUMAN_POOL]]
            per_query = {
                ranker: pd.DataFrame(
                    {j: frame[frame["system"] == ranker].set_index("query_id")["ndcg"] for j, frame in under.items()}
                )
                for ranker in judges
            }
            circular = circularity_table(scores, per_query=per_query, seed=seed)
            rows["circularity"].append(
                pd.concat([circular.set_index("ranker"), scores.add_prefix("under_")], axis=1)
                .reset_index(names="ranker")
                .assign(dataset=dataset)
            )
        for judge in others:
            scale = data.scale(judge)
            both = aligned(human, data.labels[judge])
            rows["label_test"].append(
                {
                    "dataset": dataset,
                    "judge": judge,
                    "kind": data.judges[judge]["kind"],
                    **label_test(both, data.scale(HUMAN), scale),
                }
            )
            heatmaps[dataset, judge] = confusion(both, data.scale(HUMAN), scale)
            topics = topic_agreement(both, data.scale(HUMAN), scale, seed=seed)
            rows["topic_agreement"].append(topics.assign(dataset=dataset, judge=judge))
            measured = with_lengths(both, data.texts)  # a pair without a text: no length, left out and counted
            if measured["words"].notna().sum() >= 3:
                rows["length"].append({"dataset": dataset, "judge": judge, **length_bias(measured)})
                rows["deciles"].append(by_decile(measured).assign(dataset=dataset, judge=judge))
            sets = data.label_sets.get(judge, {})
            if len(sets) >= 2:
                # each label set's query x system scores, for tau between the runs and its CI
                tables = (
                    {
                        name: frame.pivot_table(index="query_id", columns="system", values="ndcg")
                        for name, frame in under_each(data.runs, sets, dict.fromkeys(sets, threshold[judge])).items()
                    }
                    if systems
                    else None
                )
                rows["drift"].append(drift(sets, scale, tables, seed=seed).assign(dataset=dataset, judge=judge))
                rows["control_chart"].append(
                    paired_shift(sets, alpha=alpha, seed=seed).assign(dataset=dataset, judge=judge)
                )
        panel = [j for j in others if data.judges[j]["kind"] not in (*NULL_KINDS, "jury")]  # a jury repeats its members
        scales = {j: data.scale(j) for j in judges}
        # the panel's labels with and without each judge, against the humans' (no system needed)
        lojo_labels = leave_one_judge_out_labels({**data.labels, HUMAN: human}, scales, panel, HUMAN, seed=seed)
        if len(lojo_labels):
            rows["lojo_labels"].append(lojo_labels.assign(dataset=dataset))
        # every judge ranked by its agreement with the humans (labels; tau over the user's systems
        # when there are systems), each against the next one down on the same query resamples
        reference = None
        if systems:
            pool = data.pool_per_query
            pool = data.per_query[data.per_query["judge"] == HUMAN] if pool is None else pool
            reference = pool.pivot_table(index="query_id", columns="system", values="ndcg") if len(pool) else None
        kinds = {j: data.judges[j]["kind"] for j in judges}
        scored = data.per_query if systems else None
        ranking = judge_leaderboard(
            {**data.labels, HUMAN: human},
            scales,
            kinds,
            scores=scored,
            reference=reference,
            user=user,
            alpha=alpha,
            seed=seed,
        )
        if len(ranking):
            rows["judge_ranking"].append(ranking.assign(dataset=dataset))
        context = Context(
            dataset=dataset,
            data=data,
            human=human,
            judges=others,
            user=user,
            system_families=system_families,
            score=under_each,
            depth=depth,
            measure=measure,
            ties=ties,
            seed=seed,
            alpha=alpha,
        )
        for name, declared in registered.items():
            if declared.systems and not systems:
                continue
            context.settings = dict(settings.get(name, {}))
            for table, frame in declared.compute(context).items():
                rows[table].append(frame.assign(dataset=dataset))
        if not systems:  # what follows ranks or scores systems
            continue
        block = data.per_query
        # length across systems vs within tiers (families) of systems, on the documents the primary
        # measure scores under each judge (the judged top 10 of judged-only nDCG@10)
        scored = {j: data.labels[j] if judged_only else None for j in judges}
        lengths = system_lengths_by_judge(data.runs, data.texts, scored, top, evaluation_depth=depth)
        gaps = top_pairs_without_text(data.runs, data.texts, scored, top, evaluation_depth=depth)
        for judge in judges:
            means = block[block["judge"] == judge].groupby("system")["ndcg"].mean()
            correlation = tier_correlation(lengths[judge], means, system_families)
            rows["length_systems"].append(
                {"dataset": dataset, "judge": judge, **correlation, "top_pairs_without_text": gaps[judge]}
            )
        # the panel of judges, never the null baselines (as in self-preference)
        lojo = leave_one_judge_out(block, panel, seed=seed)
        if len(lojo):
            rows["lojo"].append(lojo.assign(dataset=dataset))
        # each judge against the judges of other families (never the null baselines; humans: off)
        families = {j: data.judges[j]["family"] for j in judges}
        kinds = {j: data.judges[j]["kind"] for j in judges}
        # its flag reads labels within human grade, on the documents each system puts in its top
        # (the runs cut at the evaluation depth, human-judged documents, the measure's cutoff)
        runs = {s: [cut(r, depth, ties) for r in rs] for s, rs in data.runs.items()} if depth else data.runs
        tops = top_documents(runs, human, top or 10)
        rows["self_preference"].append(
            self_preference(
                block,
                families,
                system_families,
                kinds,
                labels=data.labels,
                scales=scales,
                tops=tops,
                include_humans=include_humans,
                alpha=alpha,
                seed=seed,
            ).assign(dataset=dataset)
        )
        wide = block.pivot_table(index="query_id", columns=["judge", "system"], values="ndcg")
        for judge in others:
            curve = calibration_curve(
                wide[HUMAN], wide[judge], ks=calibration["ks"], draws=calibration["draws"], seed=seed
            )
            rows["calibration"].append(curve.assign(dataset=dataset, judge=judge))
    tables = {}
    for name, found in rows.items():
        if not found:
            tables[name] = pd.DataFrame(columns=EMPTY[name] if name in EMPTY else _declared_columns(registered, name))
            continue
        frame = pd.concat([f if isinstance(f, pd.DataFrame) else pd.DataFrame([f]) for f in found], ignore_index=True)
        tables[name] = frame[["dataset"] + [c for c in frame.columns if c != "dataset"]]
    return tables, heatmaps


ORACLE_FAMILY = "oracle"
"""The family :func:`voirdire.systems.family_of` gives the constructed systems (Perfect, the swaps)."""

EMPTY = {
    "deciles": ["dataset", "judge", "decile"],
    "calibration": ["dataset", "judge", "k"],
    "lojo": [],
    "lojo_labels": ["dataset", *LOJO_LABEL_COLUMNS],
    "circularity": ["dataset", "ranker"],
    "topic_agreement": ["dataset", "judge", *TOPIC_COLUMNS],
    "judge_ranking": RANKING_COLUMNS,
}
"""The columns of a table no dataset has a row for (what its figure expects)."""


def _declared_columns(registered, name: str) -> list[str]:
    """A table's columns when no dataset has a row: a registered audit's declaration, else dataset, judge."""
    for declared in registered.values():
        for table in declared.tables:
            if table.name == name:
                return list(table.columns)
    return ["dataset", "judge"]
