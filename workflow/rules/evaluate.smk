# Stage 5: every measure per query (judged-only nDCG@10 first by default), label and system
# agreement, paired t-tests per measure.


rule evaluate:
    input:
        unpack(named_inputs(runs=INPUTS.system_runs)),
        qrels=L.qrels(D, P, J),
        topics=L.topics(D),
    output:
        primary=L.eval(D, P, J),
        measures=L.eval_measures(D, P, J),
    log:
        L.log("{dataset}/{provenance}/evaluate-{judge}"),
    benchmark:
        L.benchmark("{dataset}/{provenance}/evaluate-{judge}")
    wildcard_constraints:
        # exactly the configured judges' names (a group job on a cluster resolves its target
        # files alone; human@pool's scores, beside them, come from the agreement rule)
        judge=one_of(sorted({name for d in PLAN.datasets for name in PLAN.judge_names(d)})),
    conda:
        "../../envs/voirdire.yaml"
    params:
        scale=INPUTS.judge_params,
        measures=PLAN.measures,
        depth=PLAN.depth,
    script:
        "../scripts/evaluate.py"


rule agreement:
    input:
        unpack(
            named_inputs(
                runs=INPUTS.system_runs,
                qrels=INPUTS.judge_qrels,
                measures=INPUTS.judge_measures,
                summaries=INPUTS.judge_summaries,
            )
        ),
        pairs=L.pairs(D, P),
        topics=L.topics(D),
        manifest=L.manifest(),
    output:
        agreement=L.agreement(D, P, "agreement"),
        significance=L.agreement(D, P, "significance"),
        # the systems under the human labels of the judged pairs only: the reference a
        # label-copying judge matches exactly (Table 1's human@pool column)
        pool=L.eval_measures(D, P, "human@pool"),
    log:
        L.log("{dataset}/{provenance}/agreement"),
    benchmark:
        L.benchmark("{dataset}/{provenance}/agreement")
    conda:
        "../../envs/voirdire.yaml"
    params:
        judges=INPUTS.judges_meta,
        measure_names=PLAN.measures,
        oracles=[str(o) for o in PLAN.oracles],
        alpha=config["evaluation"]["alpha"],
        rbo_p=config["evaluation"]["rbo_p"],
        min_coverage=config["evaluation"]["min_coverage"],
        correction=config["evaluation"]["correction"],
        test=config["evaluation"]["test"],
        resamples=config["evaluation"]["resamples"],
        seed=config["evaluation"]["seed"],
        depth=PLAN.depth,
    script:
        "../scripts/agreement.py"
