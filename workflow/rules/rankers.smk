# Stage 3b (docs/configuration.md; Balog, Metzler & Qin 2025, §4.2.2): LLM rerankers of the BM25 pool.
# GPU rankers declare gpus/mem_mb (config rankers.NAME) so a Slurm profile can place them.


rule rerank:
    input:
        unpack(INPUTS.texts_inputs),
        # a rewritten collection: the original orderings, kept for queries the rewrites miss
        unpack(
            lambda wildcards: (
                {}
                if wildcards.provenance == "original"
                else {"original_run": L.run(wildcards.dataset, "original", wildcards.ranker)}
            )
        ),
        pool=L.pool(D),
        topics=L.topics(D),
        served=lambda wildcards: INPUTS.served_input(
            PLAN.system(wildcards.ranker), int(wildcards.provenance != "original")
        ),
    output:
        run=L.run(D, P, "{ranker}"),
        bias=L.bias(D, P, "{ranker}"),
    log:
        L.log("{dataset}/{provenance}/rerank-{ranker}"),
    benchmark:
        L.benchmark("{dataset}/{provenance}/rerank-{ranker}")
    wildcard_constraints:
        ranker=INPUTS.ranker_names(),
    # the judge probes' sample draws from every system's run, and their chain overlaps the
    # pool judge only when these come first (before the assistants' branch; the pool judge
    # itself, at 50, first of all)
    priority: 40
    conda:
        "../../envs/voirdire.yaml"
    threads: lambda wildcards: caller_threads(PLAN.system(wildcards.ranker))
    resources:
        mem_mb=lambda wildcards: PLAN.system(wildcards.ranker).mem_mb,
        gpu=lambda wildcards: PLAN.system(wildcards.ranker).gpus,
        llm_slots=lambda wildcards: llm_slots(PLAN.system(wildcards.ranker).endpoint),
    params:
        ranker=lambda wildcards: PLAN.system(wildcards.ranker),
        # per-query checkpoint (resume after a kill) and the API answer cache: not outputs
        checkpoint=lambda wildcards: L.checkpoint(
            wildcards.dataset, wildcards.provenance, wildcards.ranker
        ),
        store=lambda wildcards: L.ranker_store(
            wildcards.dataset, wildcards.provenance, wildcards.ranker
        ),
    script:
        "../scripts/rerank.py"
