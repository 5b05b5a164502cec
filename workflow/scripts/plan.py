"""`snakemake plan`: write and print the plan of every LLM call (no LLM call is made)."""

import sys

from voirdire.config import check
from voirdire.formats import atomic_write
from voirdire.jobscript import start
from voirdire.plan import render

log = start(snakemake)
text = render(check(snakemake.params.config))
with atomic_write(snakemake.output[0]) as fh:
    fh.write("# Judging plan (before any call)\n\n" + text + "\n")
print(text, file=sys.__stdout__)
log.info("\n%s", text)
