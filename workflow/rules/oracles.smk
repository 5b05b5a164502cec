# Stage 3 (docs/definitions.md; Balog, Metzler & Qin 2025, §4.2.3): Perfect and Swap[...] oracles over the top depth of
# the base run (oracles.base: the BM25 pool by default, or a recorded run).


rule oracle:
    input:
        pool=INPUTS.oracle_base,
        qrels=L.human_qrels(D),
    output:
        L.run(D, P, "{oracle}"),
    log:
        L.log("{dataset}/{provenance}/oracle-{oracle}"),
    benchmark:
        L.benchmark("{dataset}/{provenance}/oracle-{oracle}")
    # the judge probes' sample draws from every system's run (the rankers' priority)
    priority: 40
    conda:
        "../../envs/voirdire.yaml"
    params:
        depth=PLAN.depth,
        tie_break=config["oracles"]["tie_break"],
        seed=config["oracles"]["seed"],
    script:
        "../scripts/oracle.py"
