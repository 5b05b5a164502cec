# Stage 7 (docs/audits.md): judge audits that need only labels -- every kind of judge,
# no LLM call: label test, leave-one-judge-out (of systems, and on labels), self-preference
# corrected for strictness, length bias and Simpson's paradox.


rule audits:
    input:
        unpack(INPUTS.audit_inputs),
        # the scores tables themselves, not Table 1's job: the audits run beside agreement
        scores=INPUTS.all_scores,
        manifest=L.manifest(),
    output:
        # every table and figure, declared once in voirdire.audits.declared
        **audit_rule_outputs(),
    log:
        L.log("{provenance}/audits"),
    benchmark:
        L.benchmark("{provenance}/audits")
    conda:
        "../../envs/voirdire.yaml"
    params:
        judges=INPUTS.audit_judges,
        # none listed: only the audits of labels alone have rows (the others say why not)
        systems=PLAN.has_systems,
        system_families={str(s): family_of(s) for s in PLAN.systems},
        measure=PLAN.measures[0],
        # every score the audits compute is cut here first, as Table 2's are
        depth=PLAN.depth,
        ties=config["evaluation"]["ties"],
        seed=config["evaluation"]["seed"],
        alpha=config["evaluation"]["alpha"],
        # each registered audit's own settings, audits.<name> (voirdire.audits.registry), such
        # as audits.self_preference.include_humans
        settings={name: config["audits"].get(name, {}) for name in AUDITS_DECLARED.registered()},
    script:
        "../scripts/audits.py"
