# Stage 9 (docs/verdict.md): "can I trust this judge?" on one page, from the tables above.

import time

RUN_STARTED = time.time()


rule verdict:
    input:
        unpack(INPUTS.verdict_inputs),
        manifest=L.manifest(),
        # the cost ledger: a line of it per LLM caller in the notes
        ledger=L.ledger("csv"),
    output:
        csv=in_report(L.verdict("csv"), "verdict"),
        md=L.verdict("md"),
        html=in_report(L.verdict("html"), "verdict"),
        # the report's first page embeds it (workflow/report/workflow.rst)
        fragment=L.verdict("fragment.html"),
    log:
        L.log("verdict"),
    benchmark:
        L.benchmark("verdict")
    conda:
        "../../envs/voirdire.yaml"
    params:
        judges={d: [j.name for j in js if j.kind != "human"] for d, js in PLAN.judges.items()},
        oracles=[str(o) for o in PLAN.oracles],
        # what a dataset lacks (systems, passage texts) -> the n/a of every question needing it
        unavailable={d: INPUTS.unavailable(d) for d in PLAN.datasets},
        alpha=config["evaluation"]["alpha"],
        # what the preflight found but did not stop on (a judge that never gives its top grade)
        notes=PREFLIGHT_NOTES,
    script:
        "../scripts/verdict.py"


# A run that made the verdict ends by printing it, a sentence per judge (not a dry run, not a
# Slurm job's own Snakemake, not a run that left the verdict as it was).
onsuccess:
    from voirdire.verdict import after_run

    message = after_run(L.verdict("csv"), since=RUN_STARTED, results=config["results"])
    if message:
        print(message)
