"""Stage 7: judge audits from labels (SPEC section 6): label test, leave-one-judge-out,
family self-preference corrected for strictness, length bias and Simpson's paradox."""

import pandas as pd

from voirdire.audits.calibration import calibration_curve
from voirdire.audits.circularity import circularity_table, judge_ranking
from voirdire.audits.drift import drift, label_sets_from_answers, paired_shift
from voirdire.audits.figures import (
    calibration_chart,
    circularity_heatmap,
    confusion_heatmaps,
    drift_chart,
    length_chart,
    leniency_chart,
    lojo_chart,
)
from voirdire.audits.labels import aligned, confusion, label_test
from voirdire.audits.length import (
    by_decile,
    length_bias,
    system_lengths,
    tier_correlation,
    with_lengths,
)
from voirdire.audits.panel import leave_one_judge_out, self_preference
from voirdire.evaluation import evaluate_systems
from voirdire.formats import read_pairs, read_qrels, read_run, read_topics
from voirdire.judges import HUMAN, Scale, restrict
from voirdire.manifest import sha256
from voirdire.output import write_table
from voirdire.texts import provenance_texts
from voirdire.wf import start

log = start(snakemake)  # noqa: F821
params, out = snakemake.params, snakemake.output  # noqa: F821
manifest = sha256(snakemake.input.manifest)  # noqa: F821
per_query = pd.read_parquet(snakemake.input.per_query)  # noqa: F821

# the humans in the self-preference panel: off (a panel of judges of other families);
# a function argument until the config schema has a key for it
INCLUDE_HUMANS = False
ALPHA = snakemake.config.get("evaluation", {}).get("alpha", 0.05)  # noqa: F821


def chance(tests: int, alpha: float) -> str:
    """A flag table's note on multiplicity: the tests it ran and the flags chance alone gives."""
    return f"{tests} tests at alpha {alpha:g}: chance alone would flag about {tests * alpha:.2f}"


labels_rows, length_rows, decile_rows, lojo_rows, preference_rows, heatmaps = [], [], [], [], [], {}
curves, drift_rows, chart_rows, circular_rows, tier_rows = [], [], [], [], []


def label_sets_of(dataset, judge, pairs, scale):
    """A judge's label sets for the drift audit (name -> qrels of the needed pairs), in order."""
    source = params.drift.get(dataset, {}).get(judge)
    if source is None:
        return {}
    bounds = (scale.low, scale.high)
    if "reruns" in source:
        sets = {"qrels": read_qrels(params.qrels[dataset][judge], bounds, allow_empty=True)}
        sets |= {f"rerun-{i + 1}": read_qrels(p, bounds, allow_empty=True) for i, p in enumerate(source["reruns"])}
        return {name: restrict(labels, pairs) for name, labels in sets.items()}
    return label_sets_from_answers(pd.read_parquet(source["raw"]))


for dataset, judges in params.judges.items():
    scales = {j: Scale(m["min"], m["max"], m["binary_threshold"]) for j, m in judges.items()}
    pairs = read_pairs(params.pairs[dataset])
    # a labels-only dataset has no texts: its length audit is empty, the rest runs on labels
    texts = provenance_texts([params.passages[dataset]], params.rewrites.get(dataset))[0] if dataset in params.passages else {}
    others = [j for j in judges if j != HUMAN]
    topics = read_topics(params.topics[dataset])
    all_labels = {j: read_qrels(params.qrels[dataset][j], (scales[j].low, scales[j].high), allow_empty=True)
                  for j in judges}  # fmt: skip
    human = all_labels[HUMAN].merge(pairs, on=["query_id", "doc_id"])  # the pool pairs every judge labels
    # every judge (the humans too) as a ranker of the pool, scored under every judge
    pool = read_run(params.pool[dataset])
    all_runs = {s: [read_run(p) for p in paths] for s, paths in params.runs[dataset].items()}
    rankings = {j: [judge_ranking(pool, labels)] for j, labels in all_labels.items()}
    scores = pd.DataFrame({j: evaluate_systems(rankings, labels, topics, measure=params.measure).groupby("system")["ndcg"].mean()
                           for j, labels in all_labels.items()})  # fmt: skip
    scores = scores.loc[list(judges), list(judges)]
    circular = circularity_table(scores)
    circular_rows.append(pd.concat([circular.set_index("ranker"), scores.add_prefix("under_")], axis=1)
                         .reset_index(names="ranker").assign(dataset=dataset))  # fmt: skip
    for judge in others:
        labels = all_labels[judge]
        both = aligned(human, labels)
        labels_rows.append({"dataset": dataset, "judge": judge, "kind": judges[judge]["kind"],
                            **label_test(both, scales[HUMAN], scales[judge])})  # fmt: skip
        heatmaps[dataset, judge] = confusion(both, scales[HUMAN], scales[judge])
        measured = with_lengths(both[both["doc_id"].isin(set(texts))], texts)  # the pairs with a text
        if len(measured) >= 3:
            length_rows.append({"dataset": dataset, "judge": judge, **length_bias(measured)})
            decile_rows.append(by_decile(measured).assign(dataset=dataset, judge=judge))
        sets = label_sets_of(dataset, judge, pairs, scales[judge])
        if len(sets) >= 2:
            # each label set's query x system nDCG@10, for tau between the runs and its CI
            tables = {name: evaluate_systems(all_runs, labels, topics, measure=params.measure)
                      .pivot_table(index="query_id", columns="system", values="ndcg")
                      for name, labels in sets.items()}  # fmt: skip
            drift_rows.append(drift(sets, scales[judge], tables, seed=params.seed).assign(dataset=dataset, judge=judge))
            chart_rows.append(paired_shift(sets, alpha=ALPHA, seed=params.seed).assign(dataset=dataset, judge=judge))
    block = per_query[per_query["dataset"] == dataset]
    # length across systems vs within tiers (families) of systems, under every judge
    lengths = {j: system_lengths(all_runs, texts, judged=all_labels[j]) for j in judges}  # each judge's judged top 10
    for judge in judges:
        scores = block[block["judge"] == judge].groupby("system")["ndcg"].mean()
        tier_rows.append({"dataset": dataset, "judge": judge, **tier_correlation(lengths[judge], scores, params.system_families)})
    lojo = leave_one_judge_out(block, others, seed=params.seed)
    if len(lojo):
        lojo_rows.append(lojo.assign(dataset=dataset))
    # each judge against the judges of other families (never the null baselines; humans: off)
    families, kinds = {j: judges[j]["family"] for j in judges}, {j: judges[j]["kind"] for j in judges}
    preference = self_preference(block, families, params.system_families, kinds,
                                 include_humans=INCLUDE_HUMANS, seed=params.seed)  # fmt: skip
    preference_rows.append(preference.assign(dataset=dataset))
    wide = block.pivot_table(index="query_id", columns=["judge", "system"], values="ndcg")
    for judge in others:
        curve = calibration_curve(wide[HUMAN], wide[judge], ks=params.calibration["ks"],
                                  draws=params.calibration["draws"], seed=params.seed)  # fmt: skip
        curves.append(curve.assign(dataset=dataset, judge=judge))


def first(frame, column="dataset"):
    return frame[[column] + [c for c in frame.columns if c != column]] if len(frame) else frame


label_table = pd.DataFrame(labels_rows)
write_table(label_table, out.label_test, floatfmt=".3f", manifest=manifest,
            title="Label test: each judge against the human labels, pair by pair "
                  "(rates with 95% Wilson intervals over pairs and the counts they are shares of)")  # fmt: skip
lojo_table = first(pd.concat(lojo_rows, ignore_index=True)) if lojo_rows else pd.DataFrame()
write_table(lojo_table, out.lojo, floatfmt=".3f", manifest=manifest,
            title="Leave one judge out: does each adjacent pair of the panel ranking hold without the judge? "
                  "(margins with 95% bootstrap CIs over queries)")  # fmt: skip
preference_table = first(pd.concat(preference_rows, ignore_index=True))
preference_tests = int(preference_table["reason"].isna().sum()) if len(preference_table) else 0
write_table(preference_table, out.self_preference, floatfmt=".4f", manifest=manifest,
            title="Self-preference corrected for strictness, against a panel of judges of other families "
                  "(per-query nDCG@10, 95% bootstrap CIs; flagged when the CI lies above 0; "
                  f"{chance(preference_tests, 0.025)}, one-sided)")  # fmt: skip
write_table(first(pd.DataFrame(length_rows)), out.length, floatfmt=".3f", manifest=manifest,
            title="Length bias: passage length vs judge grade, overall and within human grades")  # fmt: skip
write_table(pd.DataFrame(tier_rows), out.length_systems, floatfmt=".3f", manifest=manifest,
            title="Length across systems vs within tiers: r of a system's top-10 passage length and its nDCG@10")  # fmt: skip
deciles = pd.concat(decile_rows, ignore_index=True) if decile_rows else pd.DataFrame(columns=["dataset", "judge", "decile"])
drift_frames = {}
shift_tests = sum(len(frame) for frame in chart_rows)
for rows, name, title in (
    (drift_rows, "drift", "Drift: each later label set of a judge against its first (re-runs, samples): flip rate "
                          "(95% Wilson CI over pairs), kappa and tau (95% bootstrap CIs over queries)"),
    (chart_rows, "control_chart", "Paired shift: each later run's grades against the first run's on the same pairs "
                                  "(mean difference with a 95% bootstrap CI over queries; exact sign test of up vs down, "
                                  f"shifted when p < alpha; {chance(shift_tests, ALPHA)})"),
):
    frame = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=["dataset", "judge"])
    frame = frame[["dataset", "judge"] + [c for c in frame.columns if c not in ("dataset", "judge")]]
    drift_frames[name] = frame
    write_table(frame, getattr(out, name), floatfmt=".3f", manifest=manifest, title=title,
                empty="no judge has two label sets or more (reruns: of a recorded judge, samples: k of a live one)")  # fmt: skip
drift_chart(drift_frames["control_chart"].iloc[:0], drift_frames["drift"], out.drift_png)  # the flip rates
leniency_chart(label_table, out.leniency_png)
circularity = pd.concat(circular_rows, ignore_index=True)
circularity = circularity[["dataset"] + [c for c in circularity.columns if c != "dataset"]]
write_table(circularity, out.circularity, floatfmt=".3f", manifest=manifest,
            title="Each judge as a ranker: its ranking of the pool scored under the humans and every judge")  # fmt: skip
circularity_heatmap(circularity, out.circularity_png)
calibration = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(columns=["dataset", "judge", "k"])
calibration = calibration[["dataset", "judge"] + [c for c in calibration.columns if c not in ("dataset", "judge")]]
write_table(calibration, out.calibration, floatfmt=".3f", manifest=manifest,
            title="Calibration with k human-labelled queries: PPI++ (ppi_py) vs the judge alone and the humans alone; "
                  "tau over draws (mean, 10th/50th/90th percentiles), 95% z intervals for both estimates and their "
                  "coverage of each system's human mean over all queries")  # fmt: skip
calibration_chart(calibration, out.calibration_png)
confusion_heatmaps(heatmaps, out.confusion)
lojo_chart(lojo_table, out.lojo_png)
length_chart(deciles, out.length_png)
flagged = label_table.loc[label_table["missed_failure_rate"] > 0.5, "judge"].tolist() if len(label_table) else []
log.info("%d label-test rows; judges calling most non-relevant pairs relevant: %s", len(label_table), flagged)
