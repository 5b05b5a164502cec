"""Where every result lives under ``results/``: the one place the rules and the library read it from.

Each method returns a path for concrete names, or a Snakemake pattern when given wildcards
(``Layout(R).pairs("{dataset}", "{provenance}")``), so the rule files, ``voirdire.inputs``,
``voirdire plan`` and the scripts cannot disagree about a file's name.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Layout:
    root: str

    def topics(self, dataset: str) -> str:
        return f"{self.root}/{dataset}/data/topics.tsv"

    def human_qrels(self, dataset: str) -> str:
        return f"{self.root}/{dataset}/data/qrels.human.txt"

    def index_marker(self, dataset: str) -> str:
        """The completion marker of a dataset's Lucene index (the folder is its parent)."""
        return f"{self.root}/{dataset}/index/voirdire-index.json"

    def data_summary(self, dataset: str) -> str:
        """Counts of the normalised dataset, and of what a ``drop`` setting left out."""
        return f"{self.root}/{dataset}/data/summary.json"

    def passages(self, dataset: str) -> str:
        return f"{self.root}/{dataset}/data/passages.parquet"

    def texts_summary(self, dataset: str) -> str:
        """What fetching a ``texts:`` dataset's passages found: asked, found, missing (first ids)."""
        return f"{self.root}/{dataset}/data/texts.json"

    def pool(self, dataset: str) -> str:
        """The BM25 run every system reorders (always of the original texts)."""
        return self.run(dataset, "original", "bm25")

    def run(self, dataset: str, provenance: str, name: str) -> str:
        return f"{self.root}/{dataset}/runs/{provenance}/{name}.run"

    def runs_summary(self, dataset: str) -> str:
        """What reading the recorded runs of a dataset changed: unknown queries dropped, topics
        missing, tied top 10s, documents below depth (one row per recorded system)."""
        return f"{self.root}/{dataset}/runs/original/recorded.summary.json"

    def bias(self, dataset: str, provenance: str, ranker: str) -> str:
        """A PRP ranker's position-bias figures, beside its run."""
        return f"{self.root}/{dataset}/runs/{provenance}/{ranker}.bias.json"

    def checkpoint(self, dataset: str, provenance: str, ranker: str) -> str:
        """A ranker's per-query checkpoint (resume after a kill); not a declared output."""
        return f"{self.root}/{dataset}/runs/{provenance}/.{ranker}.partial.jsonl"

    def pairs(self, dataset: str, provenance: str) -> str:
        return f"{self.root}/{dataset}/pairs/{provenance}.tsv"

    def qrels(self, dataset: str, provenance: str, judge: str) -> str:
        return f"{self.root}/{dataset}/qrels/{provenance}/{judge}.txt"

    def judgments(self, dataset: str, provenance: str, judge: str, ext: str) -> str:
        """A judge's store (``sqlite``), raw answers (``parquet``) or summary (``summary.json``)."""
        return f"{self.root}/{dataset}/judgments/{provenance}/{judge}.{ext}"

    def store(self, dataset: str, provenance: str, judge: str) -> str:
        """One call store per judging job (dataset x judge x provenance), so each file has one writer."""
        return self.judgments(dataset, provenance, judge, "sqlite")

    def ranker_store(self, dataset: str, provenance: str, ranker: str) -> str:
        return self.judgments(dataset, provenance, f"ranker-{ranker}", "sqlite")

    def scores(self, dataset: str, provenance: str) -> str:
        """Per-query scores of every system under every judge (the humans, ``human@pool`` and
        each configured judge), every configured measure: long (dataset, judge, measure, system,
        query_id, value; voirdire.evaluation.scores_table)."""
        return f"{self.root}/{dataset}/eval/{provenance}/scores.parquet"

    # The assistants experiment (docs/assistants.md)
    def sample(self, dataset: str) -> str:
        """The balanced sample: ``n`` human-judged pairs per grade, with their grades."""
        return f"{self.root}/sample/{dataset}.tsv"

    def sample_summary(self, dataset: str) -> str:
        return f"{self.root}/sample/{dataset}.summary.json"

    def sample_passages(self, dataset: str) -> str:
        """The original texts of the sampled passages (most lie outside the BM25 pool)."""
        return f"{self.root}/sample/{dataset}.passages.parquet"

    def rewrites(self, dataset: str, provenance: str, ext: str = "parquet") -> str:
        """An assistant's rewrites of the sampled passages with their checks (``parquet``), its
        call store (``sqlite``) or its summary (``summary.json``)."""
        return f"{self.root}/{dataset}/passages/{provenance}.{ext}"

    def sample_labels(self, dataset: str, provenance: str, judge: str, ext: str = "txt") -> str:
        """A judge's labels of the sample with the provenance's texts (qrels, ``txt``); an LLM
        judge's store (``sqlite``), raw answers (``parquet``) and summary (``summary.json``)."""
        return f"{self.root}/{dataset}/sample/{provenance}/{judge}.{ext}"

    def sample_scores(self, dataset: str, provenance: str, ranker: str) -> str:
        """A pointwise ranker's scores of the sample, original and rewritten texts (Figure 5)."""
        return f"{self.root}/{dataset}/sample/{provenance}/ranker-{ranker}.tsv"

    # The judge probes (docs/probes.md)
    def probe_sample(self, dataset: str) -> str:
        """Every probe's sample of one dataset (JSON: swap pairs, lists, pad, injection, personas)."""
        return f"{self.root}/{dataset}/probes/sample.json"

    def personas(self, dataset: str) -> str:
        """The persona of each sampled query under each role (retrieved with all-MiniLM-L6-v2)."""
        return f"{self.root}/{dataset}/probes/personas.parquet"

    def padded(self, dataset: str, padder: str, ext: str = "parquet") -> str:
        """An LLM padder's padded texts with their checks (``parquet``), store or summary."""
        return f"{self.root}/{dataset}/probes/pad-{padder}.{ext}"

    def probe_answers(self, dataset: str, judge: str, ext: str = "parquet") -> str:
        """A judge's probe answers, one row per call (``parquet``), its store or summary."""
        return f"{self.root}/{dataset}/probes/judge-{judge}.{ext}"

    # The gamed system (docs/probes.md)
    def gaming_passages(self, dataset: str) -> str:
        """The gamed systems' modified top-k passages: (query_id, doc_id, method, gamed_id, text)."""
        return f"{self.root}/{dataset}/gaming/passages.parquet"

    def gaming_labels(self, dataset: str, judge: str, ext: str = "txt") -> str:
        """A judge's labels of the modified passages (qrels, ``txt``); an LLM judge's store
        (``sqlite``), raw answers (``parquet``) and summary (``summary.json``)."""
        return f"{self.root}/{dataset}/gaming/judge-{judge}.{ext}"

    def served(self, server: str, layer: str) -> str:
        """A served model's record (URL, model, engine version): the service job's output."""
        return f"{self.root}/serve/{server}.{layer}.json"

    # The aggregate outputs: tables, figures and audits per provenance, logs and benchmarks
    def table(self, provenance: str, name: str, ext: str = "csv") -> str:
        """A paper table or experiment table (``table1``, ``table2``, ``label_shift``, ...)."""
        return f"{self.root}/tables/{provenance}/{name}.{ext}"

    def figure(self, provenance: str, name: str, ext: str = "png") -> str:
        return f"{self.root}/figures/{provenance}/{name}.{ext}"

    def audit(self, provenance: str, name: str, ext: str = "csv") -> str:
        """An audit's or probe's table or figure (probes: provenance ``original``)."""
        return f"{self.root}/audits/{provenance}/{name}.{ext}"

    def agreement(self, dataset: str, provenance: str, name: str) -> str:
        """One dataset's Table 2 rows (``agreement``) or significance tests (``significance``)."""
        return f"{self.root}/{dataset}/agreement/{provenance}/{name}.parquet"

    def verdict(self, ext: str = "csv") -> str:
        """The verdict: one row per judge and dataset, one column per question (docs/verdict.md)."""
        return f"{self.root}/verdict.{ext}"

    def ledger(self, ext: str = "csv") -> str:
        """The cost ledger: per dataset and LLM caller, calls, tokens and dollars planned and spent
        (voirdire.plan.ledger_rows; docs/batch.md)."""
        return f"{self.root}/tables/ledger.{ext}"

    def timings(self, ext: str = "csv") -> str:
        """Where the run's time went: the slowest jobs from the benchmark files."""
        return f"{self.root}/tables/timings.{ext}"

    def log(self, job: str) -> str:
        """A job's log (``job``: its path under logs/, wildcards as patterns, no suffix)."""
        return f"{self.root}/logs/{job}.log"

    def benchmark(self, job: str) -> str:
        """A job's Snakemake benchmark file (wall and CPU time, memory), beside the logs."""
        return f"{self.root}/logs/benchmarks/{job}.tsv"

    def benchmarks(self) -> str:
        return f"{self.root}/logs/benchmarks"

    def manifest(self) -> str:
        """Systems, judges, datasets and evaluation settings: an input of every aggregate rule."""
        return f"{self.root}/manifest.json"

    def plan(self, provenance: str) -> str:
        return f"{self.root}/plan/{provenance}.md"
