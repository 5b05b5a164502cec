"""Stage 6b: Figure 3, the primary measure (nDCG@10) per system under human labels and each judge;
the ASL curves of every judge's tests of system pairs beside the humans'."""

import pandas as pd

from voirdire.jobscript import start
from voirdire.judges import HUMAN
from voirdire.paper import asl_figure, figure3

log = start(snakemake)
table = pd.read_csv(snakemake.input.table1, dtype={"dataset": str, "system": str})
table = table[table["measure"] == snakemake.params.measure].drop(columns=["measure", "human@pool"], errors="ignore")
judges = [HUMAN] + [c for c in table.columns if c not in ("dataset", "system", HUMAN)]
figure3(table, judges, snakemake.output.png, snakemake.output.pdf)
log.info("figure for %d datasets, judges %s", table["dataset"].nunique(), judges)
try:
    significance = pd.read_csv(snakemake.input.significance, dtype={"dataset": str, "judge": str})
except pd.errors.EmptyDataError:  # no pair of systems was tested (fewer than two, or one judge)
    significance = pd.DataFrame()
asl_figure(
    significance, snakemake.params.measure, snakemake.params.alpha, snakemake.output.asl, snakemake.output.asl_pdf
)
