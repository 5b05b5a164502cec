"""Stage 7: judge audits from labels: label test, leave-one-judge-out, self-preference corrected
for strictness, length bias and Simpson's paradox, drift, the judge as a ranker, calibration.
Without systems (the label sets audited alone) the audits of systems write no rows, and say why."""

import pandas as pd

from voirdire.audits.drift import label_sets_from_answers
from voirdire.audits.figures import (
    calibration_chart,
    circularity_heatmap,
    confusion_heatmaps,
    drift_chart,
    judge_ranking_chart,
    length_chart,
    leniency_chart,
    lojo_chart,
    topic_agreement_chart,
)
from voirdire.audits.registry import load as registered_audits
from voirdire.audits.run import DatasetInputs, audit_tables
from voirdire.evaluation import PRIMARY_COLUMNS, primary_scores, read_scores
from voirdire.formats import read_pairs, read_qrels, read_run, read_topics
from voirdire.jobscript import grouped, start
from voirdire.judges import HUMAN, POOL, restrict
from voirdire.manifest import sha256
from voirdire.output import IntervalCell, pyplot, save_figure, write_table
from voirdire.texts import provenance_texts
from voirdire.verdict import NO_SYSTEMS

log = start(snakemake)
params, out = snakemake.params, snakemake.output
files = grouped(snakemake.input)
manifest = sha256(snakemake.input.manifest)
scores = read_scores(snakemake.input.scores)  # every dataset's; none without systems
per_query = primary_scores(scores, params.measure) if len(scores) else pd.DataFrame(columns=PRIMARY_COLUMNS)
# the systems under human@pool: the reference the judges' leaderboard ranks tau against, as the verdict does
pool_per_query = primary_scores(scores, params.measure, [POOL]) if len(scores) else per_query.iloc[:0]
ALPHA = params.alpha
SYSTEMS = params.systems  # any listed: without, only the label sets are audited


def unsystematic(empty: str) -> str:
    """The empty-table message of an audit of systems: why it has no rows."""
    return empty if SYSTEMS else f"{NO_SYSTEMS}; this audit {empty}"


def placeholder(png: str, text: str) -> None:
    """A figure that says why it shows nothing (and its PDF)."""
    fig, ax = pyplot().subplots(figsize=(6, 1.6))
    ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True)
    ax.axis("off")
    save_figure(fig, png)


def chance(tests: int, alpha: float) -> str:
    """A flag table's note on multiplicity: the tests it ran and the flags chance alone gives."""
    return f"{tests} tests at alpha {alpha:g}: chance alone would flag about {tests * alpha:.2f}"


def label_sets_of(dataset, judge, pairs, bounds):
    """A judge's label sets for the drift audit (name -> qrels of the needed pairs), in order."""
    source = files.get("drift", {}).get(dataset, {}).get(judge)
    if source is None:
        return {}
    if "reruns" in source:
        sets = {"qrels": read_qrels(files["qrels"][dataset][judge], bounds, allow_empty=True)}
        sets |= {f"rerun-{i + 1}": read_qrels(p, bounds, allow_empty=True) for i, p in enumerate(source["reruns"])}
        return {name: restrict(labels, pairs) for name, labels in sets.items()}
    return label_sets_from_answers(pd.read_parquet(source["raw"]))


datasets = {}
for dataset, judges in params.judges.items():
    pairs = read_pairs(files["pairs"][dataset])
    bounds = {j: (m["min"], m["max"]) for j, m in judges.items()}
    datasets[dataset] = DatasetInputs(
        judges=judges,
        pairs=pairs,
        labels={j: read_qrels(files["qrels"][dataset][j], bounds[j], allow_empty=True) for j in judges},
        runs={s: [read_run(p) for p in paths] for s, paths in files.get("runs", {}).get(dataset, {}).items()},
        base=read_run(files["base"][dataset]) if dataset in files.get("base", {}) else None,
        topics=read_topics(files["topics"][dataset]),
        per_query=per_query[per_query["dataset"] == dataset],
        pool_per_query=pool_per_query[pool_per_query["dataset"] == dataset] if len(pool_per_query) else None,
        # a labels-only dataset has no texts: its length audit is empty, the rest runs on labels
        texts=provenance_texts([files["passages"][dataset]], files.get("rewrites", {}).get(dataset))[0]
        if dataset in files.get("passages", {})
        else {},
        label_sets={
            j: sets for j in judges if j != HUMAN if len(sets := label_sets_of(dataset, j, pairs, bounds[j])) >= 2
        },
    )
tables, heatmaps = audit_tables(
    datasets,
    system_families=params.system_families,
    measure=params.measure,
    seed=params.seed,
    alpha=ALPHA,
    calibration=params.calibration,
    include_humans=params.include_humans,
    depth=params.depth,
    ties=params.ties,
    settings=params.settings,
)

label_table = tables["label_test"]
write_table(
    label_table,
    out.label_test,
    floatfmt=".3f",
    manifest=manifest,
    counts=["pairs", "queries", "missed_failures", "false_alarms"],
    view=[
        "judge",
        "kind",
        "pairs",
        "queries",
        "agreement_binary",
        "kappa_binary",
        "missed_failures",
        "missed_failure_rate",
        "false_alarms",
        "false_alarm_rate",
    ],
    title="Label test: each judge against the human labels, pair by pair "
    "(rates with 95% cluster-bootstrap intervals over queries and the counts they are shares of)",
)
write_table(
    tables["lojo"],
    out.lojo,
    floatfmt=".3f",
    manifest=manifest,
    empty=unsystematic("needs two judges or more besides the null baselines (it ranks the systems)"),
    # margin_share (in the CSV) is unbounded where the full margin is near 0: margins are shown
    view=["left_out", "upper", "lower", "margin_full", "margin_reduced", "order_kept", "tau_full_vs_reduced"],
    title="Leave one judge out: does each adjacent pair of the panel ranking hold without the judge? "
    "(margins with 95% bootstrap CIs over queries)",
)
write_table(
    tables["lojo_labels"],
    out.lojo_labels,
    floatfmt=".3f",
    manifest=manifest,
    counts=["pairs", "queries"],
    empty="needs two judges or more besides the null baselines, on pairs of two queries or more",
    view=[
        "left_out",
        "panel",
        "pairs",
        "queries",
        "kappa_judge",
        "kappa_full",
        "kappa_reduced",
        "kappa_change",
        "without_it",
    ],
    title="Leave one judge out on labels: the panel's label (at least half its judges say relevant, each at "
    "its own threshold) against the humans', binary kappa with every judge and without each (95% "
    "cluster-bootstrap CIs over queries; the change paired on the same resamples)",
)
preference = tables["self_preference"]
preference_tests = int(preference["within_grade_p"].notna().sum()) if "within_grade_p" in preference else 0
write_table(
    preference,
    out.self_preference,
    floatfmt=".3f",
    manifest=manifest,
    # counts (a float column where a row has none): an integer where every value is whole
    counts=[
        "systems_of_family",
        "strictness_systems",
        "consensus_systems",
        "queries",
        "pairs_own",
        "pairs_other",
        "pairs_own_unmatched",
        "pairs_other_unmatched",
    ],
    empty=unsystematic("compares the judges' labels of a family's systems' documents"),
    view=[
        "judge",
        "family",
        "panel",
        "within_grade",
        "within_grade_p",
        "strata",
        "placebo_min",
        "placebo_max",
        "corrected",
        "self_preferring",
        "reason",
        "note",
    ],
    title="Self-preference against a panel of judges of other families: flagged from the within-grade "
    "label estimate (the family's documents against other documents of the same human grade; 95% "
    "bootstrap CI and sign-flip p over queries; the nDCG raw / strictness / corrected are the papers' "
    f"figures, not flagged on; {chance(preference_tests, ALPHA)})",
)
length = tables["length"]
write_table(
    length,
    out.length,
    floatfmt=".3f",
    manifest=manifest,
    counts=["pairs", "pairs_without_text", "permutations"],
    view=[
        "judge",
        "pairs",
        "pairs_without_text",
        "rho_overall",
        "rho_within",
        "p_within",
        "permutations",
        "length_biased",
        "simpson",
    ],
    title="Length bias: passage length vs judge grade, overall and within human grades (permutation p-values "
    f"within query x grade blocks; length_biased at p < 0.01: {chance(len(length), 0.01)})",
)
write_table(
    tables["length_systems"],
    out.length_systems,
    floatfmt=".3f",
    manifest=manifest,
    empty=unsystematic("correlates the systems' passage lengths with their scores"),
    title="Length across systems vs within tiers: r of a system's judged top-10 passage length and its score "
    "(a tier flagged only when the overall r lies outside its Fisher-z 95% interval, sign reversed)",
)
shift_tests = len(tables["control_chart"])
DRIFT_VIEWS = {
    "drift": [
        "judge",
        "run",
        "against",
        "pairs",
        "queries",
        "flips",
        "flip_rate",
        "kappa_binary",
        "kappa_graded",
        "tau_systems",
    ],
    "control_chart": [
        "judge",
        "run",
        "against",
        "pairs",
        "queries",
        "mean_grade_first",
        "mean_grade",
        IntervalCell("mean_difference", "mean_difference", "difference_ci_low", "difference_ci_high"),
        "up",
        "down",
        "shift_p",
        "shifted",
    ],
}
for name, title in (
    (
        "drift",
        "Drift: each later label set of a judge against its first (re-runs, samples): flip rate, kappa and tau "
        "(95% cluster-bootstrap CIs over queries)",
    ),
    (
        "control_chart",
        "Paired shift: each later run's grades against the first run's on the same pairs "
        "(mean difference with a 95% bootstrap CI over queries; sign-flip test over queries, "
        f"shifted when p < alpha; {chance(shift_tests, ALPHA)})",
    ),
):
    frame = tables[name]
    frame = frame[["dataset", "judge"] + [c for c in frame.columns if c not in ("dataset", "judge")]]
    tables[name] = frame
    write_table(
        frame,
        getattr(out, name),
        floatfmt=".3f",
        manifest=manifest,
        counts=["pairs", "queries", "flips", "up", "down", "same"],
        title=title,
        view=DRIFT_VIEWS[name],
        empty="no judge has two label sets or more (reruns: of a recorded judge, samples: k of a live one)",
    )
drift_chart(tables["control_chart"], tables["drift"], out.drift_png)
topics = tables["topic_agreement"]
topics = topics[["dataset", "judge"] + [c for c in topics.columns if c not in ("dataset", "judge")]]
write_table(
    topics,
    out.topic_agreement,
    floatfmt=".3f",
    manifest=manifest,
    counts=["rank", "pairs"],
    first=("the topics where a judge disagrees more than over all its pairs", lambda rows: rows["disagrees_most"]),
    view=[
        "judge",
        "query_id",
        "rank",
        "pairs",
        IntervalCell("disagreement", "disagreement", "disagreement_ci_low_pairs", "disagreement_ci_high_pairs"),
        "disagrees_most",
        "agreement_binary",
        IntervalCell("kappa_binary", "kappa_binary", "kappa_binary_ci_low_pairs", "kappa_binary_ci_high_pairs"),
        IntervalCell("alpha", "alpha", "alpha_ci_low_pairs", "alpha_ci_high_pairs"),
        "alpha_level",
    ],
    title="Agreement topic by topic: each judge's disagreement with the humans on each topic's pairs over "
    "the disagreement chance gives over all its pairs (Krippendorff's D_o / D_e: 0 agrees, 1 chance), the "
    "most disagreeing first; the topic's own binary kappa and alpha (95% bootstrap intervals over the topic's "
    "pairs, descriptive); disagrees_most: the whole interval above the judge's disagreement over all pairs",
)
topic_agreement_chart(topics, out.topic_agreement_png)
ranking = tables["judge_ranking"]
write_table(
    ranking,
    out.judge_ranking,
    floatfmt=".3f",
    manifest=manifest,
    counts=["rank"],
    empty="no judge besides the human labels is configured",
    view=[
        "measure",
        "rank",
        "judge",
        "kind",
        "value",
        "next_judge",
        "difference",
        "p",
        "p_holm",
        "distinguishable",
        "tier",
    ],
    title="The judges' leaderboard: every judge ranked by its agreement with the humans (binary kappa, "
    "Krippendorff's alpha, tau over your systems), each with its 95% interval over queries, and each against the "
    "next one down: the difference on the same query resamples (95% paired interval), the swap test's p and the "
    f"p Holm-adjusted over the adjacent pairs; distinguishable at p_holm < {ALPHA:g}; a tier ends at each "
    "distinguishable pair",
)
judge_ranking_chart(ranking, out.judge_ranking_png)
leniency_chart(label_table, out.leniency_png)
circularity = tables["circularity"]
write_table(
    circularity,
    out.circularity,
    floatfmt=".3f",
    manifest=manifest,
    counts=["queries"],
    empty=unsystematic("reranks the oracles' base run by each judge's labels"),
    view=["ranker", "self_score", "human_score", "human_pool_score", "inflation", "queries"],
    title="Each judge as a ranker: its ranking of the base run scored under the humans, human@pool (the "
    "human labels of the judged pairs) and every judge (inflation = under itself - under human@pool, "
    "95% cluster-bootstrap CI over queries; reported, not flagged: every judge that differs from the "
    "humans scores its own ranking 1)",
)
if len(circularity):
    circularity_heatmap(circularity, out.circularity_png)
else:
    placeholder(out.circularity_png, f"{NO_SYSTEMS}:\nno base run for the judges to rerank")
# the audits declared beside their computation (voirdire.audits.registry): each table and figure as declared
for declared in registered_audits().values():
    for table in declared.tables:
        frame = tables[table.name]
        write_table(
            frame,
            getattr(out, table.name),
            floatfmt=table.floatfmt,
            manifest=manifest,
            counts=table.counts,
            empty=unsystematic(table.empty) if declared.systems else table.empty,
            first=table.first,
            view=table.view,
            title=table.heading(frame, ALPHA),
        )
        if not len(frame):
            log.info("%s: no rows (%s)", table.name, unsystematic(table.empty) if declared.systems else table.empty)
    for figure in declared.figures:
        figure.draw(tables[figure.table], getattr(out, f"{figure.name}_png"))
calibration = tables["calibration"]
calibration = calibration[["dataset", "judge"] + [c for c in calibration.columns if c not in ("dataset", "judge")]]
write_table(
    calibration,
    out.calibration,
    floatfmt=".3f",
    manifest=manifest,
    counts=["k", "draws"],
    empty=unsystematic("corrects the judges' scores of the systems with a few human-labelled queries"),
    view=[
        "judge",
        "k",
        "draws",
        "tau_judge",
        "tau_corrected",
        "tau_human_only",
        "ci_width_corrected",
        "coverage_corrected",
        "ci_width_human_only",
        "coverage_human_only",
    ],
    title="Calibration with k human-labelled queries: PPI++ (ppi_py) vs the judge alone and the humans alone; "
    "tau over draws (mean, 10th/50th/90th percentiles), 95% z intervals for both estimates and their "
    "coverage of each system's human mean over all queries",
)
if SYSTEMS:
    calibration_chart(calibration, out.calibration_png)
else:
    placeholder(out.calibration_png, f"{NO_SYSTEMS}:\nno systems' scores to calibrate")
confusion_heatmaps(heatmaps, out.confusion)
if SYSTEMS:
    lojo_chart(tables["lojo"], out.lojo_png)
else:
    placeholder(
        out.lojo_png, f"{NO_SYSTEMS}:\nno panel ranking of systems (lojo_labels.md: the labels without each judge)"
    )
length_chart(tables["deciles"], out.length_png)
flagged = label_table.loc[label_table["missed_failure_rate"] > 0.5, "judge"].tolist() if len(label_table) else []
log.info("%d label-test rows; judges calling most non-relevant pairs relevant: %s", len(label_table), flagged)
