"""Wall time of the DL19 test config: local vs through profiles/slurm (a Slurm must answer).

    ../shared/tools/slurm-single-node.sh start
    python bench/slurm_overhead.py [--rounds 3] [--cores 2]

Each round runs the config cold into a scratch results folder, first locally
(`snakemake --cores N`), then with the README's Slurm command, and prints both wall times and
their ratio; the last line gives the medians.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wall(args: list[str], results: Path) -> float:
    shutil.rmtree(results, ignore_errors=True)
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            *args,
            "--configfile",
            ".test/config.yaml",
            "--config",
            f"results={results}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"snakemake {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    cores = ["--cores", str(args.cores)]
    slurm = ["--workflow-profile", "profiles/slurm", *cores, "--voirdire-slurm-no-account"]
    local_times, slurm_times = [], []
    with tempfile.TemporaryDirectory() as scratch:
        results = Path(scratch) / "dl19"
        for round_ in range(1, args.rounds + 1):
            local_times.append(wall(cores, results))
            slurm_times.append(wall(slurm, results))
            print(
                f"round {round_}: local {local_times[-1]:6.1f} s, slurm {slurm_times[-1]:6.1f} s, "
                f"ratio {slurm_times[-1] / local_times[-1]:.2f}x",
                flush=True,
            )
    local, remote = statistics.median(local_times), statistics.median(slurm_times)
    print(f"median over {args.rounds}: local {local:.1f} s, slurm {remote:.1f} s, ratio {remote / local:.2f}x")


if __name__ == "__main__":
    main()
