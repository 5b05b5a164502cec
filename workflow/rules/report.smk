# Stage 6 (paper Tables 1-2, Figure 3): tables, figure and the environment fingerprint.


rule tables:
    input:
        agreement=all_datasets(L.eval(D, P, "agreement")),
        significance=all_datasets(L.eval(D, P, "significance")),
        judge_evals=all_judge_evals,
        judge_measures=all_judge_measures,
        pool=all_datasets(L.eval_measures(D, P, "human@pool")),
        runs_summaries=[L.runs_summary(d) for d in PLAN.datasets] if PLAN.recorded else [],
        manifest=L.manifest(),
        data_summaries=all_datasets(L.data_summary(D)),
        # rewritten-* provenances: the assistant's model and the version its provider returned
        rewrites=lambda wildcards: [] if wildcards.provenance == "original" else [
            L.rewrites(d, wildcards.provenance, "summary.json") for d in PLAN.datasets
        ],
        # served judges' and rankers' summaries: the model server's own name and version
        served=paths(served_records),
    output:
        datasets=report(
            f"{R}/tables/{{provenance}}/datasets.csv",
            caption="../report/datasets.rst",
            category="Tables",
        ),
        datasets_md=f"{R}/tables/{{provenance}}/datasets.md",
        table1=report(
            f"{R}/tables/{{provenance}}/table1.csv",
            caption="../report/table1.rst",
            category="Tables",
        ),
        table1_md=f"{R}/tables/{{provenance}}/table1.md",
        table2=report(
            f"{R}/tables/{{provenance}}/table2.csv",
            caption="../report/table2.rst",
            category="Tables",
        ),
        table2_md=f"{R}/tables/{{provenance}}/table2.md",
        recorded_runs=report(
            f"{R}/tables/{{provenance}}/recorded_runs.csv",
            caption="../report/recorded_runs.rst",
            category="Tables",
        ),
        recorded_runs_md=f"{R}/tables/{{provenance}}/recorded_runs.md",
        significance=report(
            f"{R}/tables/{{provenance}}/significance.csv",
            caption="../report/significance.rst",
            category="Tables",
        ),
        significance_md=f"{R}/tables/{{provenance}}/significance.md",
        per_query=f"{R}/tables/{{provenance}}/per_query.parquet",
        fingerprint=report(
            f"{R}/tables/{{provenance}}/fingerprint.json",
            caption="../report/fingerprint.rst",
            category="Reproducibility",
        ),
    params:
        systems=[str(s) for s in PLAN.systems],
        measures=PLAN.measures,
        depth=PLAN.depth,
        served=served_records,
        config=as_plain(config),
    log:
        f"{R}/logs/{{provenance}}/tables.log",
    benchmark:
        f"{R}/logs/benchmarks/{{provenance}}/tables.tsv",
    conda:
        "../../envs/voirdire.yaml"
    script:
        "../scripts/tables.py"


rule figure3:
    input:
        table1=f"{R}/tables/{{provenance}}/table1.csv",
    params:
        measure=PLAN.measures[0],
    output:
        png=report(
            f"{R}/figures/{{provenance}}/figure3.png",
            caption="../report/figure3.rst",
            category="Figures",
        ),
        pdf=f"{R}/figures/{{provenance}}/figure3.pdf",
    log:
        f"{R}/logs/{{provenance}}/figure3.log",
    benchmark:
        f"{R}/logs/benchmarks/{{provenance}}/figure3.tsv",
    conda:
        "../../envs/voirdire.yaml"
    script:
        "../scripts/figure3.py"


rule position_bias:
    input:
        bias=position_bias_files,
        manifest=L.manifest(),
    output:
        csv=report(
            f"{R}/tables/{{provenance}}/position_bias.csv",
            caption="../report/position_bias.rst",
            category="Tables",
        ),
        md=f"{R}/tables/{{provenance}}/position_bias.md",
    log:
        f"{R}/logs/{{provenance}}/position_bias.log",
    benchmark:
        f"{R}/logs/benchmarks/{{provenance}}/position_bias.tsv",
    conda:
        "../../envs/voirdire.yaml"
    script:
        "../scripts/position_bias.py"


# Where the time went: every job's benchmark file, read once every other output exists.
rule timings:
    input:
        run_outputs(),
    output:
        csv=report(
            f"{R}/tables/timings.csv",
            caption="../report/timings.rst",
            category="Reproducibility",
        ),
        md=f"{R}/tables/timings.md",
    params:
        folder=f"{R}/logs/benchmarks",
    log:
        f"{R}/logs/timings.log",
    conda:
        "../../envs/voirdire.yaml"
    script:
        "../scripts/timings.py"
