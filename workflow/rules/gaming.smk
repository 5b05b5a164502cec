# Stage 8b (docs/probes.md, "The gamed system"): would a gamed system climb the leaderboard
# under this judge? Each gamed system's top-k passages are modified (the query's terms stuffed
# in, a relevance claim: Alaofi et al., 2025), each judge that reads texts labels the modified
# passages through its own call path, and the table scores S and S#method on the original runs.


rule gaming_passages:
    input:
        unpack(INPUTS.gaming_run_inputs),
        pairs=L.pairs(D, "original"),
        passages=L.passages(D),
        topics=L.topics(D),
    output:
        L.gaming_passages(D),
    log:
        L.log("{dataset}/gaming/passages"),
    benchmark:
        L.benchmark("{dataset}/gaming/passages")
    # the pool judge asks ahead what the gamed system's judges will ask: it waits for these
    priority: 50
    conda:
        "../../envs/voirdire.yaml"
    params:
        gaming=GAMING,
        # the order the top k is read in: the one the systems are scored in
        ties=config["evaluation"]["ties"],
    script:
        "../scripts/gaming_passages.py"


rule gaming_llm_judge:
    input:
        passages=L.gaming_passages(D),
        topics=L.topics(D),
        prompt=lambda wildcards: str(PLAN.judge(wildcards.dataset, wildcards.judge).prompt_file),
        served=lambda wildcards: INPUTS.served_input(
            PLAN.judge(wildcards.dataset, wildcards.judge), 1
        ),
        # the judge's pool job first: one model at a time, and its labels are read beside these
        pool_done=L.qrels(D, "original", J),
    output:
        qrels=L.gaming_labels(D, J),
        raw=L.gaming_labels(D, J, "parquet"),
        summary=L.gaming_labels(D, J, "summary.json"),
    log:
        L.log("{dataset}/gaming/judge-{judge}"),
    benchmark:
        L.benchmark("{dataset}/gaming/judge-{judge}")
    wildcard_constraints:
        judge=INPUTS.gaming_judges_of_kind("llm"),
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
        methods=lambda wildcards: PLAN.gaming_judges[wildcards.judge],
        # the call store: a cache kept across runs, so it is not a declared output
        store=lambda wildcards: L.gaming_labels(wildcards.dataset, wildcards.judge, "sqlite"),
        # the pool's job asked these calls ahead: copied from its store, not asked again
        seeds=lambda wildcards: [L.store(wildcards.dataset, "original", wildcards.judge)],
    script:
        "../scripts/gaming_llm_judge.py"


rule gaming_embedding_judge:
    input:
        gamed=L.gaming_passages(D),
        pairs=L.pairs(D, "original"),
        passages=L.passages(D),
        topics=L.topics(D),
    output:
        L.gaming_labels(D, J),
    log:
        L.log("{dataset}/gaming/judge-{judge}"),
    benchmark:
        L.benchmark("{dataset}/gaming/judge-{judge}")
    wildcard_constraints:
        judge=INPUTS.gaming_judges_of_kind("embedding"),
    conda:
        "../../envs/voirdire.yaml"
    threads: lambda wildcards: PLAN.judge(wildcards.dataset, wildcards.judge).threads
    resources:
        mem_mb=2000,
    params:
        judge=lambda wildcards: PLAN.judge(wildcards.dataset, wildcards.judge),
        methods=lambda wildcards: PLAN.gaming_judges[wildcards.judge],
    script:
        "../scripts/gaming_embedding_judge.py"


rule gaming_table:
    input:
        unpack(
            named_inputs(
                gamed=INPUTS.gaming_label_tree,
                qrels=INPUTS.gaming_qrels_tree,
                scores=INPUTS.original_scores,
                human=INPUTS.human_qrels_of,
                runs=INPUTS.original_runs,
                # which passages have a text: only those can be modified (a recorded run's may not)
                passages=lambda wildcards: {
                    d: L.passages(d) for d in PLAN.datasets if not PLAN.labels_only(d)
                },
            )
        ),
        manifest=L.manifest(),
    output:
        csv=in_report(L.audit("original", "gaming", "csv"), "gaming", "probe_gaming"),
        md=L.audit("original", "gaming", "md"),
        png=in_report(L.audit("original", "gaming", "png"), "gaming", "probe_gaming_chart"),
        pdf=L.audit("original", "gaming", "pdf"),
    log:
        L.log("probes/gaming"),
    benchmark:
        L.benchmark("probes/gaming")
    conda:
        "../../envs/voirdire.yaml"
    params:
        gaming=GAMING,
        judges=INPUTS.audit_judges,
        measure=PLAN.measures[0],
        depth=PLAN.depth,
        alpha=config["evaluation"]["alpha"],
        test=config["evaluation"]["test"],
        seed=config["evaluation"]["seed"],
        ties=config["evaluation"]["ties"],
    script:
        "../scripts/gaming.py"
