"""`snakemake plan`: write and print the judging plan (no LLM call is made)."""

import sys

from voirdire.config import check
from voirdire.formats import atomic_write
from voirdire.judging.plan import assistant_rows, plan_rows, probe_rows
from voirdire.wf import start

log = start(snakemake)  # noqa: F821
plan = check(snakemake.params.config)  # noqa: F821
table = plan_rows(plan)
text = table.to_markdown(index=False) if len(table) else "no LLM judges configured"
assistants = assistant_rows(plan)
if len(assistants):
    text += "\n\n## The assistants experiment (rewrites; the judges' labels of the sample and of the rewritten collections)\n\n"
    text += assistants.to_markdown(index=False)
probes = probe_rows(plan)
if len(probes):
    text += "\n\n## The judge probes (LLM paddings; each probed judge's grades and pairwise questions)\n\n"
    text += probes.to_markdown(index=False)
with atomic_write(snakemake.output[0]) as fh:  # noqa: F821
    fh.write("# Judging plan (before any call)\n\n" + text + "\n")
print(text, file=sys.__stdout__)
log.info("\n%s", text)
