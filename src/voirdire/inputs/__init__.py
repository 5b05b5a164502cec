"""The workflow's input functions: which files (and values) each rule reads, from the plan, the
layout and the config. `workflow/rules/common.smk` makes one `INPUTS = Inputs(PLAN, L, config)`;
the rule files call its methods. Nothing here imports Snakemake: a method that takes `wildcards`
reads only their attributes (a `types.SimpleNamespace` stands in for them in the tests).

Inputs and params that name judges or systems are dicts keyed by name, never parallel lists."""

from __future__ import annotations

from typing import Any

from ..config import as_plain
from ..layout import Layout
from .assistants import AssistantInputs
from .audits import AuditInputs
from .base import WildcardInputs
from .data import DataInputs
from .evaluate import EvaluateInputs
from .gaming import GamingInputs
from .helpers import caller_threads, llm_slots, named_inputs, one_of, served_spec
from .judges import JudgeInputs
from .plan import PlanInputs
from .probes import ProbeInputs
from .serve import ServeInputs
from .verdict import VerdictInputs

__all__ = ["Inputs", "caller_threads", "llm_slots", "named_inputs", "one_of", "served_spec"]


class Inputs(
    WildcardInputs,
    ServeInputs,
    DataInputs,
    JudgeInputs,
    EvaluateInputs,
    AuditInputs,
    AssistantInputs,
    ProbeInputs,
    GamingInputs,
    PlanInputs,
    VerdictInputs,
):
    """Every input function of the workflow, on one plan, layout and (validated) config: one
    part per stage (a module of this package each, named as the rule file it serves)."""

    def __init__(self, plan, layout: Layout, config: dict[str, Any]):
        self.plan = plan
        self.layout = layout
        self.config = config
        # the probes' and the gamed system's sections as the check resolved them (plain dicts)
        self.probes = as_plain(plan.probes or {})
        self.gaming = as_plain(plan.gaming or {})
        self.human_scale = plan.judge(plan.datasets[0], "human").scale
