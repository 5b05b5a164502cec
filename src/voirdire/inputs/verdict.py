"""The input functions of the verdict (workflow/rules/verdict.smk): a part of :class:`voirdire.inputs.Inputs`."""

from __future__ import annotations

from ..audits.declared import tables as audit_tables
from ..verdict import NO_SYSTEMS, QUESTIONS


class VerdictInputs:
    def verdict_inputs(self, wildcards) -> dict:
        """Every table a verdict question reads (voirdire.verdict.QUESTIONS), of the original
        texts: the paper's tables, the label audits, and the probes that are configured."""
        L = self.layout
        tables = {name: L.table("original", name, "csv") for name in ("table1", "table2", "significance")}
        # the label audits' tables that a question reads (both declared: voirdire.audits.declared)
        asked = {name for question in QUESTIONS.values() for name in question.reads}
        tables |= {name: L.audit("original", name, "csv") for name in audit_tables() if name in asked}
        probes = set(self.probes) if self.plan.probe_judges else set()
        tables |= {name: L.audit("original", name, "csv") for name in ("swap", "pad", "injection") if name in probes}
        if "personas" in probes:
            tables["persona_sensitivity"] = L.audit("original", "persona_sensitivity", "csv")
        for path in self.gaming_final_outputs():  # none, or the one table
            tables["gaming"] = path
        if self.plan.has_systems:  # the landing page shows Figure 3 under the verdict
            tables["figure3"] = L.figure("original", "figure3", "png")
        return tables

    def unavailable(self, dataset: str) -> dict:
        """What the verdict's questions may need and this dataset lacks -> the reason
        (voirdire.verdict): systems (no systems: listed: the label sets are audited alone),
        passage texts (a labels-only dataset)."""
        missing = {}
        if not self.plan.has_systems:
            missing["runs"] = NO_SYSTEMS
        if self.plan.labels_only(dataset):
            missing["texts"] = "no passage texts (a labels-only dataset)"
        return missing
