"""Figure 5: score differences (rewritten - original) of the pointwise rankers on the sample."""

import pandas as pd

from voirdire.assistants.experiments import SCORE_SHIFT_VIEW, score_shift
from voirdire.assistants.figures import figure5
from voirdire.formats import read_pairs
from voirdire.jobscript import grouped, start
from voirdire.manifest import sha256
from voirdire.output import write_table

log = start(snakemake)
out = snakemake.output
assistant = snakemake.wildcards.provenance.removeprefix("rewritten-")
frames = []
for dataset, ranker, path in [
    (d, r, p) for d, rankers in grouped(snakemake.input)["scores"].items() for r, p in rankers.items()
]:
    scores = read_pairs(path).astype({"human": int, "original": float, "rewritten": float})
    frames.append(scores.assign(dataset=dataset, assistant=assistant, ranker=ranker))
scores = pd.concat(frames, ignore_index=True)
table = score_shift(scores, alpha=snakemake.params.alpha)
write_table(
    table,
    out.table,
    manifest=sha256(snakemake.input.manifest),
    view=SCORE_SHIFT_VIEW,
    counts=["pairs", "n", "queries", "tests"],
    title=f"Figure 5: pointwise rankers' scores of the sample, {snakemake.wildcards.provenance} - original",
)
figure5(scores, out.png, out.pdf)
log.info("\n%s", table.to_string())
