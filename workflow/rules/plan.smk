# `snakemake --cores N plan`: per judge and dataset, the calls judging will make and what
# they will cost, computed from the pools and the store before any LLM call.


rule plan:
    input:
        pairs=expand(f"{R}/{{dataset}}/pairs/original.tsv", dataset=PLAN.datasets),
        passages=expand(f"{R}/{{dataset}}/data/passages.parquet", dataset=PLAN.datasets),
    output:
        f"{R}/plan/original.md",
    params:
        config=as_plain(config),
    log:
        f"{R}/logs/plan.log",
    conda:
        "../../envs/voirdire.yaml"
    script:
        "../scripts/plan.py"
