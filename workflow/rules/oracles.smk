# Stage 3 (docs/definitions.md; Balog, Metzler & Qin 2025, §4.2.3): Perfect and Swap[...] oracles over the top depth of
# the base run (oracles.base: the BM25 pool by default, or a recorded run). One job a dataset writes every oracle's
# runs (each random tie-break draw too): an oracle is a sort by human labels, far less work than a job's start.

ORACLE_RUNS = [name for oracle in PLAN.oracles for name in PLAN.run_names(oracle)]

if ORACLE_RUNS:

    rule oracles:
        input:
            pool=INPUTS.oracle_base,
            qrels=L.human_qrels(D),
        output:
            [L.run(D, "original", name) for name in ORACLE_RUNS],
        log:
            L.log("{dataset}/original/oracles"),
        benchmark:
            L.benchmark("{dataset}/original/oracles")
        # the judge probes' sample draws from every system's run (the rankers' priority)
        priority: 40
        conda:
            "../../envs/voirdire.yaml"
        params:
            names=ORACLE_RUNS,
            depth=PLAN.depth,
            tie_break=config["oracles"]["tie_break"],
            seed=config["oracles"]["seed"],
        script:
            "../scripts/oracles.py"
