# voirdire: examine LLM relevance judges before trusting their labels.
# Reproduces Balog, Metzler & Qin, "Rankers, Judges, and Assistants" (SIGIR 2025).
# This file is a table of contents; every stage lives in workflow/rules/.
from snakemake.utils import min_version

min_version("9.0")


# The demo config, unless `--configfile` gives another one: Snakemake would otherwise merge
# the two, and the demo's dataset would join every other run.
if "datasets" not in config:

    configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/targets.smk"
include: "workflow/rules/serve.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/bm25.smk"
include: "workflow/rules/runs.smk"
include: "workflow/rules/oracles.smk"
include: "workflow/rules/rankers.smk"
include: "workflow/rules/judges.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/plan.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/audits.smk"
include: "workflow/rules/assistants.smk"
include: "workflow/rules/probes.smk"
include: "workflow/rules/gaming.smk"
include: "workflow/rules/verdict.smk"


rule all:
    default_target: True
    input:
        get_final_output(),
