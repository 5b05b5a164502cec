"""The input functions of the plan and the cost ledger (workflow/rules/plan.smk): a part of :class:`voirdire.inputs.Inputs`."""

from __future__ import annotations


class PlanInputs:
    def plan_inputs(self, wildcards=None) -> dict:
        """What the plan reads (voirdire.plan): the pools and their texts, the assistants' sample,
        the probes' samples and personas, the gamed system's passages (each present only where
        configured)."""
        plan, L = self.plan, self.layout
        datasets = plan.datasets
        return {
            "pairs": [L.pairs(d, "original") for d in datasets],
            "passages": [L.passages(d) for d in datasets if not plan.labels_only(d)],
            "sample": [L.sample(d) for d in datasets if plan.assistants],
            "sample_passages": [L.sample_passages(d) for d in datasets if plan.assistants],
            "probes": [L.probe_sample(d) for d in datasets if plan.probe_judges],
            "personas": [L.personas(d) for d in datasets if plan.probe_judges and "personas" in self.probes],
            "gaming": [L.gaming_passages(d) for d in datasets if plan.gaming_judges and not plan.labels_only(d)],
        }

    def ledger_inputs(self, wildcards=None) -> dict:
        """What the cost ledger reads (voirdire.plan.ledger_rows): what the plan reads, the
        assistants' rewrites (the plan of their collections' calls), and the output that marks
        each LLM caller's store finished: every LLM judge's summary (pools in every provenance,
        the sample, the probes, the gamed system), every LLM assistant's and padder's, every API
        ranker's run (and its sample scores), so the ledger is made after every call."""
        plan, L = self.plan, self.layout
        inputs = self.plan_inputs()
        judges, callers = [], []
        for d in plan.datasets:
            llm = [j.name for j in plan.judges[d] if j.kind == "llm"]
            for p in plan.provenances:
                judges += [L.judgments(d, p, j, "summary.json") for j in llm]
                if plan.assistants:
                    judges += [L.sample_labels(d, p, j, "summary.json") for j in llm]
            judges += [L.probe_answers(d, j, "summary.json") for j in plan.probe_judges]
            judges += [L.gaming_labels(d, j, "summary.json") for j in plan.gaming_judges if j in llm]
            for assistant in plan.assistants:
                callers.append(L.rewrites(d, assistant.provenance, "summary.json"))
            if plan.probe_judges:
                callers += [L.padded(d, padder.name, "summary.json") for padder in plan.padders]
            for ranker in plan.rankers:
                if ranker.backend == "litellm":
                    callers.append(L.run(d, "original", ranker.name))
            for p in plan.provenances[1:]:
                callers += [L.run(d, p, r.name) for r in plan.rewriting_rankers if r.backend == "litellm"]
                callers += [L.sample_scores(d, p, r.name) for r in plan.rewriting_rankers if r.backend == "litellm"]
        return inputs | {"judges": judges, "callers": callers}
