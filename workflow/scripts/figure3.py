"""Stage 6b: Figure 3, the primary measure (nDCG@10) per system under human labels and each judge
(Table 1's means, from the scores tables); the ASL curves of every judge's tests of system pairs
beside the humans' (from agreement's tests)."""

import pandas as pd

from voirdire.evaluation import POOL, read_scores
from voirdire.jobscript import start
from voirdire.judges import HUMAN
from voirdire.paper import asl_figure, figure3, table1

log = start(snakemake)
params = snakemake.params
scores = read_scores(snakemake.input.scores)  # none without systems
scores = scores[scores["measure"] == params.measure]
judges = [HUMAN] + [j for j in scores["judge"].unique() if j not in (HUMAN, POOL)]
table = (
    table1(scores, params.systems, judges, [params.measure]).drop(columns="measure")
    if len(scores)
    else pd.DataFrame(columns=["dataset", "system", HUMAN])
)
figure3(table, judges, snakemake.output.png, snakemake.output.pdf)
log.info("figure for %d datasets, judges %s", table["dataset"].nunique(), judges)
# no pair of systems tested (fewer than two, or one judge): no rows, and the figure says so
significance = pd.concat([pd.read_parquet(p) for p in snakemake.input.significance], ignore_index=True)
asl_figure(significance, params.measure, params.alpha, snakemake.output.asl, snakemake.output.asl_pdf)
