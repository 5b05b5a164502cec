# Stage 3b (SPEC section 2, paper section 4.2.2): LLM rerankers of the BM25 pool.
# GPU rankers declare gpus/mem_mb (config rankers.NAME) so a Slurm profile can place them.


rule rerank:
    input:
        pool=f"{R}/{{dataset}}/runs/original/bm25.run",
        passages=f"{R}/{{dataset}}/data/passages.parquet",
        topics=f"{R}/{{dataset}}/data/topics.tsv",
    output:
        run=f"{R}/{{dataset}}/runs/{{provenance}}/{{ranker}}.run",
        bias=f"{R}/{{dataset}}/runs/{{provenance}}/{{ranker}}.bias.json",
    wildcard_constraints:
        ranker=ranker_names(),
    params:
        ranker=lambda wildcards: PLAN.system(wildcards.ranker),
        # per-query checkpoint (resume after a kill) and the API answer cache: not outputs
        checkpoint=lambda wildcards: f"{R}/{wildcards.dataset}/runs/{wildcards.provenance}/.{wildcards.ranker}.partial.jsonl",
        store=lambda wildcards: f"{R}/{wildcards.dataset}/judgments/{wildcards.provenance}/ranker-{wildcards.ranker}.sqlite",
    threads: 2
    resources:
        mem_mb=lambda wildcards: PLAN.system(wildcards.ranker).mem_mb,
        gpu=lambda wildcards: PLAN.system(wildcards.ranker).gpus,
    log:
        f"{R}/logs/{{dataset}}/{{provenance}}/rerank-{{ranker}}.log",
    conda:
        "../../envs/rankers.yaml"
    script:
        "../scripts/rerank.py"
