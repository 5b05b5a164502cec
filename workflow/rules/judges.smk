# Stage 4 (docs/configuration.md): judges turn the pairs evaluation needs into qrels.
# Every judge rule reads pairs/{provenance}.tsv and writes qrels/{provenance}/{judge}.txt.


rule needed_pairs:
    input:
        unpack(INPUTS.pairs_inputs),
    output:
        L.pairs(D, P),
    log:
        L.log("{dataset}/{provenance}/needed_pairs"),
    benchmark:
        L.benchmark("{dataset}/{provenance}/needed_pairs")
    # the pool judge's prerequisite: a rule's priority is not passed on to the jobs it waits
    # for, so its chain (these pairs, the gamed system's passages) asks the same
    priority: 50
    conda:
        "../../envs/voirdire.yaml"
    params:
        depth=PLAN.depth,
    script:
        "../scripts/needed_pairs.py"


rule human_judge:
    input:
        L.human_qrels(D),
    output:
        L.qrels(D, P, "human"),
    log:
        L.log("{dataset}/{provenance}/judge-human"),
    benchmark:
        L.benchmark("{dataset}/{provenance}/judge-human")
    conda:
        "../../envs/voirdire.yaml"
    shell:
        "cp {input:q} {output:q} 2> {log:q}"


# Recorded judges: one job per dataset and provenance reads every recorded judge's label file
# and writes each one's qrels and summary (a challenge's 84 label sets start Python once, not 84
# times). A judge whose qrels name only some datasets gives those datasets a rule of their own.
for index, (datasets, names) in enumerate(INPUTS.recorded_judge_sets()):

    rule:
        name:
            "recorded_judges" if index == 0 else f"recorded_judges_{index + 1}"
        input:
            unpack(named_inputs(labels=INPUTS.recorded_qrels)),
            pairs=L.pairs(D, P),
        output:
            **INPUTS.recorded_outputs(names),
        log:
            L.log("{dataset}/{provenance}/recorded_judges"),
        benchmark:
            L.benchmark("{dataset}/{provenance}/recorded_judges")
        wildcard_constraints:
            dataset=one_of(datasets),
        conda:
            "../../envs/voirdire.yaml"
        params:
            scale=INPUTS.recorded_scales,
            invalid_labels=INPUTS.recorded_invalid_labels,
        script:
            "../scripts/recorded_judges.py"


rule null_judge:
    input:
        unpack(INPUTS.texts_inputs),
        pairs=L.pairs(D, P),
        topics=L.topics(D),
    output:
        L.qrels(D, P, J),
    log:
        L.log("{dataset}/{provenance}/judge-{judge}"),
    benchmark:
        L.benchmark("{dataset}/{provenance}/judge-{judge}")
    wildcard_constraints:
        judge=INPUTS.judges_of_kind("baseline"),
    conda:
        "../../envs/voirdire.yaml"
    params:
        method=lambda wildcards: PLAN.judge(wildcards.dataset, wildcards.judge).method,
    script:
        "../scripts/null_judge.py"


# The job also asks, ahead and into its store only, what the judge's other jobs will ask: the
# assistants experiment's sample, and (original texts) the gamed system's passages; those jobs
# then copy the answers instead of loading the model (or litellm) again.
rule llm_judge:
    input:
        unpack(INPUTS.sample_texts_inputs if PLAN.assistants else INPUTS.texts_inputs),
        pairs=L.pairs(D, P),
        sample=[L.sample(D)] if PLAN.assistants else [],
        gaming=lambda wildcards: (
            [L.gaming_passages(wildcards.dataset)]
            if wildcards.provenance == "original" and wildcards.judge in PLAN.gaming_judges
            else []
        ),
        topics=L.topics(D),
        prompt=lambda wildcards: str(PLAN.judge(wildcards.dataset, wildcards.judge).prompt_file),
        seeds_done=lambda wildcards: list(INPUTS.judge_seeds(wildcards).values()),
        # a served model: its server's record (layer 1 waits for the original's answers)
        served=lambda wildcards: INPUTS.served_input(
            PLAN.judge(wildcards.dataset, wildcards.judge), int(wildcards.provenance != "original")
        ),
    output:
        qrels=L.qrels(D, P, J),
        raw=L.judgments(D, P, J, "parquet"),
        summary=L.judgments(D, P, J, "summary.json"),
    log:
        L.log("{dataset}/{provenance}/judge-{judge}"),
    benchmark:
        L.benchmark("{dataset}/{provenance}/judge-{judge}")
    wildcard_constraints:
        judge=INPUTS.judges_of_kind("llm"),
    # usually the longest job and on the critical path (the rewritten collection's judging and
    # every table wait for it): start it, and what it waits for, before the assistants' branch
    priority: 50
    conda:
        "../../envs/voirdire.yaml"
    threads: lambda wildcards: caller_threads(PLAN.judge(wildcards.dataset, wildcards.judge))
    resources:
        mem_mb=4000,
        llm_slots=lambda wildcards: llm_slots(
            PLAN.judge(wildcards.dataset, wildcards.judge).endpoint
        ),
    params:
        judge=lambda wildcards: PLAN.judge(wildcards.dataset, wildcards.judge),
        # the judgment store: a cache kept across runs, so it is not a declared output
        store=lambda wildcards: L.store(wildcards.dataset, wildcards.provenance, wildcards.judge),
        seeds=lambda wildcards: list(INPUTS.judge_seeds(wildcards)),
        gaming_methods=lambda wildcards: PLAN.gaming_judges.get(wildcards.judge, []),
    script:
        "../scripts/llm_judge.py"


# With the assistants experiment configured, the same job grades the sample too (Figure 4): one
# model load; the pool's labels stay those of the pool alone.
rule embedding_judge:
    input:
        unpack(INPUTS.sample_texts_inputs if PLAN.assistants else INPUTS.texts_inputs),
        pairs=L.pairs(D, P),
        topics=L.topics(D),
        sample=[L.sample(D)] if PLAN.assistants else [],
    output:
        **({"sample_labels": L.sample_labels(D, P, J)} if PLAN.assistants else {}),
        qrels=L.qrels(D, P, J),
    log:
        L.log("{dataset}/{provenance}/judge-{judge}"),
    benchmark:
        L.benchmark("{dataset}/{provenance}/judge-{judge}")
    wildcard_constraints:
        judge=INPUTS.judges_of_kind("embedding"),
    conda:
        "../../envs/voirdire.yaml"
    threads: lambda wildcards: PLAN.judge(wildcards.dataset, wildcards.judge).threads
    resources:
        mem_mb=2000,
    params:
        judge=lambda wildcards: PLAN.judge(wildcards.dataset, wildcards.judge),
    script:
        "../scripts/embedding_judge.py"


# Juries (docs/juries.md): a jury's labels from its members' labels of the same pairs (mean or
# median rounded half up, or a strict majority; a quorum of answering members), and its members'
# error correlation against the humans with the panel's effective size. Its qrels then enter
# every table, audit and verdict question as any judge's do.
rule jury:
    input:
        unpack(named_inputs(members=INPUTS.jury_member_qrels)),
        pairs=L.pairs(D, P),
        human=L.human_qrels(D),
    output:
        qrels=L.qrels(D, P, J),
        table=in_report(L.judgments(D, P, J, "jury.csv"), "jury"),
        table_md=L.judgments(D, P, J, "jury.md"),
        correlation=in_report(L.judgments(D, P, J, "jury_correlation.csv"), "jury_correlation"),
        correlation_md=L.judgments(D, P, J, "jury_correlation.md"),
    log:
        L.log("{dataset}/{provenance}/judge-{judge}"),
    benchmark:
        L.benchmark("{dataset}/{provenance}/judge-{judge}")
    wildcard_constraints:
        judge=INPUTS.judges_of_kind("jury"),
    conda:
        "../../envs/voirdire.yaml"
    params:
        jury=lambda wildcards: PLAN.judge(wildcards.dataset, wildcards.judge),
        scales=INPUTS.jury_scales,
        resamples=config["evaluation"]["resamples"],
        seed=config["evaluation"]["seed"],
    script:
        "../scripts/jury.py"
