"""Benchmark: a folder of recorded runs under many recorded judges, end to end (prints figures).

Builds a labels-only dataset in a temporary folder -- N runs of 1,000 documents x Q queries,
J recorded judges, M measures -- writes its config with ``voirdire init``, and times
``snakemake --cores 2`` on it (cold), then a warm rerun. Nothing is asserted; the figures go in
the docs.

    python bench/recorded_runs.py            # 40 runs, 50 queries, 10 judges, 4 measures
    python bench/recorded_runs.py --runs 10 --judges 3
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def build(folder: Path, runs: int, queries: int, depth: int, judges: int, seed: int = 7) -> dict[str, Path]:
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(5000)]
    (folder / "runs").mkdir(parents=True)
    topics = folder / "topics.tsv"
    topics.write_text("".join(f"q{q}\tquery {q}\n" for q in range(queries)))
    truth = {}
    with (folder / "qrels.txt").open("w") as fh:
        for q in range(queries):
            judged = rng.choice(len(docs), 300, replace=False)
            for d in judged:
                grade = int(rng.choice(4, p=[0.5, 0.25, 0.15, 0.1]))
                truth[q, d] = grade
                fh.write(f"q{q} 0 {docs[d]} {grade}\n")
    for j in range(judges):
        with (folder / f"judge{j}.txt").open("w") as fh:
            for (q, d), grade in truth.items():
                noisy = int(np.clip(grade + rng.integers(-1, 2), 0, 3))
                fh.write(f"q{q} 0 {docs[d]} {noisy}\n")
    for r in range(runs):
        with (folder / "runs" / f"run{r}.txt").open("w") as fh:
            for q in range(queries):
                picked = rng.choice(len(docs), depth, replace=False)
                scores = np.sort(rng.random(depth))[::-1]
                for rank, (d, s) in enumerate(zip(picked, scores, strict=True), start=1):
                    fh.write(f"q{q} Q0 {docs[d]} {rank} {s:.6f} run{r}\n")
    return {"topics": topics, "qrels": folder / "qrels.txt"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--judges", type=int, default=10)
    parser.add_argument("--measures", nargs="+", default=["nDCG(judged_only=True)@10", "nDCG@10", "AP@100", "RR@10"])
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = build(folder, args.runs, args.queries, args.depth, args.judges)
        config = folder / "config.yaml"
        init = [sys.executable, "-m", "voirdire.cli", "init", "--qrels", str(files["qrels"]), "--topics",
                str(files["topics"]), "--runs", str(folder / "runs"), "-o", str(config), "--measures", *args.measures]  # fmt: skip
        for j in range(args.judges):
            init += ["--judge", f"judge{j}={folder / f'judge{j}.txt'}"]
        subprocess.run(init, check=True, cwd=ROOT, capture_output=True)
        command = [sys.executable, "-m", "snakemake", "--cores", str(args.cores), "--configfile", str(config),
                   "--config", f"results={folder / 'results'}"]  # fmt: skip
        start = time.perf_counter()
        cold = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        cold_s = time.perf_counter() - start
        if cold.returncode != 0:
            sys.exit(cold.stdout[-3000:] + cold.stderr[-3000:])
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, capture_output=True, check=True)
        warm_s = time.perf_counter() - start
        jobs = sum(1 for line in cold.stderr.splitlines() if line.startswith("Finished jobid"))
        benchmarks = sorted((folder / "results").glob("logs/benchmarks/**/*.tsv"))
        slowest = []
        for path in benchmarks:
            lines = path.read_text().splitlines()
            if len(lines) >= 2:
                slowest.append(
                    (float(lines[1].split("\t")[0]), str(path.relative_to(folder / "results/logs/benchmarks")))
                )
        print(json.dumps({
            "runs": args.runs, "queries": args.queries, "depth": args.depth, "judges": args.judges,
            "measures": len(args.measures), "cores": args.cores, "jobs": jobs,
            "cold_s": round(cold_s, 1), "warm_rerun_s": round(warm_s, 1),
            "slowest_jobs_s": [(name, round(s, 1)) for s, name in sorted(slowest, reverse=True)[:8]],
        }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
