"""The input functions of served models (workflow/rules/serve.smk): a part of :class:`voirdire.inputs.Inputs`."""

from __future__ import annotations

from .helpers import served_spec


class ServeInputs:
    # A judge or ranker with `serve:` is called at a model server the workflow starts itself (rule
    # serve, workflow/rules/serve.smk): a Snakemake service job, run together with its callers as
    # one group job and stopped when they are done. Snakemake starts a service group's jobs all
    # at once, so callers that wait for another caller of the same server (a rewritten
    # collection's judging copies the original's answers; a sample job its pool job's; a probe
    # job the pool job's) are served by a later start of the server: layer 0 serves the original
    # pool's judging and reranking, layer 1 what waits for layer 0, layer 2 what waits for layer 1.
    @property
    def served(self) -> dict:
        """Server name -> its spec, for every served judge and ranker."""
        plan = self.plan
        return {
            spec.name: spec
            for owner in [j for js in plan.judges.values() for j in js] + plan.rankers
            if (spec := served_spec(owner)) is not None
        }

    def served_input(self, owner, layer) -> list[str]:
        """A caller's `served` input: the server's record for its layer, if its model is served."""
        spec = served_spec(owner)
        return [] if spec is None else [self.layout.served(spec.name, layer)]

    def served_records(self, wildcards) -> dict:
        """Dataset -> served judge or ranker -> the summary carrying its server record (for the
        fingerprint)."""
        plan, L, p = self.plan, self.layout, wildcards.provenance
        files = {}
        for d in plan.datasets:
            found = {j.name: L.judgments(d, p, j.name, "summary.json") for j in plan.judges[d] if served_spec(j)}
            found |= {r.name: L.bias(d, p, r.name) for r in plan.rankers if served_spec(r)}
            if found:
                files[d] = found
        return files
