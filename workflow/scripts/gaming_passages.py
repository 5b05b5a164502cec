"""The gamed system, step 1: every gamed system's top-k human-judged passages, modified by every
method (``{doc_id}#{method}``; docs/probes.md)."""

from voirdire.jobhost import hand_over

hand_over(snakemake)  # the rest may run in the machine's job host (voirdire.jobhost)

from voirdire.formats import atomic_write, read_pairs, read_passages, read_run, read_topics
from voirdire.jobscript import grouped, start
from voirdire.probes.gaming import items_to_modify, modified_texts

log = start(snakemake)
gaming = snakemake.params.gaming
runs = [read_run(path) for paths in grouped(snakemake.input)["runs"].values() for path in paths]
items, unjudged = items_to_modify(runs, gaming["k"], read_pairs(snakemake.input.pairs))
methods = {m: None if m == "stuff" else gaming["templates"][m] for m in gaming["methods"]}
table = modified_texts(items, methods, read_topics(snakemake.input.topics), read_passages(snakemake.input.passages),
                       share=gaming["share"])  # fmt: skip
with atomic_write(snakemake.output[0], "wb") as fh:
    table.to_parquet(fh, index=False)
log.info("%d top-%d pairs of %s modified by %s (%d texts); %d pairs of those top-k lists are unjudged by the "
         "humans, so stay unjudged and unmodified", len(items), gaming["k"], ", ".join(gaming["systems"]),
         ", ".join(methods), len(table), unjudged)  # fmt: skip
