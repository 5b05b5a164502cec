"""The input functions of the probes (workflow/rules/probes.smk): a part of :class:`voirdire.inputs.Inputs`."""

from __future__ import annotations

from ..probes.items import LISTS_PROMPT, PAIRWISE_PROMPT


class ProbeInputs:
    def probe_judge_inputs(self, wildcards) -> dict:
        """A probe job's optional inputs: the personas (persona probe) and LLM padders' texts."""
        L = self.layout
        inputs = {}
        if "personas" in self.probes:
            inputs["personas"] = L.personas(wildcards.dataset)
        if self.plan.padders:
            inputs["padded"] = [L.padded(wildcards.dataset, p.name) for p in self.plan.padders]
        return inputs

    def probe_templates(self, wildcards=None) -> list[str]:
        """The probes' template files, so that editing one reruns the probe jobs."""
        swap = self.probes.get("swap") or {}
        files = [swap.get("prompt_file", str(PAIRWISE_PROMPT))] if swap or "pad" in self.probes else []
        if swap.get("lists"):
            files.append(swap["lists"].get("prompt_file", str(LISTS_PROMPT)))
        return files

    def probe_answers(self, wildcards=None) -> dict:
        """(dataset, judge) -> the judge's probe answers, for every probed judge of every
        dataset."""
        plan = self.plan
        return {(d, j): self.layout.probe_answers(d, j) for d in plan.datasets for j in plan.probe_judges}

    def probe_answer_files(self, wildcards) -> list[str]:
        return list(self.probe_answers().values())

    def probe_answer_tree(self, wildcards=None) -> dict:
        """Dataset -> probed judge -> its probe answers."""
        plan = self.plan
        return {d: {j: self.layout.probe_answers(d, j) for j in plan.probe_judges} for d in plan.datasets}

    def probe_summary_tree(self, wildcards=None) -> dict:
        """Dataset -> who answered the probes (each probed judge, each LLM padder) -> its
        summary."""
        plan, L = self.plan, self.layout
        return {
            d: {j: L.probe_answers(d, j, "summary.json") for j in plan.probe_judges}
            | {f"padder-{p.name}": L.padded(d, p.name, "summary.json") for p in plan.padders}
            for d in plan.datasets
        }

    def human_qrels_of(self, wildcards=None) -> dict:
        return {d: self.layout.human_qrels(d) for d in self.plan.datasets}

    def variant_labels(self) -> dict:
        """(dataset, group, judge) -> qrels of every judge of every variants group (pool,
        original)."""
        return {
            (d, group, judge): self.layout.qrels(d, "original", judge)
            for group, entry in self.config.get("variants", {}).items()
            for judge in [entry["baseline"], *entry["variants"]]
            for d in self.plan.datasets
        }

    def variant_label_tree(self, wildcards=None) -> dict:
        """Dataset -> variants group -> judge -> its qrels (pool, original)."""
        tree = {}
        for (d, group, judge), path in self.variant_labels().items():
            tree.setdefault(d, {}).setdefault(group, {})[judge] = path
        return tree

    def probe_final_outputs(self) -> list[str]:
        """The table of every configured probe (and of the prompt variants)."""
        names = []
        if self.plan.probe_judges:
            names += [name for name in ("swap", "pad", "injection") if name in self.probes]
            if "personas" in self.probes:
                names.append("persona_sensitivity")
        if self.config.get("variants"):
            names.append("prompt_sensitivity_sensitivity")
        return [self.layout.audit("original", name, "csv") for name in names]
