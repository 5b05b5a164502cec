"""Stage 2 of a dataset with ``texts:`` (no BM25 pool): the texts of exactly the passages its
needed pairs name, from a Lucene index (a folder or a Pyserini prebuilt name) or the official
JSONL segment files (voirdire.textsource). A passage the source lacks is counted and said here."""

import json

import pandas as pd

from voirdire.formats import atomic_write, read_pairs
from voirdire.jobscript import start
from voirdire.textsource import needed_texts

log = start(snakemake)
pairs = read_pairs(snakemake.input.pairs)
texts, summary = needed_texts(snakemake.params.texts, pairs["doc_id"])
passages = pd.DataFrame({"doc_id": list(texts), "text": list(texts.values())})
with atomic_write(snakemake.output.passages, "wb") as fh:
    passages.to_parquet(fh, index=False)
with atomic_write(snakemake.output.summary) as fh:
    json.dump(summary, fh, indent=2)
log.info(
    "%d of the %d passages of the %d needed pairs found in %s %s",
    summary["found"],
    summary["passages"],
    len(pairs),
    summary["source"],
    summary["where"],
)
if summary["missing"]:
    without = int((~pairs["doc_id"].isin(set(texts))).sum())
    log.warning(
        "%d passages (%d needed pairs) are not in %s %s, so have no text: the judges that read texts leave those "
        "pairs uncovered (Table 2's coverage), the length audit, the probes and the gamed system leave them out "
        "(first: %s)",
        summary["missing"],
        without,
        summary["source"],
        summary["where"],
        ", ".join(summary["first_missing"][:5]),
    )
