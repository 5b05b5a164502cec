"""Stage 2a: a Lucene index (Pyserini / Anserini) of a local JSONL corpus."""

from voirdire.bm25 import build_index
from voirdire.wf import start

log = start(snakemake)  # noqa: F821
count = build_index(snakemake.input.corpus, snakemake.output[0], threads=snakemake.threads)  # noqa: F821
log.info("indexed %d passages", count)
