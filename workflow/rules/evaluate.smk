# Stage 5 (SPEC section 4): judged-only nDCG@10 per query, label and system agreement,
# paired t-tests.


rule evaluate:
    input:
        runs=system_runs,
        qrels=f"{R}/{{dataset}}/qrels/{{provenance}}/{{judge}}.txt",
        topics=f"{R}/{{dataset}}/data/topics.tsv",
    output:
        f"{R}/{{dataset}}/eval/{{provenance}}/{{judge}}.parquet",
    params:
        scale=judge_params,
        systems=system_run_names,
    log:
        f"{R}/logs/{{dataset}}/{{provenance}}/evaluate-{{judge}}.log",
    conda:
        "../../envs/voirdire.yaml"
    script:
        "../scripts/evaluate.py"


rule agreement:
    input:
        evals=judge_evals,
        qrels=judge_qrels_files,
        pairs=f"{R}/{{dataset}}/pairs/{{provenance}}.tsv",
        summaries=lambda wildcards: list(judge_summaries(wildcards).values()),
    output:
        agreement=f"{R}/{{dataset}}/eval/{{provenance}}/agreement.parquet",
        significance=f"{R}/{{dataset}}/eval/{{provenance}}/significance.parquet",
    params:
        judges=judges_meta,
        summary_judges=lambda wildcards: list(judge_summaries(wildcards)),
        oracles=[str(o) for o in PLAN.oracles],
        alpha=config["evaluation"]["alpha"],
        rbo_p=config["evaluation"]["rbo_p"],
    log:
        f"{R}/logs/{{dataset}}/{{provenance}}/agreement.log",
    conda:
        "../../envs/voirdire.yaml"
    script:
        "../scripts/agreement.py"
