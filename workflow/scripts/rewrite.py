"""Assistants experiment, step 2: an assistant rewrites the sampled passages (live or recorded)."""

from voirdire.assistants.job import CHECK_OPTIONS, run_recorded_rewrites, run_rewrite_job
from voirdire.formats import read_corpus, read_passages, read_rankgpt
from voirdire.jobscript import start

log = start(snakemake)
assistant, settings = snakemake.params.assistant, snakemake.params.rewriting
originals = read_passages(snakemake.input.passages)
options = {k: settings[k] for k in CHECK_OPTIONS}
common = dict(
    out=snakemake.output.table,
    summary_out=snakemake.output.summary,
    options=options,
    drop_flagged=settings["drop_flagged"],
)
if assistant.kind == "recorded":
    spec = snakemake.params.spec
    # which ids are passages of the dataset: the corpus's (a RankGPT file: its candidates')
    if "corpus" in spec:
        known = {doc_id for doc_id, _ in read_corpus(spec["corpus"])}
    elif spec["source"] == "rankgpt":
        known = set(read_rankgpt(spec["candidates"])[2])
    else:  # a prebuilt index: ids are looked up one by one only when the file names them
        known = None
        log.info("the dataset has no local corpus: rewrite ids are not checked against it")
    summary = run_recorded_rewrites(assistant, originals, known, **common)
    if summary["missing"]:
        log.warning(
            "%d sampled passages have no rewrite in %s; they are left out (first: %s)",
            summary["missing"],
            assistant.rewrites,
            summary["missing_ids"][0],
        )
else:
    summary = run_rewrite_job(
        assistant,
        originals,
        store_path=snakemake.params.store,
        max_in_flight=snakemake.resources.llm_slots or None,
        **common,
    )
checks = summary["checks"]
if checks.get("flagged"):
    log.warning(
        "%d of %d rewrites are flagged (%s); %s",
        checks["flagged"],
        summary["passages"],
        ", ".join(
            f"{k} {checks[k]}" for k in ("empty", "refusal", "copy", "length_out_of_range", "preamble") if checks.get(k)
        ),
        "left out" if settings["drop_flagged"] else "kept (rewriting.drop_flagged: false)",
    )
log.info("summary: %s", summary)
