"""Judging throughput on a loopback OpenAI-compatible server. Prints figures.

Three numbers from one run, same server, same latency, same concurrency:
  1. the engine (the one call path, voirdire.llm.call_all, with a judge's calls: store, parsing,
     retries, progress) in judgments/s,
  2. bare ``litellm.acompletion`` with an asyncio semaphore, calls/s,
  3. a one-at-a-time loop (how UMBRELA worked until 2026), calls/s,
then the ratios (engine / bare litellm, engine / sequential, engine / ideal) and the call
count the pair deduplication saves (unique pairs vs queries x systems x depth).

    python bench/judging_throughput.py [--calls 512] [--slots 32] [--latency 0.25]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
ROOT = Path(__file__).resolve().parents[1]
LOOPBACK = ROOT / "tests" / "support" / "loopback.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(LOOPBACK), "--port", str(port), "--latency", str(latency)],
        stdout=subprocess.PIPE,
    )
    url = json.loads(server.stdout.readline())["url"]
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
            break
        except OSError:
            time.sleep(0.05)
    return server, url


def workload(calls: int) -> tuple[pd.DataFrame, dict, dict]:
    pairs = pd.DataFrame({"query_id": [f"q{i % 50}" for i in range(calls)], "doc_id": [f"d{i}" for i in range(calls)]})
    topics = {f"q{i}": f"benchmark query number {i}" for i in range(50)}
    texts = {f"d{i}": f"benchmark passage {i} " * 20 for i in range(calls)}
    return pairs, topics, texts


def bench_engine(url: str, calls: int, slots: int) -> float:
    from voirdire.judges import LLMJudge
    from voirdire.llm import Endpoint, Store, call_all
    from voirdire.llm_judge.tasks import GradeAccept, judge_calls

    pairs, topics, texts = workload(calls)
    judge = LLMJudge(name="bench", endpoint=Endpoint("openai/loopback", api_base=url, concurrency=slots))
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-key")
    tasks = judge_calls(judge, pairs, topics, texts, provenance="original")
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.sqlite") as store:
        started = time.perf_counter()
        stats = call_all(
            judge.endpoint, tasks, store, accept=GradeAccept(judge.scale), reasks=judge.parse_retries, progress=False
        )
        elapsed = time.perf_counter() - started
    assert stats.stored == calls
    return calls / elapsed


def rendered_prompts(calls: int) -> list[list[dict]]:
    """The engine's own rendered prompts, so both sides send the same bytes."""
    from voirdire.llm_judge.templates import Template
    from voirdire.prompts import DEFAULT_PROMPT

    pairs, topics, texts = workload(calls)
    template = Template.from_file(DEFAULT_PROMPT)
    return [template.render(topics[q], texts[d]) for q, d in pairs.itertuples(index=False)]


def bench_bare(url: str, calls: int, slots: int) -> float:
    import litellm

    messages = rendered_prompts(calls)

    async def run() -> None:
        semaphore = asyncio.Semaphore(slots)

        async def one(m):
            async with semaphore:
                await litellm.acompletion(
                    model="openai/loopback",
                    api_base=url,
                    api_key="sk-bench",
                    messages=m,
                    temperature=0.0,
                    top_p=1.0,
                    max_tokens=256,
                    timeout=60,
                    num_retries=3,
                )

        await asyncio.gather(*(one(m) for m in messages))

    started = time.perf_counter()
    asyncio.run(run())
    return calls / (time.perf_counter() - started)


def bench_sequential(url: str, calls: int) -> float:
    import litellm

    started = time.perf_counter()
    for messages in rendered_prompts(calls):
        litellm.completion(
            model="openai/loopback",
            api_base=url,
            api_key="sk-bench",
            messages=messages,
            temperature=0.0,
            top_p=1.0,
            max_tokens=256,
            timeout=60,
            num_retries=3,
        )
    return calls / (time.perf_counter() - started)


def call_counts() -> None:
    """Unique judged pairs vs the naive queries x systems x depth, where pools exist here."""
    shared = ROOT.parent / "shared" / "data" / "trec-dl-2019"
    if (shared / "bm25-top100.rankgpt.json").is_file():
        from voirdire.formats import read_qrels, read_rankgpt
        from voirdire.judges import needed_pairs

        topics, run, _ = read_rankgpt(shared / "bm25-top100.rankgpt.json")
        pairs = needed_pairs(read_qrels(shared / "qrels.nist.txt"), pool=run)
        for systems in (7, 14):
            naive = len(topics) * systems * 100
            print(
                f"call count, TREC DL 2019 (../shared), {systems} systems: {len(pairs):,} unique pairs "
                f"per judge and provenance vs {naive:,} naive ({naive / len(pairs):.1f}x fewer)"
            )
    paper = ROOT / "results" / "paper"
    from voirdire.formats import read_pairs

    sizes = {d: len(read_pairs(p)) for d in ("dl19", "dl20") if (p := paper / d / "pairs" / "original.tsv").is_file()}
    if len(sizes) == 2:
        print(f"call count, config/paper.yaml: {sum(sizes.values()):,} unique pairs per judge and provenance")
    else:
        print(
            "call count, config/paper.yaml: pools not built here (needs the prebuilt index); "
            "expected there: 5,116 unique pairs vs 135,800 naive (97 queries x 14 systems x 100)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=512)
    parser.add_argument("--slots", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.25)
    parser.add_argument("--sequential-calls", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    server, url = start_server(args.latency)
    try:
        bench_bare(url, 4 * args.slots, args.slots)  # warm-up: imports, connection pool
        # alternate the two, twice each, so neither profits from running later
        engines, bares = [], []
        for _ in range(args.rounds):
            engines.append(bench_engine(url, args.calls, args.slots))
            bares.append(bench_bare(url, args.calls, args.slots))
        engine, bare = sum(engines) / len(engines), sum(bares) / len(bares)
        sequential = bench_sequential(url, args.sequential_calls)
    finally:
        server.terminate()
    ideal = args.slots / args.latency
    print(f"loopback server: {args.latency * 1000:.0f} ms latency, {args.slots} slots, {os.cpu_count()} cores")
    print(f"rounds: engine {[round(x, 1) for x in engines]}, bare {[round(x, 1) for x in bares]}")
    print(f"engine:       {engine:7.1f} judgments/s  ({engine / ideal:.2f} of the ideal {ideal:.0f}/s)")
    print(f"bare litellm: {bare:7.1f} calls/s      (engine keeps {engine / bare:.2f} of it; target >= 0.8)")
    print(f"sequential:   {sequential:7.1f} calls/s      (engine is {engine / sequential:.1f}x faster; target >= 20x)")
    call_counts()


if __name__ == "__main__":
    main()
