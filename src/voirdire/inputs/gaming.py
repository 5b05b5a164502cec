"""The input functions of the gamed system (workflow/rules/gaming.smk): a part of :class:`voirdire.inputs.Inputs`."""

from __future__ import annotations

from ..jobscript import named


class GamingInputs:
    def gaming_systems(self, dataset: str) -> dict:
        """Gamed system (as tables print it) -> its run files of the original collection."""
        runs = self.system_runs_of(dataset, "original")
        return {name: runs[name] for name in self.gaming.get("systems", [])}

    def gaming_run_inputs(self, wildcards) -> dict:
        """The gamed systems' runs, name-keyed (the script reads them back with grouped)."""
        return named(runs=self.gaming_systems(wildcards.dataset))

    def gaming_label_tree(self, wildcards=None) -> dict:
        """Dataset -> judge -> its labels of the modified passages."""
        plan = self.plan
        return {d: {j: self.layout.gaming_labels(d, j) for j in plan.gaming_judges} for d in plan.datasets}

    def gaming_qrels_tree(self, wildcards=None) -> dict:
        """Dataset -> judge -> its labels of the pool (original texts)."""
        plan = self.plan
        return {d: {j: self.layout.qrels(d, "original", j) for j in plan.gaming_judges} for d in plan.datasets}

    def gaming_final_outputs(self) -> list[str]:
        return [self.layout.audit("original", "gaming", "csv")] if self.plan.gaming_judges else []
