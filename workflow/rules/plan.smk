# `snakemake --cores N plan`: per judge and dataset, the calls judging will make and what
# they will cost, computed from the pools and the store before any LLM call.


rule plan:
    input:
        # the pools and their texts, the assistants' sample, the probes' samples and personas,
        # the gamed system's passages: their calls are planned before any call
        unpack(INPUTS.plan_inputs),
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


# The cost ledger (docs/batch.md): per dataset and LLM caller, the calls the plan lists and what
# the callers' stores say they cost (read-only), made once every LLM caller has finished; the
# verdict's notes carry a line of it per caller.
rule ledger:
    input:
        unpack(INPUTS.ledger_inputs),
        manifest=L.manifest(),
    output:
        csv=in_report(L.ledger("csv"), "ledger"),
        md=L.ledger("md"),
    log:
        L.log("ledger"),
    benchmark:
        L.benchmark("ledger")
    conda:
        "../../envs/voirdire.yaml"
    params:
        config=as_plain(config),
    script:
        "../scripts/ledger.py"
