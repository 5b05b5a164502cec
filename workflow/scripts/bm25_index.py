"""Stage 2a: a Lucene index (Pyserini / Anserini) of a local JSONL corpus."""

from pathlib import Path

from voirdire.bm25 import build_index
from voirdire.wf import start

log = start(snakemake)  # noqa: F821
index_dir = Path(snakemake.output[0]).parent  # noqa: F821 - the output is the completion marker
count = build_index(snakemake.input.corpus, index_dir, threads=snakemake.threads)  # noqa: F821
log.info("indexed %d passages", count)
