# Start-up: the config (validated and checked into PLAN), the layout of every path (L, from
# voirdire.layout, the one place the library reads them from too), the wildcard constraints, and
# INPUTS: every input function, in voirdire.inputs.Inputs (unit-tested without Snakemake).
# The final targets are in targets.smk; rule files hold rules and call INPUTS.<method>.
import dataclasses
import json
import sys

from voirdire.config import as_plain, check, validate_schema
from voirdire.errors import InputError
from voirdire.inputs import Inputs, caller_threads, llm_slots, named_inputs, one_of
from voirdire.layout import Layout
from voirdire.manifest import manifest, write_if_changed
from voirdire.preflight import preflight
from voirdire.systems import family_of

# command-line modes that read the workflow without running or planning jobs
NO_RUN = {
    "--lint",
    "--report",
    "--list",
    "--list-rules",
    "--dag",
    "--rulegraph",
    "--filegraph",
    "--summary",
    "--detailed-summary",
}
# of those, the ones that only read the rules (no DAG): they write nothing under results/
READ_ONLY = {"--lint", "--list", "--list-rules"}

try:
    # the project's own schema check (not Snakemake's validate): every error one line, and the
    # schema's defaults filled into config; then the checks of meaning, every error at once
    validate_schema(config)
    PLAN = check(config, configfile=workflow.configfiles)
    # API keys matter to runs and dry runs, not to what reads the workflow without running it;
    # what it returns (strict judges' unused grades) becomes the verdict's notes
    PREFLIGHT_NOTES = preflight(
        PLAN,
        keys=not NO_RUN.intersection(sys.argv),
        write=not READ_ONLY.intersection(sys.argv),
    )
except InputError as error:  # one line per error, naming the file:line or config key; no traceback
    sys.exit("\n".join(f"voirdire: {line}" for line in error.lines))

R = config["results"]
L = Layout(R)
INPUTS = Inputs(PLAN, L, config)
# What the tables are made of; rewritten only when that changes, so the aggregate rules that
# take it as input rerun on any --rerun-triggers setting (jobs on cluster nodes only read it).
if workflow.is_main_process and not READ_ONLY.intersection(sys.argv):
    write_if_changed(L.manifest(), manifest(PLAN))
# original, then rewritten-{assistant} for every assistant (docs/assistants.md)
PROVENANCES = PLAN.provenances
REWRITTEN = PROVENANCES[1:]
# the probes' and the gamed system's sections as the check resolved them (plain dicts held by PLAN;
# config itself is never changed by the check), the human judges' scale, and the model servers the
# workflow starts (serve.smk)
PROBES = INPUTS.probes
GAMING = INPUTS.gaming
HUMAN_SCALE = INPUTS.human_scale
SERVED = INPUTS.served
# wildcard patterns for rule inputs/outputs
D, P, J = "{dataset}", "{provenance}", "{judge}"


wildcard_constraints:
    dataset=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    provenance="|".join(PROVENANCES),
    judge=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
