"""How fast this machine is right now, in the three kinds of work the demo and the suite do.

    python bench/machine_speed.py [--seconds 0.4] [--json FILE]

A figure means little without its machine and its hour: on the same 2-core VM the same SmolLM2
job has taken half as long again in one hour as in another. ``make test`` and ``make demo``
print this line first, so every run's log says how fast its machine was. Three measures, one core each, the median of a few
repeats (numpy with one BLAS thread; no torch, so it costs about 2 s):

* ``matmul``: float32 matrix products of SmolLM2's shapes (2048 x 576 by 576 x 1536), GFLOP/s:
  the local model's prefill, most of the demo's time;
* ``memory``: copying a 256 MB array, GB/s read plus written: decoding, which reads every weight
  once per token;
* ``python``: a pure-Python loop, millions of steps a second: imports, pandas' glue, Snakemake;

and the matrix products on every usable core at once (``matmul_all_gflops``, one process each):
whether the cores add up (a VM's two cores may be one physical core's two threads, or share
it with a neighbour).

On the 2-core AMD EPYC of the Zen 3 generation (AVX2, no AVX-512) that docs/measured.md times,
in a fast hour: see its section on this script. Times go roughly as the inverse of these rates:
a machine at two thirds of them should expect the suite to take about half as long again.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

# one BLAS thread, set before numpy loads its BLAS: the figures are per core
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import numpy as np  # noqa: E402

from voirdire import machine  # noqa: E402


def rate(work, amount: float, seconds: float) -> float:
    """``amount`` per second of the median of the repeats of ``work`` that fit in ``seconds``
    (at least three): the machine as it is now, disturbances included (the fastest repeat would
    hide a neighbour's load, which a long run pays for)."""
    times = []
    started = time.perf_counter()
    while len(times) < 3 or time.perf_counter() - started < seconds:
        begin = time.perf_counter()
        work()
        times.append(time.perf_counter() - begin)
    return amount / statistics.median(times)


def matmul_gflops(seconds: float) -> float:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2048, 576), dtype=np.float32)
    b = rng.standard_normal((576, 1536), dtype=np.float32)
    out = np.empty((2048, 1536), dtype=np.float32)
    return rate(lambda: np.matmul(a, b, out=out), 2 * 2048 * 576 * 1536 / 1e9, seconds)


def _matmul_worker(barrier, results, seconds: float) -> None:
    barrier.wait()  # every core starts together
    results.put(matmul_gflops(seconds))


def matmul_all_gflops(seconds: float, workers: int) -> float:
    """The matrix products in ``workers`` processes at once, their rates summed."""
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(workers), context.Queue()
    processes = [context.Process(target=_matmul_worker, args=(barrier, results, seconds)) for _ in range(workers)]
    for process in processes:
        process.start()
    rates = [results.get(timeout=600) for _ in processes]
    for process in processes:
        process.join()
    return sum(rates)


def memory_gbs(seconds: float, megabytes: int = 256) -> float:
    source = np.ones(megabytes * 2**20 // 8)
    target = np.empty_like(source)
    return rate(lambda: np.copyto(target, source), 2 * source.nbytes / 1e9, seconds)


def python_msteps(seconds: float, steps: int = 1_000_000) -> float:
    def loop() -> int:
        total = 0
        for i in range(steps):
            total += i & 7
        return total

    return rate(loop, steps / 1e6, seconds)


def measure(seconds: float = 0.4) -> dict:
    """The machine (:func:`voirdire.machine.cpu`), the hour, and the rates."""
    cpu = machine.cpu()
    return {
        "cpu": cpu,
        "at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "matmul_gflops": round(matmul_gflops(seconds), 1),
        "matmul_all_gflops": round(matmul_all_gflops(seconds, cpu["cores"]), 1),
        "memory_gbs": round(memory_gbs(seconds), 1),
        "python_msteps": round(python_msteps(seconds), 1),
    }


def line(figures: dict) -> str:
    return (
        f"machine: {machine.describe(figures['cpu'])}; at {figures['at']}, one core: "
        f"{figures['matmul_gflops']:.0f} GFLOP/s float32 matmul, {figures['memory_gbs']:.1f} GB/s memory copy, "
        f"{figures['python_msteps']:.0f} M Python loop steps/s; all {figures['cpu']['cores']} cores at once: "
        f"{figures['matmul_all_gflops']:.0f} GFLOP/s (bench/machine_speed.py)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=0.4, help="time spent on each measure")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args(argv)
    figures = measure(args.seconds)
    print(line(figures), flush=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
