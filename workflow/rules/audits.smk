# Stage 7 (docs/audits.md): judge audits that need only labels -- every kind of judge,
# no LLM call: label test, leave-one-judge-out (of systems, and on labels), self-preference
# corrected for strictness, length bias and Simpson's paradox.


rule audits:
    input:
        unpack(INPUTS.audit_inputs),
        per_query=L.table(P, "per_query", "parquet"),
        manifest=L.manifest(),
    output:
        label_test=audit_output("label_test", "csv", "label_test"),
        label_test_md=audit_output("label_test", "md"),
        confusion=audit_output("confusion", "png", "confusion"),
        confusion_pdf=audit_output("confusion", "pdf"),
        lojo=audit_output("lojo", "csv", "lojo"),
        lojo_md=audit_output("lojo", "md"),
        lojo_png=audit_output("lojo", "png", "lojo_chart"),
        lojo_pdf=audit_output("lojo", "pdf"),
        lojo_labels=audit_output("lojo_labels", "csv", "lojo_labels"),
        lojo_labels_md=audit_output("lojo_labels", "md"),
        self_preference=audit_output("self_preference", "csv", "self_preference"),
        self_preference_md=audit_output("self_preference", "md"),
        length=audit_output("length", "csv", "length"),
        length_md=audit_output("length", "md"),
        length_png=audit_output("length", "png", "length_chart"),
        length_pdf=audit_output("length", "pdf"),
        length_systems=audit_output("length_systems", "csv", "length_systems"),
        length_systems_md=audit_output("length_systems", "md"),
        drift=audit_output("drift", "csv", "drift"),
        drift_md=audit_output("drift", "md"),
        drift_png=audit_output("drift", "png", "drift_chart"),
        drift_pdf=audit_output("drift", "pdf"),
        leniency_png=audit_output("leniency", "png", "leniency"),
        leniency_pdf=audit_output("leniency", "pdf"),
        control_chart=audit_output("control_chart", "csv", "control_chart"),
        control_chart_md=audit_output("control_chart", "md"),
        circularity=audit_output("circularity", "csv", "circularity"),
        circularity_md=audit_output("circularity", "md"),
        circularity_png=audit_output("circularity", "png", "circularity"),
        circularity_pdf=audit_output("circularity", "pdf"),
        calibration=audit_output("calibration", "csv", "calibration"),
        calibration_md=audit_output("calibration", "md"),
        calibration_png=audit_output("calibration", "png", "calibration"),
        calibration_pdf=audit_output("calibration", "pdf"),
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
        seed=config["evaluation"]["seed"],
        alpha=config["evaluation"]["alpha"],
        include_humans=config["audits"]["self_preference"]["include_humans"],
        # k human-labelled queries (those below the query count minus one), seeded draws per k
        calibration={"ks": [3, 5, 10, 20], "draws": 50},
    script:
        "../scripts/audits.py"
