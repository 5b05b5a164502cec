"""SmolLM2's prefill speed on this CPU, as the workflow runs it and with int8 weights.

    python bench/local_number_formats.py [--prompts 64] [--threads 1]

Grades ``--prompts`` demo pairs with the demo judge's prompt (resources/demo/judge-short.txt),
10 new tokens each, batches of 32, through ``voirdire.llm.local.inference.generate``: once in the
number format this CPU gets (bfloat16 with bfloat16 instructions, float32 elsewhere) and once
with torch's dynamic int8 quantization of every linear layer. Prints seconds, prompt tokens a
second, and how many of the answers the two agree on.

int8 is not offered by the workflow: its activations are quantized with one scale per batch,
so a prompt's answer would depend on the prompts batched with it, where the float formats give
batched answers equal to one-by-one answers (docs/reproducibility.md).
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "resources" / "demo"


def conversations(count: int) -> list[list[dict[str, str]]]:
    from voirdire.formats import read_corpus, read_topics

    corpus = dict(read_corpus(DEMO / "corpus.jsonl"))
    topics = read_topics(DEMO / "topics.tsv")
    template = (DEMO / "judge-short.txt").read_text(encoding="utf-8")
    pairs = itertools.islice(((q, d) for q in topics for d in list(corpus)[:40]), count)
    return [
        [{"role": "user", "content": template.replace("{query}", topics[q]).replace("{passage}", corpus[d])}]
        for q, d in pairs
    ]


def timed(prompts, label: str) -> list[str]:
    from voirdire.llm.local import inference

    inference.generate(prompts[:4], max_tokens=10, batch_size=32)  # warm-up: load, first kernels
    started = time.perf_counter()
    out = inference.generate(prompts, max_tokens=10, batch_size=32)
    seconds = time.perf_counter() - started
    tokens = sum(g.prompt_tokens for g in out)
    print(
        f"{label:>9}: {seconds:6.1f} s for {len(out)} prompts, {tokens} prompt tokens, {tokens / seconds:5.0f} tokens/s"
    )
    return [g.text for g in out]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (one stream each)")
    args = parser.parse_args()
    os.environ.setdefault("VOIRDIRE_TORCH_THREADS", str(args.threads))
    import torch

    from voirdire.llm.local import inference

    print(
        f"{platform.processor() or platform.machine()}, torch {torch.__version__}, "
        f"kernels {torch.backends.cpu.get_cpu_capability()}, {inference.number_format_reason()}"
    )
    prompts = conversations(args.prompts)
    native = timed(prompts, inference.number_format())
    model, tokenizer = inference.load()
    quantized = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    inference.load = lambda cache_dir=None: (quantized, tokenizer)  # this process only
    int8 = timed(prompts, "int8")
    same = sum(a == b for a, b in zip(native, int8))
    print(f"answers equal in both: {same} of {len(prompts)}")


if __name__ == "__main__":
    main()
