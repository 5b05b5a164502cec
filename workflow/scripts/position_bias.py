"""Stage 6c: the PRP rankers' position-bias table (order-dependent pairs, first-position wins)."""

import json
from pathlib import Path

import pandas as pd

from voirdire.jobscript import start
from voirdire.manifest import sha256
from voirdire.output import write_table
from voirdire.rankers.rerank import POSITION_BIAS_COUNTS, POSITION_BIAS_VIEW

log = start(snakemake)
rows = []
for path in snakemake.input.bias:
    found = json.loads(Path(path).read_text())
    rows.append(
        {
            "dataset": Path(path).parents[2].name,
            "ranker": found["ranker"],
            "variant": found["variant"],
            "model": found["model"],
            **(found["bias"] or {}),
        }
    )
write_table(
    pd.DataFrame(rows),
    snakemake.output.csv,
    title="Position bias of the PRP rankers (each pair asked in both orders)",
    floatfmt=".3f",
    manifest=sha256(snakemake.input.manifest),
    view=POSITION_BIAS_VIEW,
    counts=POSITION_BIAS_COUNTS,
)
log.info("%d rows", len(rows))
