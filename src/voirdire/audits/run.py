"""Every audit from labels, for every dataset, as named tables: what the audits job computes.

The workflow's ``audits`` script reads the files, builds one :class:`DatasetInputs` per dataset,
calls :func:`audit_tables` and writes what it returns; this module is where the audits are put
together, so it is unit-tested on small frames (``tests/test_audits_run.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from ..evaluation import MEASURE, evaluate_systems
from ..judges import HUMAN, Scale
from .calibration import calibration_curve
from .circularity import circularity_table, judge_ranking
from .drift import drift, paired_shift
from .labels import aligned, confusion, label_test
from .length import by_decile, length_bias, system_lengths, tier_correlation, with_lengths
from .panel import leave_one_judge_out, self_preference


@dataclass
class DatasetInputs:
    """What the audits of one dataset read: every judge's scale, kind and family (humans
    first), the needed pairs, each judge's labels of them, the systems' runs, the base run the
    judges rerank, the texts (empty for a labels-only dataset), the topics, every judge's
    per-query scores under the primary measure (columns judge, system, query_id, ndcg), and
    each judge's label sets for the drift audit (judge -> name -> qrels; two or more)."""

    judges: Mapping[str, Mapping]
    pairs: pd.DataFrame
    labels: Mapping[str, pd.DataFrame]
    runs: Mapping[str, list[pd.DataFrame]]
    base: pd.DataFrame
    topics: Mapping[str, str]
    per_query: pd.DataFrame
    texts: Mapping[str, str] = field(default_factory=dict)
    label_sets: Mapping[str, Mapping[str, pd.DataFrame]] = field(default_factory=dict)

    def scale(self, judge: str) -> Scale:
        meta = self.judges[judge]
        return Scale(meta["min"], meta["max"], meta["binary_threshold"])


TABLES = ("label_test", "lojo", "self_preference", "length", "length_systems", "deciles", "drift",
          "control_chart", "circularity", "calibration")  # fmt: skip


def audit_tables(
    datasets: Mapping[str, DatasetInputs],
    *,
    system_families: Mapping[str, str | None],
    measure: str = str(MEASURE),
    seed: int = 42,
    alpha: float = 0.05,
    calibration: Mapping[str, object] | None = None,
    include_humans: bool = False,
) -> tuple[dict[str, pd.DataFrame], dict[tuple[str, str], pd.DataFrame]]:
    """The audit tables of :data:`TABLES` (each with a ``dataset`` column first) and the
    confusion matrix of every (dataset, judge)."""
    calibration = dict(calibration or {"ks": [3, 5, 10, 20], "draws": 50})
    rows: dict[str, list] = {name: [] for name in TABLES}
    heatmaps: dict[tuple[str, str], pd.DataFrame] = {}
    for dataset, data in datasets.items():
        judges = list(data.judges)
        others = [j for j in judges if j != HUMAN]
        human = data.labels[HUMAN].merge(data.pairs[["query_id", "doc_id"]], on=["query_id", "doc_id"])
        # every judge (the humans too) as a ranker of the base run, scored under every judge
        rankings = {j: [judge_ranking(data.base, labels)] for j, labels in data.labels.items()}
        under = {j: evaluate_systems(rankings, labels, data.topics, measure=measure)
                 for j, labels in data.labels.items()}  # fmt: skip
        scores = pd.DataFrame({j: frame.groupby("system")["ndcg"].mean() for j, frame in under.items()})
        scores = scores.loc[judges, judges]
        per_query = {ranker: pd.DataFrame({j: frame[frame["system"] == ranker].set_index("query_id")["ndcg"]
                                           for j, frame in under.items()}) for ranker in judges}  # fmt: skip
        circular = circularity_table(scores, per_query=per_query, seed=seed)
        rows["circularity"].append(pd.concat([circular.set_index("ranker"), scores.add_prefix("under_")], axis=1)
                                   .reset_index(names="ranker").assign(dataset=dataset))  # fmt: skip
        for judge in others:
            scale = data.scale(judge)
            both = aligned(human, data.labels[judge])
            rows["label_test"].append({"dataset": dataset, "judge": judge, "kind": data.judges[judge]["kind"],
                                       **label_test(both, data.scale(HUMAN), scale)})  # fmt: skip
            heatmaps[dataset, judge] = confusion(both, data.scale(HUMAN), scale)
            measured = with_lengths(both[both["doc_id"].isin(set(data.texts))], data.texts)  # pairs with a text
            if len(measured) >= 3:
                rows["length"].append({"dataset": dataset, "judge": judge, **length_bias(measured)})
                rows["deciles"].append(by_decile(measured).assign(dataset=dataset, judge=judge))
            sets = data.label_sets.get(judge, {})
            if len(sets) >= 2:
                # each label set's query x system scores, for tau between the runs and its CI
                tables = {name: evaluate_systems(data.runs, labels, data.topics, measure=measure)
                          .pivot_table(index="query_id", columns="system", values="ndcg")
                          for name, labels in sets.items()}  # fmt: skip
                rows["drift"].append(drift(sets, scale, tables, seed=seed).assign(dataset=dataset, judge=judge))
                rows["control_chart"].append(
                    paired_shift(sets, alpha=alpha, seed=seed).assign(dataset=dataset, judge=judge)
                )
        block = data.per_query
        # length across systems vs within tiers (families) of systems, on each judge's judged top 10
        lengths = {j: system_lengths(data.runs, data.texts, judged=data.labels[j]) for j in judges}
        for judge in judges:
            means = block[block["judge"] == judge].groupby("system")["ndcg"].mean()
            rows["length_systems"].append({"dataset": dataset, "judge": judge,
                                           **tier_correlation(lengths[judge], means, system_families)})  # fmt: skip
        lojo = leave_one_judge_out(block, others, seed=seed)
        if len(lojo):
            rows["lojo"].append(lojo.assign(dataset=dataset))
        # each judge against the judges of other families (never the null baselines; humans: off)
        families = {j: data.judges[j]["family"] for j in judges}
        kinds = {j: data.judges[j]["kind"] for j in judges}
        rows["self_preference"].append(self_preference(block, families, system_families, kinds,
                                                       include_humans=include_humans, seed=seed).assign(dataset=dataset))  # fmt: skip
        wide = block.pivot_table(index="query_id", columns=["judge", "system"], values="ndcg")
        for judge in others:
            curve = calibration_curve(
                wide[HUMAN], wide[judge], ks=calibration["ks"], draws=calibration["draws"], seed=seed
            )
            rows["calibration"].append(curve.assign(dataset=dataset, judge=judge))
    tables = {}
    for name, found in rows.items():
        if not found:
            tables[name] = pd.DataFrame(columns=EMPTY.get(name, ["dataset", "judge"]))
            continue
        frame = pd.concat([f if isinstance(f, pd.DataFrame) else pd.DataFrame([f]) for f in found], ignore_index=True)
        tables[name] = frame[["dataset"] + [c for c in frame.columns if c != "dataset"]]
    return tables, heatmaps


EMPTY = {"deciles": ["dataset", "judge", "decile"], "calibration": ["dataset", "judge", "k"], "lojo": []}
"""The columns of a table no dataset has a row for (what its figure expects)."""
