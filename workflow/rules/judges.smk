# Stage 4 (SPEC section 3): judges turn the pairs evaluation needs into qrels.
# A judge rule reads pairs/{provenance}.tsv and writes qrels/{provenance}/{judge}.txt;
# live LLM judges plug in here with the same input and output.


rule needed_pairs:
    input:
        pool=f"{R}/{{dataset}}/runs/original/bm25.run",
        qrels=f"{R}/{{dataset}}/data/qrels.human.txt",
    output:
        f"{R}/{{dataset}}/pairs/{{provenance}}.tsv",
    log:
        f"{R}/logs/{{dataset}}/{{provenance}}/needed_pairs.log",
    conda:
        "../../envs/voirdire.yaml"
    script:
        "../scripts/needed_pairs.py"


rule human_judge:
    input:
        f"{R}/{{dataset}}/data/qrels.human.txt",
    output:
        f"{R}/{{dataset}}/qrels/{{provenance}}/human.txt",
    log:
        f"{R}/logs/{{dataset}}/{{provenance}}/judge-human.log",
    conda:
        "../../envs/voirdire.yaml"
    shell:
        "cp {input:q} {output:q} 2> {log:q}"


rule recorded_judge:
    input:
        pairs=f"{R}/{{dataset}}/pairs/{{provenance}}.tsv",
        labels=recorded_qrels,
    output:
        f"{R}/{{dataset}}/qrels/{{provenance}}/{{judge}}.txt",
    wildcard_constraints:
        judge=judges_of_kind("recorded"),
    params:
        scale=judge_params,
    log:
        f"{R}/logs/{{dataset}}/{{provenance}}/judge-{{judge}}.log",
    conda:
        "../../envs/voirdire.yaml"
    script:
        "../scripts/recorded_judge.py"


rule null_judge:
    input:
        pairs=f"{R}/{{dataset}}/pairs/{{provenance}}.tsv",
        passages=f"{R}/{{dataset}}/data/passages.parquet",
        topics=f"{R}/{{dataset}}/data/topics.tsv",
    output:
        f"{R}/{{dataset}}/qrels/{{provenance}}/{{judge}}.txt",
    wildcard_constraints:
        judge=judges_of_kind("baseline"),
    params:
        method=lambda wildcards: PLAN.judge(wildcards.dataset, wildcards.judge).method,
    log:
        f"{R}/logs/{{dataset}}/{{provenance}}/judge-{{judge}}.log",
    conda:
        "../../envs/voirdire.yaml"
    script:
        "../scripts/null_judge.py"


rule llm_judge:
    input:
        pairs=f"{R}/{{dataset}}/pairs/{{provenance}}.tsv",
        passages=f"{R}/{{dataset}}/data/passages.parquet",
        topics=f"{R}/{{dataset}}/data/topics.tsv",
        prompt=lambda wildcards: str(PLAN.judge(wildcards.dataset, wildcards.judge).prompt_file),
    output:
        qrels=f"{R}/{{dataset}}/qrels/{{provenance}}/{{judge}}.txt",
        raw=f"{R}/{{dataset}}/judgments/{{provenance}}/{{judge}}.parquet",
        summary=f"{R}/{{dataset}}/judgments/{{provenance}}/{{judge}}.summary.json",
    wildcard_constraints:
        judge=judges_of_kind("llm"),
    params:
        judge=lambda wildcards: PLAN.judge(wildcards.dataset, wildcards.judge),
        # the judgment store: a cache kept across runs, so it is not a declared output
        store=lambda wildcards: store_path(wildcards),
    threads: 2
    resources:
        mem_mb=4000,
    log:
        f"{R}/logs/{{dataset}}/{{provenance}}/judge-{{judge}}.log",
    conda:
        "../../envs/voirdire.yaml"
    script:
        "../scripts/llm_judge.py"
