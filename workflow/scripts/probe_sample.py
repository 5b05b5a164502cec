"""Probes, step 1: every probe's seeded sample of one dataset's pool (swap pairs, result-list
pairs, pad and injection passages, persona queries and pairs)."""

from voirdire.jobhost import hand_over

hand_over(snakemake)  # the rest may run in the machine's job host (voirdire.jobhost)

import json

from voirdire.formats import atomic_write, ranked, read_pairs, read_qrels, read_run
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
)
with atomic_write(snakemake.output[0]) as fh:
    json.dump(drawn, fh, indent=1, default=int)
for probe in ("swap", "pad", "injection"):
    part = drawn["summary"].get(probe) or {}
    short = part.get("short") or any(g.get("short") for g in part.get("grades", {}).values())
    if short:
        log.warning("probe %s: the pool has fewer pairs than asked (%s); every one it has is used", probe, part)
lists = drawn["summary"].get("lists")
if lists is not None and not lists["pairs"]:
    log.warning("probe lists: no two of %s differ in their top %d on the sampled queries %s: nothing to compare",
                lists["systems"], options["swap"]["lists"]["depth"], lists["queries"])  # fmt: skip
log.info("summary: %s", drawn["summary"])
