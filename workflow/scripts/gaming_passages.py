"""The gamed system, step 1: every gamed system's top-k human-judged passages, modified by every
method (``{doc_id}#{method}``; docs/probes.md). A passage without a text cannot be modified: it
is left as it is, counted and said in the log."""

from voirdire.formats import atomic_write, read_pairs, read_passages, read_run, read_topics
from voirdire.jobscript import grouped, start
from voirdire.probes.gaming import items_to_modify, modified_texts

log = start(snakemake)
gaming = snakemake.params.gaming
runs = [read_run(path) for paths in grouped(snakemake.input)["runs"].values() for path in paths]
texts = read_passages(snakemake.input.passages)
judged = read_pairs(snakemake.input.pairs)
ties = snakemake.params.ties  # the top k in the order the systems are scored in
every, unjudged = items_to_modify(runs, gaming["k"], judged, ties=ties)
items, _ = items_to_modify(runs, gaming["k"], judged, texts, ties)  # a passage without a text cannot be modified
without_text = len(every) - len(items)
methods = {m: None if m == "stuff" else gaming["templates"][m] for m in gaming["methods"]}
table = modified_texts(items, methods, read_topics(snakemake.input.topics), texts, share=gaming["share"])
with atomic_write(snakemake.output[0], "wb") as fh:
    table.to_parquet(fh, index=False)
log.info(
    "%d top-%d pairs of %s modified by %s (%d texts); %d pairs of those top-k lists are unjudged by the "
    "humans, so stay unjudged and unmodified",
    len(items),
    gaming["k"],
    ", ".join(gaming["systems"]),
    ", ".join(methods),
    len(table),
    unjudged,
)
if without_text:
    log.warning(
        "%d human-judged pairs of those top-%d lists have no passage text (a recorded run retrieved them beyond the "
        "candidates whose texts the workflow holds): they cannot be modified, so stay as they are (counted in the "
        "gaming table's without_text)",
        without_text,
        gaming["k"],
    )
