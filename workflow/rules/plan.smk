# `snakemake --cores N plan`: per judge and dataset, the calls judging will make and what
# they will cost, computed from the pools and the store before any LLM call.


rule plan:
    input:
        pairs=[L.pairs(dataset, "original") for dataset in PLAN.datasets],
        passages=[L.passages(dataset) for dataset in PLAN.datasets],
    output:
        L.plan("original"),
    params:
        config=as_plain(config),
    log:
        f"{R}/logs/plan.log",
    conda:
        "../../envs/voirdire.yaml"
    script:
        "../scripts/plan.py"
