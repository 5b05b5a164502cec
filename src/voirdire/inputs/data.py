"""The input functions of data, runs and BM25 (workflow/rules/data.smk, runs.smk, bm25.smk, oracles.smk, rankers.smk): a part of :class:`voirdire.inputs.Inputs`."""

from __future__ import annotations

from ..config import as_plain
from ..textsource import shard_files
from .helpers import one_of


class DataInputs:
    def dataset_spec(self, wildcards) -> dict:
        return as_plain(self.config["datasets"][wildcards.dataset])

    def dataset_files(self, wildcards) -> dict:
        """The dataset's own input files, so that editing one reruns what depends on it."""
        spec = self.config["datasets"][wildcards.dataset]
        return {key: spec[key] for key in ("topics", "qrels", "candidates") if key in spec}

    def bm25_inputs(self, wildcards) -> dict:
        plan, L = self.plan, self.layout
        spec = self.config["datasets"][wildcards.dataset]
        inputs = {"topics": L.topics(wildcards.dataset)}
        # the texts of the passages recorded runs retrieved outside the pool, for judges that read
        inputs["recorded"] = [L.run(wildcards.dataset, "original", s.slug) for s in plan.recorded]
        if spec["source"] == "rankgpt":
            inputs["candidates"] = spec["candidates"]
        elif "prebuilt" not in spec.get("index", {}):
            inputs["index"] = L.index_marker(wildcards.dataset)
        return inputs

    def pool_datasets(self) -> str:
        """A wildcard regex matching exactly the datasets with a BM25 pool (not labels-only, not
        ``texts:``): the ``bm25`` rule's; the others' passages come from ``fetch_texts``."""
        plan = self.plan
        return one_of(d for d in plan.datasets if not plan.labels_only(d) and not plan.fetched_texts(d))

    def fetched_datasets(self) -> str:
        """A wildcard regex matching exactly the datasets whose texts are fetched (``texts:``)."""
        return one_of(d for d in self.plan.datasets if self.plan.fetched_texts(d))

    def text_source_files(self, wildcards) -> list[str]:
        """The segment files a ``texts:`` dataset reads (so that replacing one refetches); an
        index (a folder, or a prebuilt name) is not a file input."""
        spec = self.config["datasets"][wildcards.dataset]["texts"]
        return [str(p) for p in shard_files(spec["segments"])] if "segments" in spec else []

    def sample_text_inputs(self, wildcards) -> dict:
        """Where the assistants' sample finds passage texts the pool lacks: a local dataset's
        corpus file (read as it is: no index, no Java), a RankGPT file's candidates, or the
        index the workflow built (none for a prebuilt one)."""
        spec = self.config["datasets"][wildcards.dataset]
        if spec["source"] == "local":
            return {"corpus": spec["corpus"]}
        if spec["source"] == "rankgpt":
            return {"candidates": spec["candidates"]}
        if "prebuilt" not in spec.get("index", {}):
            return {"index": self.layout.index_marker(wildcards.dataset)}
        return {}

    def recorded_run_files(self, wildcards) -> dict:
        """System name -> the recorded run file of the dataset (runs:)."""
        return {f"run_{s.slug}": str(s.file(wildcards.dataset)) for s in self.plan.recorded}

    def recorded_params(self, wildcards) -> dict:
        """System name -> its file, output name and unknown_queries setting, for the dataset."""
        return {
            s.name: {
                "input": f"run_{s.slug}",
                "output": s.slug,
                "unknown_queries": s.unknown_queries,
            }
            for s in self.plan.recorded
        }

    def oracle_base(self, wildcards) -> str:
        """The run the oracles reorder: the BM25 pool, or a recorded run (oracles.base)."""
        return self.layout.run(wildcards.dataset, "original", self.plan.base.slug)

    def system_runs_of(self, dataset: str, provenance: str) -> dict:
        """System (as tables print it) -> its run files (several: an oracle's random tie-break
        draws)."""
        plan, L = self.plan, self.layout
        return {
            str(system): [L.run(dataset, provenance, name) for name in plan.run_names(system)]
            for system in plan.systems
        }

    def system_runs(self, wildcards) -> dict:
        return self.system_runs_of(wildcards.dataset, wildcards.provenance)

    RUNS_PER_PROCESS = 25
    """A job that reads or scores every run (``recorded_runs``, ``scores``) asks a thread (a
    forked process, :mod:`voirdire.parallel`) per this many runs: a big folder of runs gets the
    cores nothing else can use yet; a demo's few runs stay one thread, never waiting for two
    free cores beside a model's job."""

    def runs_threads(self, wildcards) -> int:
        """Threads of a job that reads or scores every run: one per :data:`RUNS_PER_PROCESS`
        runs, 1 to 8 (Snakemake gives no more than ``--cores``)."""
        runs = sum(len(files) for files in self.system_runs_of(wildcards.dataset, "original").values())
        return max(1, min(8, runs // self.RUNS_PER_PROCESS))

    def original_runs(self, wildcards=None) -> dict:
        """Dataset -> system -> its run files of the original collection."""
        return {d: self.system_runs_of(d, "original") for d in self.plan.datasets}

    def position_bias_files(self, wildcards) -> list[str]:
        """Position-bias figures of every PRP ranker, per dataset (a table beside Table 1). PRP
        rankers keep their original orderings in a rewritten collection (only the pointwise
        rankers of `rewriting.rankers` rerank it), so every provenance shows the original
        figures."""
        return [
            self.layout.bias(dataset, "original", ranker.name)
            for dataset in self.plan.datasets
            for ranker in self.plan.rankers
            if ranker.method == "prp"
        ]
