# Stage 2c: recorded systems (runs:), TREC run files read once per dataset as trec_eval reads
# them (ties by document id, cut at the evaluation depth); one job per dataset, not per system.


if PLAN.recorded:

    rule recorded_runs:
        input:
            unpack(INPUTS.recorded_run_files),
            topics=L.topics(D),
            data=L.data_summary(D),
        output:
            **{s.slug: L.run(D, "original", s.slug) for s in PLAN.recorded},
            summary=L.runs_summary(D),
        log:
            L.log("{dataset}/recorded_runs"),
        benchmark:
            L.benchmark("{dataset}/recorded_runs")
        conda:
            "../../envs/voirdire.yaml"
        # a big folder of runs is read in processes (none else can run yet)
        threads: INPUTS.runs_threads
        params:
            systems=INPUTS.recorded_params,
            depth=PLAN.depth,
        script:
            "../scripts/recorded_runs.py"
