"""Stage 7: judge audits from labels: label test, leave-one-judge-out, self-preference corrected
for strictness, length bias and Simpson's paradox, drift, the judge as a ranker, calibration.
Every audit is declared beside its computation (voirdire.audits.registry): this script reads the
inputs, computes every table (voirdire.audits.run.audit_tables) and writes each table and draws
each figure as its audit declares them. Without systems (the label sets audited alone) the audits
of systems write no rows, and say why."""

import pandas as pd

from voirdire.audits.drift import label_sets_from_answers
from voirdire.audits.registry import load as registered_audits
from voirdire.audits.run import DatasetInputs, audit_tables
from voirdire.evaluation import PRIMARY_COLUMNS, primary_scores, read_scores
from voirdire.formats import read_pairs, read_qrels, read_run, read_topics
from voirdire.jobscript import grouped, start
from voirdire.judges import HUMAN, POOL, restrict
from voirdire.manifest import sha256
from voirdire.output import pyplot, save_figure, write_table
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
tables = audit_tables(
    datasets,
    system_families=params.system_families,
    measure=params.measure,
    seed=params.seed,
    alpha=ALPHA,
    depth=params.depth,
    ties=params.ties,
    settings=params.settings,
)

# every audit, declared beside its computation (voirdire.audits.registry): each table and figure as declared
for declared in registered_audits().values():
    for table in (t for t in declared.tables if t.written):
        frame = tables[table.name]
        empty = (
            unsystematic(table.empty) if (declared.systems if table.systems is None else table.systems) else table.empty
        )
        write_table(
            frame,
            getattr(out, table.name),
            floatfmt=table.floatfmt,
            manifest=manifest,
            counts=table.counts,
            empty=empty,
            first=table.first,
            view=table.view,
            title=table.heading(frame, ALPHA),
        )
        if not len(frame):
            log.info("%s: no rows (%s)", table.name, empty)
    for figure in declared.figures:
        png = getattr(out, f"{figure.name}_png")
        if figure.placeholder is not None and not SYSTEMS:
            placeholder(png, f"{NO_SYSTEMS}:\n{figure.placeholder}")
        else:
            figure.draw(*(tables[name] for name in figure.tables), png)
label_table = tables["label_test"]
flagged = label_table.loc[label_table["missed_failure_rate"] > 0.5, "judge"].tolist() if len(label_table) else []
log.info("%d label-test rows; judges calling most non-relevant pairs relevant: %s", len(label_table), flagged)
