"""Stage 2a: a Lucene index (Pyserini / Anserini) of a local JSONL corpus."""

from pathlib import Path

from voirdire.bm25 import build_index
from voirdire.jobscript import start

log = start(snakemake)
index_dir = Path(snakemake.output[0]).parent
count = build_index(snakemake.input.corpus, index_dir, threads=snakemake.threads)
log.info("indexed %d passages", count)
