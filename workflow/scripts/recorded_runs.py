"""Stage 2c: every recorded run of a dataset, read as trec_eval reads it and cut at the depth."""

import json

from voirdire.formats import atomic_write, read_run, read_topics, write_run
from voirdire.jobscript import start
from voirdire.parallel import in_processes
from voirdire.runs import normalise_run

log = start(snakemake)
topics = read_topics(snakemake.input.topics)
depth = snakemake.params.depth
with open(snakemake.input.data) as fh:
    set_aside = json.load(fh).get("set_aside", [])


def read_and_cut(name_spec: tuple) -> dict:
    """One recorded run read, cut and written; its summary."""
    name, spec = name_spec
    path = snakemake.input[spec["input"]]
    run, summary = normalise_run(
        read_run(path),
        topics,
        depth=depth,
        unknown_queries=spec["unknown_queries"],
        name=name,
        path=path,
        set_aside=set_aside,
    )
    write_run(run, snakemake.output[spec["output"]], tag=name)
    return summary


# a big folder in processes (the job's threads); the summaries and the log in the runs' order
summaries = in_processes(read_and_cut, list(snakemake.params.systems.items()), snakemake.threads)
for name, summary in zip(snakemake.params.systems, summaries, strict=True):
    if summary["unknown_queries_dropped"]:
        log.warning(
            "%s: dropped %d lines of %d queries that are not topics",
            name,
            summary["lines_dropped_unknown"],
            summary["unknown_queries_dropped"],
        )
    if summary["lines_set_aside"]:
        log.info("%s: %d lines of the queries set aside (datasets: queries) not read", name, summary["lines_set_aside"])
    if summary["topics_missing"]:
        log.warning("%s: %d topics have no ranking; they score 0 (as trec_eval -c)", name, summary["topics_missing"])
    if summary["queries_tied_top10"]:
        log.warning(
            "%s: %d queries have tied scores in the top 10; ordered as trec_eval does (score, then doc id "
            "descending), not by the file's rank column",
            name,
            summary["queries_tied_top10"],
        )
    if summary["queries_top10_single_precision"]:
        log.warning(
            "%s: in %d queries the top 10 is ordered otherwise when scores are read at single precision, as trec_eval "
            "reads them (scores that differ beyond about seven digits tie there and go by doc id descending), than at "
            "full precision: their measures depend on evaluation.ties (trec_eval, the default: single precision; "
            "exact: full precision, as ir_measures' default RR@k provider and figures published with such runs read "
            "them); counted in the Recorded runs table",
            name,
            summary["queries_top10_single_precision"],
        )
    if summary["documents_below_depth"]:
        log.info(
            "%s: cut at depth %d (%d documents below it are not scored)", name, depth, summary["documents_below_depth"]
        )
with atomic_write(snakemake.output.summary) as fh:
    json.dump({"dataset": snakemake.wildcards.dataset, "depth": depth, "runs": summaries}, fh, indent=2)
log.info("%d recorded runs read", len(summaries))
