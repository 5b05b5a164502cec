# Stage 6 (paper Tables 1-2, Figure 3): tables, figure and the environment fingerprint.


rule tables:
    input:
        # rewritten-* provenances: the assistant's model and the version its provider returned;
        # served judges' and rankers' summaries: the model server's own name and version
        unpack(named_inputs(rewrites=INPUTS.rewrite_summaries, served=INPUTS.served_records)),
        agreement=INPUTS.all_datasets(L.agreement(D, P, "agreement")),
        significance=INPUTS.all_datasets(L.agreement(D, P, "significance")),
        scores=INPUTS.all_scores,
        runs_summaries=[L.runs_summary(d) for d in PLAN.datasets] if PLAN.recorded else [],
        manifest=L.manifest(),
        data_summaries=INPUTS.all_datasets(L.data_summary(D)),
    output:
        datasets=in_report(L.table(P, "datasets", "csv"), "datasets"),
        datasets_md=L.table(P, "datasets", "md"),
        table1=in_report(L.table(P, "table1", "csv"), "table1"),
        table1_md=L.table(P, "table1", "md"),
        table2=in_report(L.table(P, "table2", "csv"), "table2"),
        table2_md=L.table(P, "table2", "md"),
        recorded_runs=in_report(L.table(P, "recorded_runs", "csv"), "recorded_runs"),
        recorded_runs_md=L.table(P, "recorded_runs", "md"),
        significance=in_report(L.table(P, "significance", "csv"), "significance"),
        significance_md=L.table(P, "significance", "md"),
        per_query=L.table(P, "per_query", "parquet"),
        fingerprint=in_report(L.table(P, "fingerprint", "json"), "fingerprint"),
    log:
        L.log("{provenance}/tables"),
    benchmark:
        L.benchmark("{provenance}/tables")
    # the verdict waits for the tables: they go before the figures and audits ready beside them
    priority: 10
    conda:
        "../../envs/voirdire.yaml"
    params:
        systems=[str(s) for s in PLAN.systems],
        measures=PLAN.measures,
        depth=PLAN.depth,
        resamples=config["evaluation"]["resamples"],
        seed=config["evaluation"]["seed"],
        config=as_plain(config),
    script:
        "../scripts/tables.py"


# Figure 3 and the ASL curves of Table 2's tests (one job), drawn from the scores and the tests
# themselves: it runs beside the tables job, not after it
rule figure3:
    input:
        scores=INPUTS.all_scores,
        significance=INPUTS.all_datasets(L.agreement(D, P, "significance")),
    output:
        png=in_report(L.figure(P, "figure3", "png"), "figure3"),
        pdf=L.figure(P, "figure3", "pdf"),
        asl=in_report(L.figure(P, "asl", "png"), "asl"),
        asl_pdf=L.figure(P, "asl", "pdf"),
    log:
        L.log("{provenance}/figure3"),
    benchmark:
        L.benchmark("{provenance}/figure3")
    conda:
        "../../envs/voirdire.yaml"
    params:
        systems=[str(s) for s in PLAN.systems],
        measure=PLAN.measures[0],
        alpha=config["evaluation"]["alpha"],
    script:
        "../scripts/figure3.py"


rule position_bias:
    input:
        bias=INPUTS.position_bias_files,
        manifest=L.manifest(),
    output:
        csv=in_report(L.table(P, "position_bias", "csv"), "position_bias"),
        md=L.table(P, "position_bias", "md"),
    log:
        L.log("{provenance}/position_bias"),
    benchmark:
        L.benchmark("{provenance}/position_bias")
    conda:
        "../../envs/voirdire.yaml"
    script:
        "../scripts/position_bias.py"


# Where the time went: every job's benchmark file, read once every other output exists.
rule timings:
    input:
        run_outputs(),
        verdict_outputs(),
    output:
        csv=in_report(L.timings("csv"), "timings"),
        md=L.timings("md"),
    log:
        L.log("timings"),
    conda:
        "../../envs/voirdire.yaml"
    params:
        folder=L.benchmarks(),
    script:
        "../scripts/timings.py"
