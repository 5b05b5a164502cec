# Stage 5: every measure per query (judged-only nDCG@10 first by default), label and system
# agreement, paired t-tests per measure.


rule evaluate:
    input:
        runs=paths(system_runs),
        qrels=L.qrels(D, P, J),
        topics=L.topics(D),
    output:
        primary=L.eval(D, P, J),
        measures=L.eval_measures(D, P, J),
    wildcard_constraints:
        # a judge's name, never agreement.parquet or significance.parquet beside them (a group
        # job on a cluster resolves its target files alone, and would find two rules)
        judge=one_of(sorted({name for d in PLAN.datasets for name in PLAN.judge_names(d)})),
    params:
        scale=judge_params,
        runs=system_runs,
        measures=PLAN.measures,
        depth=PLAN.depth,
    log:
        f"{R}/logs/{{dataset}}/{{provenance}}/evaluate-{{judge}}.log",
    benchmark:
        f"{R}/logs/benchmarks/{{dataset}}/{{provenance}}/evaluate-{{judge}}.tsv",
    conda:
        "../../envs/voirdire.yaml"
    script:
        "../scripts/evaluate.py"


rule agreement:
    input:
        evals=paths(judge_evals),
        measures=paths(judge_measures),
        qrels=paths(judge_qrels),
        pairs=L.pairs(D, P),
        summaries=paths(judge_summaries),
        runs=paths(system_runs),
        topics=L.topics(D),
        manifest=L.manifest(),
    output:
        agreement=L.eval(D, P, "agreement"),
        significance=L.eval(D, P, "significance"),
        # the systems under the human labels of the judged pairs only: the reference a
        # label-copying judge matches exactly (Table 1's human@pool column)
        pool=L.eval_measures(D, P, "human@pool"),
    params:
        judges=judges_meta,
        qrels=judge_qrels,
        evals=judge_evals,
        measures=judge_measures,
        measure_names=PLAN.measures,
        summaries=judge_summaries,
        oracles=[str(o) for o in PLAN.oracles],
        alpha=config["evaluation"]["alpha"],
        rbo_p=config["evaluation"]["rbo_p"],
        min_coverage=config["evaluation"]["min_coverage"],
        correction=config["evaluation"]["correction"],
        resamples=config["evaluation"]["resamples"],
        seed=config["evaluation"]["seed"],
        runs=system_runs,
        depth=PLAN.depth,
    log:
        f"{R}/logs/{{dataset}}/{{provenance}}/agreement.log",
    benchmark:
        f"{R}/logs/benchmarks/{{dataset}}/{{provenance}}/agreement.tsv",
    conda:
        "../../envs/voirdire.yaml"
    script:
        "../scripts/agreement.py"
