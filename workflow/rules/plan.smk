# `snakemake --cores N plan`: per judge and dataset, the calls judging will make and what
# they will cost, computed from the pools and the store before any LLM call.


rule plan:
    input:
        pairs=[L.pairs(dataset, "original") for dataset in PLAN.datasets],
        passages=[L.passages(dataset) for dataset in PLAN.datasets if not PLAN.labels_only(dataset)],
        # the assistants experiment's sample (its rewrites are planned before any call)
        sample=[L.sample(d) for d in PLAN.datasets if PLAN.assistants],
        sample_passages=[L.sample_passages(d) for d in PLAN.datasets if PLAN.assistants],
        # the judge probes' samples and personas (their calls are planned before any call)
        probes=[L.probe_sample(d) for d in PLAN.datasets if PLAN.probe_judges],
        personas=[
            L.personas(d) for d in PLAN.datasets if PLAN.probe_judges and "personas" in PROBES
        ],
        # the gamed system's modified passages (its judges' calls are planned before any call)
        gaming=[
            L.gaming_passages(d)
            for d in PLAN.datasets
            if PLAN.gaming_judges and not PLAN.labels_only(d)
        ],
    output:
        L.plan("original"),
    log:
        L.log("plan"),
    benchmark:
        L.benchmark("plan")
    conda:
        "../../envs/voirdire.yaml"
    params:
        config=as_plain(config),
    script:
        "../scripts/plan.py"
