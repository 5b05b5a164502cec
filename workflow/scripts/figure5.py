"""Figure 5: score differences (rewritten - original) of the pointwise rankers on the sample."""

import pandas as pd

from voirdire.assistants.experiments import score_shift
from voirdire.assistants.figures import figure5
from voirdire.formats import read_pairs
from voirdire.manifest import sha256
from voirdire.output import write_table
from voirdire.wf import grouped, start

log = start(snakemake)  # noqa: F821
out = snakemake.output  # noqa: F821
assistant = snakemake.wildcards.provenance.removeprefix("rewritten-")  # noqa: F821
frames = []
for dataset, ranker, path in [(d, r, p) for d, rankers in grouped(snakemake.input)["scores"].items()  # noqa: F821
                               for r, p in rankers.items()]:
    scores = read_pairs(path).astype({"human": int, "original": float, "rewritten": float})
    frames.append(scores.assign(dataset=dataset, assistant=assistant, ranker=ranker))
scores = pd.concat(frames, ignore_index=True)
table = score_shift(scores, alpha=snakemake.params.alpha)  # noqa: F821
write_table(table, out.table, manifest=sha256(snakemake.input.manifest),  # noqa: F821
            title=f"Figure 5: pointwise rankers' scores of the sample, {snakemake.wildcards.provenance} - original")  # noqa: F821  # fmt: skip
figure5(scores, out.png, out.pdf)
log.info("\n%s", table.to_string())
