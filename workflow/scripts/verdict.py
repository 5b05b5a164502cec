"""Stage 9: the verdict, one row per judge and dataset, from the tables the questions read."""

import pandas as pd

from voirdire.formats import atomic_write
from voirdire.jobscript import start
from voirdire.llm.ledger import ledger_notes
from voirdire.manifest import sha256
from voirdire.output import write_csv
from voirdire.verdict import DatasetTables, coverage_notes, fragment, html, markdown, verdict

log = start(snakemake)
params, out = snakemake.params, snakemake.output


def read(path: str) -> pd.DataFrame:
    """A table; one no job had a row for may be written without a header."""
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


figure = snakemake.input.get("figure3")  # under the verdict on the report's first page
tables = {name: read(path) for name, path in snakemake.input.items() if name not in ("manifest", "figure3", "ledger")}
datasets = {
    dataset: DatasetTables(
        judges=judges,
        tables=tables,
        oracles=params.oracles,
        alpha=params.alpha,
        unavailable=params.unavailable.get(dataset, {}),
    )
    for dataset, judges in params.judges.items()
}
long = verdict(datasets)
notes = [
    *params.notes,
    *coverage_notes(tables.get("table2", pd.DataFrame())),
    *ledger_notes(read(snakemake.input.ledger), source=snakemake.input.ledger),
]
with atomic_write(out.csv) as fh:
    write_csv(long, fh)  # as every table: CSV_FLOAT
with atomic_write(out.md) as fh:
    fh.write(markdown(long, notes=notes, fingerprint=sha256(snakemake.input.manifest)))
with atomic_write(out.html) as fh:
    fh.write(html(long, notes=notes, figure=figure))
with atomic_write(out.fragment) as fh:
    fh.write(fragment(long, notes=notes, figure=figure))
flags = long[long["status"] == "flag"]
log.info(
    "verdict: %d judge(s), %d flag(s): %s",
    long[["dataset", "judge"]].drop_duplicates().shape[0],
    len(flags),
    ", ".join(f"{r.judge}/{r.question}" for r in flags.itertuples()) or "none",
)
