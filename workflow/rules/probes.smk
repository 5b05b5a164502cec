# Stage 8 (docs/probes.md): judge probes that ask again -- the same
# LLM judge, asked with something changed that should not change its answer: the order of two
# passages or two result lists (swap test), padding (pad test), an injected relevance claim or
# the query's terms (injection probe), an assessor persona (persona-conditioned judging). And
# prompt sensitivity: the persona analysis for any group of judges that differ only in prompt.


rule probe_sample:
    input:
        pairs=L.pairs(D, "original"),
        qrels=L.human_qrels(D),
        # only pairs whose passage has a text are drawn (a recorded run's may have none)
        passages=L.passages(D),
        runs=lambda wildcards: [
            p
            for paths in INPUTS.system_runs_of(wildcards.dataset, "original").values()
            for p in paths
        ],
    output:
        L.probe_sample(D),
    log:
        L.log("{dataset}/probes/sample"),
    benchmark:
        L.benchmark("{dataset}/probes/sample")
    # the probes' chain (sample, personas, padding) runs beside the pool judge, whose labels
    # its judge job copies: left to the end it would follow the pool judge, not overlap it
    priority: 40
    conda:
        "../../envs/voirdire.yaml"
    params:
        probes=PROBES,
        runs=lambda wildcards: INPUTS.system_runs_of(wildcards.dataset, "original"),
        list_systems=PROBES.get("swap", {}).get("lists", {}).get("systems", []),
        low=lambda wildcards: PLAN.judge(wildcards.dataset, "human").scale.low,
    script:
        "../scripts/probe_sample.py"


rule personas:
    input:
        sample=L.probe_sample(D),
        topics=L.topics(D),
        pool=PROBES.get("personas", {}).get("pool", []),
    output:
        L.personas(D),
    log:
        L.log("{dataset}/probes/personas"),
    benchmark:
        L.benchmark("{dataset}/probes/personas")
    priority: 40
    conda:
        "../../envs/voirdire.yaml"
    threads: 1
    resources:
        mem_mb=2000,
    params:
        personas=PROBES.get("personas"),
    script:
        "../scripts/personas.py"


rule pad:
    input:
        sample=L.probe_sample(D),
        passages=L.passages(D),
    output:
        table=L.padded(D, "{padder}"),
        summary=L.padded(D, "{padder}", "summary.json"),
    log:
        L.log("{dataset}/probes/pad-{padder}"),
    benchmark:
        L.benchmark("{dataset}/probes/pad-{padder}")
    wildcard_constraints:
        padder=one_of(p.name for p in PLAN.padders),
    priority: 40
    conda:
        "../../envs/voirdire.yaml"
    threads: lambda wildcards: caller_threads(PLAN.padder(wildcards.padder))
    resources:
        mem_mb=4000,
        llm_slots=lambda wildcards: llm_slots(PLAN.padder(wildcards.padder).endpoint),
    params:
        padder=lambda wildcards: PLAN.padder(wildcards.padder),
        store=lambda wildcards: L.padded(wildcards.dataset, wildcards.padder, "sqlite"),
    script:
        "../scripts/pad.py"


rule probe_judge:
    input:
        unpack(INPUTS.probe_judge_inputs),
        sample=L.probe_sample(D),
        passages=L.passages(D),
        topics=L.topics(D),
        prompt=lambda wildcards: str(PLAN.judge(wildcards.dataset, wildcards.judge).prompt_file),
        templates=INPUTS.probe_templates,
        # the judge's pool job, finished: its answers to the plain prompts are copied
        seeds_done=L.qrels(D, "original", J),
        served=lambda wildcards: INPUTS.served_input(
            PLAN.judge(wildcards.dataset, wildcards.judge), 1
        ),
    output:
        answers=L.probe_answers(D, J),
        summary=L.probe_answers(D, J, "summary.json"),
    log:
        L.log("{dataset}/probes/judge-{judge}"),
    benchmark:
        L.benchmark("{dataset}/probes/judge-{judge}")
    wildcard_constraints:
        judge=one_of(PLAN.probe_judges),
    # the judge's second longest job, and the probes' tables wait for it: as soon as it can
    # (the pool judge's priority)
    priority: 50
    conda:
        "../../envs/voirdire.yaml"
    threads: lambda wildcards: caller_threads(PLAN.judge(wildcards.dataset, wildcards.judge))
    resources:
        mem_mb=4000,
        llm_slots=lambda wildcards: llm_slots(
            PLAN.judge(wildcards.dataset, wildcards.judge).endpoint
        ),
    params:
        judge=lambda wildcards: PLAN.judge(wildcards.dataset, wildcards.judge),
        probes=PROBES,
        padded=lambda wildcards: {p.name: L.padded(wildcards.dataset, p.name) for p in PLAN.padders},
        store=lambda wildcards: L.probe_answers(wildcards.dataset, wildcards.judge, "sqlite"),
        seeds=lambda wildcards: [L.store(wildcards.dataset, "original", wildcards.judge)],
    script:
        "../scripts/probe_judge.py"


# One job for every probe's tables and figures (they read the same answers).
rule probe_tables:
    input:
        unpack(
            named_inputs(
                answers=INPUTS.probe_answer_tree,
                summaries=INPUTS.probe_summary_tree,
                human=INPUTS.human_qrels_of,
                scores=INPUTS.original_scores,
                runs=INPUTS.original_runs,
                # each dataset's sample: what it left out for want of a text, in the tables
                samples=lambda wildcards: {d: L.probe_sample(d) for d in PLAN.datasets},
            )
        ),
        manifest=L.manifest(),
    output:
        **probe_table_outputs(),
    log:
        L.log("probes/tables"),
    benchmark:
        L.benchmark("probes/tables")
    conda:
        "../../envs/voirdire.yaml"
    params:
        probes=[name for name in ("swap", "pad", "injection", "personas") if name in PROBES],
        # the result-list swap test's settings (None: not probed), for the reason of an empty table
        lists=PROBES.get("swap", {}).get("lists"),
        # every judge's scale and binary threshold, the primary measure and the evaluation
        # depth: the systems are scored as Table 2 scores them
        judges=INPUTS.audit_judges,
        measure=PLAN.measures[0],
        depth=PLAN.depth,
        ties=config["evaluation"]["ties"],
        alpha=config["evaluation"]["alpha"],
        low=HUMAN_SCALE.low,
        high=HUMAN_SCALE.high,
        seed=PROBES.get("personas", {}).get("seed", 42),
        rbo_p=config["evaluation"]["rbo_p"],
        config=as_plain(config),
    script:
        "../scripts/probe_tables.py"


rule prompt_sensitivity:
    input:
        unpack(
            named_inputs(
                labels=INPUTS.variant_label_tree,
                human=INPUTS.human_qrels_of,
                runs=INPUTS.original_runs,
            )
        ),
        manifest=L.manifest(),
    output:
        **sensitivity_outputs("prompt_sensitivity"),
    log:
        L.log("probes/prompt_sensitivity"),
    benchmark:
        L.benchmark("probes/prompt_sensitivity")
    conda:
        "../../envs/voirdire.yaml"
    params:
        baselines={g: v["baseline"] for g, v in config.get("variants", {}).items()},
        judges=INPUTS.audit_judges,
        measure=PLAN.measures[0],
        depth=PLAN.depth,
        ties=config["evaluation"]["ties"],
        low=HUMAN_SCALE.low,
        high=HUMAN_SCALE.high,
        seed=config["evaluation"]["seed"],
        rbo_p=config["evaluation"]["rbo_p"],
    script:
        "../scripts/prompt_sensitivity.py"
