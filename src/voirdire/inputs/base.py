"""The input functions of the wildcard regexes rules constrain their wildcards with: a part of :class:`voirdire.inputs.Inputs`."""

from __future__ import annotations

from .helpers import one_of


class WildcardInputs:
    def judges_of_kind(self, kind: str) -> str:
        """A wildcard regex matching exactly the configured judges of one kind."""
        return one_of(sorted({j.name for js in self.plan.judges.values() for j in js if j.kind == kind}))

    def ranker_names(self) -> str:
        """A wildcard regex matching exactly the configured rankers' names."""
        return one_of(r.name for r in self.plan.rankers)

    def fixed_order_systems(self) -> str:
        """Run names whose ordering does not read the texts in a rewritten collection: BM25 (the
        pool is retrieved once, on the original collection), the oracles (they sort by human
        labels) and every ranker not in rewriting.rankers."""
        plan = self.plan
        moving = {r.name for r in plan.rewriting_rankers}
        return one_of(name for s in plan.systems if s.slug not in moving for name in plan.run_names(s))

    def gaming_judges_of_kind(self, kind: str) -> str:
        """A wildcard regex matching exactly the judges of one kind the gamed systems are put to."""
        plan = self.plan
        return one_of(sorted(name for name in plan.gaming_judges if plan.judge(plan.datasets[0], name).kind == kind))
