"""The cost ledger: per dataset and LLM caller, the calls the plan lists and what they cost (docs/batch.md)."""

from voirdire.config import check
from voirdire.jobscript import start
from voirdire.llm.ledger import ledger_notes
from voirdire.manifest import sha256
from voirdire.output import write_table
from voirdire.plan import ledger_rows

log = start(snakemake)
table = ledger_rows(check(snakemake.params.config))
write_table(
    table,
    snakemake.output.csv,
    floatfmt=".6f",
    title="Cost ledger: per LLM caller, the calls planned (tokens and dollars at most) and spent (from its stores)",
    manifest=sha256(snakemake.input.manifest),
    empty="no LLM caller is configured",
)
for line in ledger_notes(table):
    log.info("%s", line)
