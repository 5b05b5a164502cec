"""Per-item time of the LLM rankers, batched vs one by one (CPU here; GPU where lent).

    python bench/ranker_batching.py [--model local/smollm2-135m] [--items 32] [--batch 8]

RG scores `items` passages of one demo query; PRP compares `items` ordered pairs. Prints
seconds per item for batch size 1 and for `--batch`, and the speed-up.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from voirdire.rankers.llm import LogitsBackend, prp_messages, rg_messages

ROOT = Path(__file__).resolve().parents[1]


def demo_texts(items: int) -> tuple[str, list[str]]:
    query = (ROOT / "resources/demo/topics.tsv").read_text().splitlines()[6].split("\t")[1]
    lines = (ROOT / "resources/demo/corpus.jsonl").read_text().splitlines()
    return query, [json.loads(line)["contents"] for line in lines[:items]]


def per_item(backend: LogitsBackend, method: str, conversations) -> float:
    run = backend.yes_probabilities if method == "rg" else backend.preferences
    run(conversations[:2])  # warm-up: load, first kernels
    started = time.perf_counter()
    run(conversations)
    return (time.perf_counter() - started) / len(conversations)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local/smollm2-135m")
    parser.add_argument("--items", type=int, default=32)
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()
    query, passages = demo_texts(args.items)
    workloads = {
        "rg": [rg_messages(query, p) for p in passages],
        "prp": [prp_messages(query, passages[i], passages[-1 - i]) for i in range(args.items)],
    }
    for method, conversations in workloads.items():
        one = per_item(LogitsBackend(args.model, batch_size=1), method, conversations)
        many = per_item(LogitsBackend(args.model, batch_size=args.batch), method, conversations)
        print(
            f"{method:3s} {args.model}: one by one {one * 1000:7.1f} ms/item, batch {args.batch} "
            f"{many * 1000:7.1f} ms/item, speed-up {one / many:.2f}x"
        )


if __name__ == "__main__":
    main()
