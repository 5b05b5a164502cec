"""Probes, step 1: every probe's seeded sample of one dataset's pool (swap pairs, result-list
pairs, pad and injection passages, persona queries and pairs). Only pairs whose passage has a
text are drawn; those left out are counted in the summary and said in the log."""

import json

from voirdire.formats import atomic_write, ranked, read_pairs, read_passages, read_qrels, read_run
from voirdire.jobscript import start
from voirdire.probes.items import draw_probes

log = start(snakemake)
options = snakemake.params.probes
# system -> query -> its ranking (an oracle's first tie-break draw)
rankings = {system: ranked(read_run(paths[0])) for system, paths in snakemake.params.runs.items()}
drawn = draw_probes(
    options,
    pairs=read_pairs(snakemake.input.pairs),
    human=read_qrels(snakemake.input.qrels),
    rankings=rankings,
    list_systems=snakemake.params.list_systems,
    low=snakemake.params.low,
    texts=read_passages(snakemake.input.passages),
)
with atomic_write(snakemake.output[0]) as fh:
    json.dump(drawn, fh, indent=1, default=int)
for probe in ("swap", "pad", "injection"):
    part = drawn["summary"].get(probe) or {}
    short = part.get("short") or any(g.get("short") for g in part.get("grades", {}).values())
    if short:
        log.warning("probe %s: the pool has fewer pairs than asked (%s); every one it has is used", probe, part)
summary = drawn["summary"]
if summary["without_text"]:
    left = {
        p: summary[p].get("without_text_left_out" if p == "personas" else "without_text", 0)
        for p in ("swap", "pad", "injection", "personas")
        if p in summary
    }
    log.warning(
        "%d of the %d human-judged pool pairs have no passage text (a recorded run retrieved them beyond the "
        "candidates whose texts the workflow holds): no probe draws them; left out (swap: candidate pairs, pad and "
        "injection: passages of the grades drawn, personas: pairs): %s",
        summary["without_text"],
        summary["judged_pool_pairs"],
        left,
    )
lists = summary.get("lists")
if lists is not None and lists["without_text"]:
    log.warning(
        "probe lists: %d pairs of result lists left out: a list holds a passage without a text (the judge would read "
        "a list with a hole in it)",
        lists["without_text"],
    )
if lists is not None and not lists["pairs"]:
    log.warning(
        "probe lists: no two of %s differ in their top %d on the sampled queries %s%s: nothing to compare",
        lists["systems"],
        options["swap"]["lists"]["depth"],
        lists["queries"],
        " (or every pair that differs holds a passage without a text)" if lists["without_text"] else "",
    )
log.info("summary: %s", drawn["summary"])
