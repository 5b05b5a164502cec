# Stage 9 (docs/verdict.md): "can I trust this judge?" on one page, from the tables above.


rule verdict:
    input:
        unpack(INPUTS.verdict_inputs),
        manifest=L.manifest(),
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
    script:
        "../scripts/verdict.py"
