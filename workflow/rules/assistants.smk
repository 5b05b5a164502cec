# Stage 7 (docs/assistants.md; Balog, Metzler & Qin 2025, §4.3, Figures 4-5): do judges favour AI-rewritten passages?
# A balanced sample of human-judged pairs; each assistant rewrites its passages (provenance
# rewritten-NAME); every text-reading judge labels the sample in both provenances (Figure 4);
# judges and systems run again on the collection with the rewrites substituted (experiment 2);
# pointwise rankers score the sample twice and rerank the rewritten collection (Figure 5).


rule sample:
    input:
        unpack(INPUTS.sample_text_inputs),
        qrels=L.human_qrels(D),
        passages=L.passages(D),
    output:
        sample=L.sample(D),
        passages=L.sample_passages(D),
        summary=L.sample_summary(D),
    log:
        L.log("{dataset}/sample"),
    benchmark:
        L.benchmark("{dataset}/sample")
    # the pool judge asks ahead what its sample job will ask: it waits for this (its priority)
    priority: 50
    conda:
        "../../envs/voirdire.yaml"
    resources:
        mem_mb=4000,
    params:
        spec=INPUTS.dataset_spec,
        bm25=config["bm25"],
        rewriting=config["rewriting"],
    script:
        "../scripts/sample.py"


rule rewrite:
    input:
        passages=L.sample_passages(D),
        recorded=lambda wildcards: (
            [str(a.rewrites)]
            if (a := PLAN.assistant(wildcards.assistant)).kind == "recorded"
            else []
        ),
    output:
        table=L.rewrites(D, "rewritten-{assistant}"),
        summary=L.rewrites(D, "rewritten-{assistant}", "summary.json"),
    log:
        L.log("{dataset}/rewrite-{assistant}"),
    benchmark:
        L.benchmark("{dataset}/rewrite-{assistant}")
    conda:
        "../../envs/voirdire.yaml"
    threads: lambda wildcards: caller_threads(PLAN.assistant(wildcards.assistant))
    resources:
        mem_mb=4000,
        llm_slots=lambda wildcards: llm_slots(
            getattr(PLAN.assistant(wildcards.assistant), "endpoint", None)
        ),
    params:
        assistant=lambda wildcards: PLAN.assistant(wildcards.assistant),
        rewriting=config["rewriting"],
        spec=INPUTS.dataset_spec,
        # the assistant's call store: a cache kept across runs, not a declared output
        store=lambda wildcards: L.rewrites(
            wildcards.dataset, f"rewritten-{wildcards.assistant}", "sqlite"
        ),
    script:
        "../scripts/rewrite.py"


# In a rewritten collection BM25, the oracles (human labels) and the rankers outside
# rewriting.rankers keep their orderings: their runs are copied, not computed again.
rule fixed_order_run:
    input:
        L.run(D, "original", "{fixed}"),
    output:
        L.run(D, "{rewritten}", "{fixed}"),
    log:
        L.log("{dataset}/{rewritten}/fixed-{fixed}"),
    benchmark:
        L.benchmark("{dataset}/{rewritten}/fixed-{fixed}")
    wildcard_constraints:
        rewritten=one_of(REWRITTEN),
        fixed=INPUTS.fixed_order_systems(),
    conda:
        "../../envs/voirdire.yaml"
    shell:
        "cp {input:q} {output:q} 2> {log:q}"


ruleorder: fixed_order_run > rerank


rule llm_judge_sample:
    input:
        unpack(INPUTS.sample_texts_inputs),
        pairs=L.sample(D),
        topics=L.topics(D),
        prompt=lambda wildcards: str(PLAN.judge(wildcards.dataset, wildcards.judge).prompt_file),
        seeds_done=lambda wildcards: list(INPUTS.sample_judge_seeds(wildcards).values()),
        served=lambda wildcards: INPUTS.served_input(
            PLAN.judge(wildcards.dataset, wildcards.judge),
            1 + (wildcards.provenance != "original"),
        ),
    output:
        qrels=L.sample_labels(D, P, J),
        raw=L.sample_labels(D, P, J, "parquet"),
        summary=L.sample_labels(D, P, J, "summary.json"),
    log:
        L.log("{dataset}/{provenance}/sample-judge-{judge}"),
    benchmark:
        L.benchmark("{dataset}/{provenance}/sample-judge-{judge}")
    wildcard_constraints:
        judge=INPUTS.judges_of_kind("llm"),
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
        store=lambda wildcards: L.sample_labels(
            wildcards.dataset, wildcards.provenance, wildcards.judge, "sqlite"
        ),
        seeds=lambda wildcards: list(INPUTS.sample_judge_seeds(wildcards)),
    script:
        "../scripts/llm_judge.py"


rule null_judge_sample:
    input:
        unpack(INPUTS.sample_texts_inputs),
        pairs=L.sample(D),
        context=[L.pairs(D, P)],
        topics=L.topics(D),
    output:
        L.sample_labels(D, P, J),
    log:
        L.log("{dataset}/{provenance}/sample-judge-{judge}"),
    benchmark:
        L.benchmark("{dataset}/{provenance}/sample-judge-{judge}")
    wildcard_constraints:
        judge=INPUTS.judges_of_kind("baseline"),
    conda:
        "../../envs/voirdire.yaml"
    params:
        method=lambda wildcards: PLAN.judge(wildcards.dataset, wildcards.judge).method,
    script:
        "../scripts/null_judge.py"


rule sample_scores:
    input:
        sample=L.sample(D),
        passages=L.sample_passages(D),
        rewrites=L.rewrites(D, P),
        topics=L.topics(D),
        served=lambda wildcards: INPUTS.served_input(PLAN.system(wildcards.ranker), 1),
    output:
        L.sample_scores(D, P, "{ranker}"),
    log:
        L.log("{dataset}/{provenance}/sample-scores-{ranker}"),
    benchmark:
        L.benchmark("{dataset}/{provenance}/sample-scores-{ranker}")
    wildcard_constraints:
        provenance=one_of(REWRITTEN),
        ranker=one_of(r.name for r in PLAN.rewriting_rankers),
    conda:
        "../../envs/voirdire.yaml"
    threads: lambda wildcards: caller_threads(PLAN.system(wildcards.ranker))
    resources:
        mem_mb=lambda wildcards: PLAN.system(wildcards.ranker).mem_mb,
        gpu=lambda wildcards: PLAN.system(wildcards.ranker).gpus,
        llm_slots=lambda wildcards: llm_slots(PLAN.system(wildcards.ranker).endpoint),
    params:
        ranker=lambda wildcards: PLAN.system(wildcards.ranker),
        store=lambda wildcards: L.ranker_store(
            wildcards.dataset, wildcards.provenance, f"{wildcards.ranker}-sample"
        ),
    script:
        "../scripts/sample_scores.py"


rule assistant_tables:
    input:
        unpack(INPUTS.assistant_inputs),
        manifest=L.manifest(),
    output:
        label_shift=in_report(L.table(P, "label_shift", "csv"), "label_shift"),
        label_shift_md=L.table(P, "label_shift", "md"),
        substitution=in_report(L.table(P, "substitution", "csv"), "substitution"),
        substitution_md=L.table(P, "substitution", "md"),
        checks=in_report(L.table(P, "rewrite_checks", "csv"), "rewrite_checks"),
        checks_md=L.table(P, "rewrite_checks", "md"),
        figure4=in_report(L.figure(P, "figure4", "png"), "figure4"),
        figure4_pdf=L.figure(P, "figure4", "pdf"),
        self_preference=in_report(
            L.table(P, "rewrite_self_preference", "csv"), "rewrite_self_preference"
        ),
        self_preference_md=L.table(P, "rewrite_self_preference", "md"),
    log:
        L.log("{provenance}/assistant_tables"),
    benchmark:
        L.benchmark("{provenance}/assistant_tables")
    wildcard_constraints:
        provenance=one_of(REWRITTEN),
    conda:
        "../../envs/voirdire.yaml"
    params:
        datasets=PLAN.datasets,
        sample_judges={d: INPUTS.sample_judges(d) for d in PLAN.datasets},
        judges={d: PLAN.judge_names(d) for d in PLAN.datasets},
        # experiments 2-3 compare the systems on the primary measure
        measure=PLAN.measures[0],
        # each judge's declared scale: its sample labels are read (and checked) on it
        scales=INPUTS.audit_judges,
        systems=[str(s) for s in PLAN.systems],
        rewriting=config["rewriting"],
        alpha=config["evaluation"]["alpha"],
        seed=config["evaluation"]["seed"],
        families={j.name: j.family for js in PLAN.judges.values() for j in js},
        assistant_family=lambda wildcards: INPUTS.assistant_of(wildcards.provenance).family,
        # the reference panel: judges that read meaning (not the length/overlap baselines)
        panel=sorted(
            {j.name for js in PLAN.judges.values() for j in js if j.kind in ("llm", "embedding")}
        ),
    script:
        "../scripts/assistant_tables.py"


rule figure5:
    input:
        unpack(INPUTS.score_inputs),
        manifest=L.manifest(),
    output:
        table=in_report(L.table(P, "score_shift", "csv"), "score_shift"),
        table_md=L.table(P, "score_shift", "md"),
        png=in_report(L.figure(P, "figure5", "png"), "figure5"),
        pdf=L.figure(P, "figure5", "pdf"),
    log:
        L.log("{provenance}/figure5"),
    benchmark:
        L.benchmark("{provenance}/figure5")
    wildcard_constraints:
        provenance=one_of(REWRITTEN),
    conda:
        "../../envs/voirdire.yaml"
    params:
        alpha=config["evaluation"]["alpha"],
    script:
        "../scripts/figure5.py"
