# Stage 5: every measure per query under every judge (judged-only nDCG@10 first by default),
# one table per dataset and provenance; label and system agreement, paired t-tests per measure.


rule scores:
    input:
        unpack(named_inputs(runs=INPUTS.system_runs, qrels=INPUTS.judge_qrels)),
        pairs=L.pairs(D, P),
        topics=L.topics(D),
    output:
        # every judge's, and human@pool's: the systems under the human labels of the judged
        # pairs only, the reference a label-copying judge matches (Table 1's human@pool column)
        scores=L.scores(D, P),
    log:
        L.log("{dataset}/{provenance}/scores"),
    benchmark:
        L.benchmark("{dataset}/{provenance}/scores")
    conda:
        "../../envs/voirdire.yaml"
    # the judges are scored in processes where there are many runs
    threads: INPUTS.runs_threads
    params:
        judges=INPUTS.judges_meta,
        measures=PLAN.measures,
        depth=PLAN.depth,
        # single precision as trec_eval reads scores, or the full score (evaluation.ties)
        ties=config["evaluation"]["ties"],
    script:
        "../scripts/scores.py"


rule agreement:
    input:
        unpack(
            named_inputs(
                qrels=INPUTS.judge_qrels,
                scores=INPUTS.dataset_scores,
                summaries=INPUTS.judge_summaries,
            )
        ),
        pairs=L.pairs(D, P),
        manifest=L.manifest(),
    output:
        agreement=L.agreement(D, P, "agreement"),
        significance=L.agreement(D, P, "significance"),
    log:
        L.log("{dataset}/{provenance}/agreement"),
    benchmark:
        L.benchmark("{dataset}/{provenance}/agreement")
    # on the way to the tables and the verdict (the audits beside it are not)
    priority: 10
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
    script:
        "../scripts/agreement.py"
