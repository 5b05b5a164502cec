"""Benchmark: a folder of recorded runs under many recorded judges, end to end (prints figures).

Builds a labels-only dataset in a temporary folder -- N runs of D documents x Q queries (none:
the label sets audited alone, as a challenge's submissions), J recorded judges, M measures --
writes its config with ``voirdire init``, and times ``snakemake --cores 2`` on it (cold), then a
warm rerun, and prints the CPU time the cold run's processes took (what a shared machine does
not inflate: Snakemake's and its children's, every job among them,
so run it on a machine no other workflow uses) and the slowest jobs (their Snakemake benchmark files). ``--corpus`` also
writes the passages' texts (a JSONL corpus of passages of 10 to 400 words), so the length audit
and its chart run too (the dataset is then indexed with BM25 and is no longer labels-only).
Nothing is asserted; the figures go in the docs.

    python bench/recorded_runs.py                                  # 40 runs, 50 queries, 10 judges, 4 measures
    python bench/recorded_runs.py --runs 100 --judges 20           # a big folder of runs
    python bench/recorded_runs.py --runs 0 --judges 84 --corpus    # a challenge's label sets alone, with texts
    python bench/recorded_runs.py --runs 0 --judges 84 --keep /tmp/bench84   # keep the folder to look at
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = 5000


def build(folder: Path, runs: int, queries: int, depth: int, judges: int, seed: int = 7) -> dict[str, Path]:
    """The topics, human qrels, ``judges`` noisy copies of them (judges/judge<j>.txt) and ``runs``
    random runs (runs/run<r>.txt) of ``depth`` documents a query."""
    rng = np.random.default_rng(seed)
    docs = np.array([f"d{i}" for i in range(DOCUMENTS)])
    (folder / "runs").mkdir(parents=True)
    (folder / "judges").mkdir()
    topics = folder / "topics.tsv"
    # words of the corpus's vocabulary (write_corpus), so BM25 finds passages when there is one
    topics.write_text("".join(f"q{q}\tw{q % 500} w{7 * q % 500} w{13 * q % 500}\n" for q in range(queries)))
    judged = np.concatenate([rng.choice(DOCUMENTS, 300, replace=False) for _ in range(queries)])
    qids = np.repeat([f"q{q}" for q in range(queries)], 300)
    grades = rng.choice(4, len(judged), p=[0.5, 0.25, 0.15, 0.1])
    prefix = np.char.add(np.char.add(qids, " 0 "), np.char.add(docs[judged], " "))

    def write_qrels(path: Path, labels: np.ndarray) -> None:
        path.write_text("\n".join(np.char.add(prefix, labels.astype(str))) + "\n")

    write_qrels(folder / "qrels.txt", grades)
    for j in range(judges):
        write_qrels(folder / "judges" / f"judge{j}.txt", np.clip(grades + rng.integers(-1, 2, len(grades)), 0, 3))
    for r in range(runs):
        lines = []
        for q in range(queries):
            picked = docs[rng.choice(DOCUMENTS, depth, replace=False)]
            scores = np.sort(rng.random(depth))[::-1]
            lines += [f"q{q} Q0 {d} {rank} {s:.6f} run{r}" for rank, (d, s) in enumerate(zip(picked, scores), 1)]
        (folder / "runs" / f"run{r}.txt").write_text("\n".join(lines) + "\n")
    return {"topics": topics, "qrels": folder / "qrels.txt"}


def write_corpus(path: Path, seed: int = 11) -> None:
    """Every document's text: 10 to 400 words from a small vocabulary."""
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(500)])
    with path.open("w") as fh:
        for d in range(DOCUMENTS):
            text = " ".join(words[rng.integers(0, len(words), int(rng.integers(10, 401)))])
            fh.write(json.dumps({"id": f"d{d}", "contents": text}) + "\n")


def job_seconds(results: Path) -> dict[str, float]:
    """Each job's wall-clock seconds by its Snakemake benchmark file (named by its path there)."""
    found = {}
    for path in sorted(results.glob("logs/benchmarks/**/*.tsv")):
        lines = path.read_text().splitlines()
        if len(lines) >= 2:
            found[str(path.relative_to(results / "logs/benchmarks").with_suffix(""))] = float(lines[1].split("\t")[0])
    return found


def by_kind(seconds: dict[str, float]) -> dict[str, tuple[int, float]]:
    """Jobs of a kind (a benchmark file's name up to its first '-': judge-judge3 -> judge), how
    many and their seconds in all, the most first."""
    kinds: dict[str, list[float]] = {}
    for name, s in seconds.items():
        kinds.setdefault(Path(name).name.split("-")[0], []).append(s)
    return {k: (len(v), round(sum(v), 1)) for k, v in sorted(kinds.items(), key=lambda kv: -sum(kv[1]))}


def _children_cpu() -> float:
    """CPU seconds (user + system) of the finished child processes and theirs: Snakemake and
    whatever job it ran itself, which a busy machine does not inflate as the wall clock."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def local_run_environment() -> dict[str, str]:
    """This environment, with ``SLURM_CONF`` pointing at an empty file: the runs are local, and
    Snakemake's Slurm executor plugin asks ``scontrol show config`` on every start, which waits
    up to 10 s where Slurm's tools are installed but no controller answers (as after the test
    suite's Slurm test): a wait of the machine, not of the workflow (docs/clusters.md)."""
    return {**os.environ, "SLURM_CONF": os.devnull}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="recorded runs (0: the label sets audited alone)")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--judges", type=int, default=10)
    parser.add_argument(
        "--measures",
        nargs="+",
        default=["nDCG(judged_only=True)@10", "nDCG@10", "AP@100", "RR@10"],
        help="scored with runs only (without runs no measure scores anything)",
    )
    parser.add_argument("--corpus", action="store_true", help="write the passages' texts too (the length audit)")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="build and run in this (new) folder and keep it")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="voirdire-bench-") if args.keep is None else args.keep
    try:
        folder = Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        files = build(folder, args.runs, args.queries, args.depth, args.judges)
        config = folder / "config.yaml"
        init = [
            sys.executable,
            "-m",
            "voirdire.cli",
            "init",
            "--qrels",
            str(files["qrels"]),
            "--topics",
            str(files["topics"]),
            "--judges",
            str(folder / "judges"),
            "-o",
            str(config),
        ]
        if args.runs:
            init += ["--runs", str(folder / "runs"), "--measures", *args.measures]
        subprocess.run(init, check=True, cwd=ROOT, capture_output=True)
        if args.corpus:
            write_corpus(folder / "corpus.jsonl")
            spec = yaml.safe_load(config.read_text())
            spec["datasets"]["data"]["corpus"] = str(folder / "corpus.jsonl")
            config.write_text(yaml.safe_dump(spec, sort_keys=False))
        command = [
            sys.executable,
            "-m",
            "snakemake",
            "--cores",
            str(args.cores),
            "--configfile",
            str(config),
            "--config",
            f"results={folder / 'results'}",
        ]
        env = local_run_environment()
        start, cpu = time.perf_counter(), _children_cpu()
        cold = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
        cold_s, cold_cpu = time.perf_counter() - start, _children_cpu() - cpu
        if cold.returncode != 0:
            sys.exit(cold.stdout[-3000:] + cold.stderr[-3000:])
        # the warm rerun by modification times only: code edited meanwhile (in a shared working
        # tree) reruns nothing here
        start = time.perf_counter()
        subprocess.run([*command, "--rerun-triggers", "mtime"], cwd=ROOT, capture_output=True, check=True, env=env)
        warm_s = time.perf_counter() - start
        jobs = sum(1 for line in cold.stderr.splitlines() if line.startswith("Finished jobid"))
        seconds = {name: round(s, 1) for name, s in job_seconds(folder / "results").items()}
        figures = sorted(p.name for p in (folder / "results").glob("audits/**/*.png"))
        print(
            json.dumps(
                {
                    "runs": args.runs,
                    "queries": args.queries,
                    "depth": args.depth,
                    "judges": args.judges,
                    "measures": len(args.measures) if args.runs else 0,
                    "corpus": args.corpus,
                    "cores": args.cores,
                    "jobs": jobs,
                    "cold_s": round(cold_s, 1),
                    "cold_cpu_s": round(cold_cpu, 1),
                    "warm_rerun_s": round(warm_s, 1),
                    "slowest_jobs_s": sorted(seconds.items(), key=lambda kv: -kv[1])[:8],
                    "jobs_by_kind_count_s": by_kind(seconds),
                    "audit_figures": figures,
                },
                indent=2,
            )
        )
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
