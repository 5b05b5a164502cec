"""``voirdire plan``: what judging will cost, before any call (SPEC section 3, "Cost").

Per judge and dataset: unique pairs, tasks (pairs x samples), how many the store already
has, calls to make, estimated prompt and completion tokens, and estimated cost from
litellm's cost map. Prompt tokens are counted with ``litellm.token_counter`` on the
rendered prompts; completions are assumed to use ``max_tokens`` (an upper bound). Also the
naive count the paper's design avoids: queries x systems x depth.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .config import Plan
from .engine import build_tasks, has_price, token_cost
from .llm_env import import_litellm
from .judges import LLMJudge
from .judging import load_inputs
from .store import Store


def estimate_prompt_tokens(litellm, model: str, messages: list[dict]) -> int:
    try:
        return int(litellm.token_counter(model=model, messages=messages))
    except Exception:  # noqa: BLE001 - no tokenizer for this model: ~4 characters a token
        return sum(len(m["content"]) for m in messages) // 4


def plan_rows(plan: Plan, results: str | Path, provenance: str = "original") -> pd.DataFrame:
    litellm = import_litellm()
    rows = []
    for dataset in plan.datasets:
        base = Path(results) / dataset
        pairs_tsv = base / "pairs" / f"{provenance}.tsv"
        if not pairs_tsv.is_file():
            raise FileNotFoundError(
                f"{pairs_tsv} does not exist yet: run `snakemake --cores N plan` (it builds the "
                "BM25 pools first) rather than the bare command"
            )
        pairs, texts, topics = load_inputs(pairs_tsv, base / "data" / "passages.parquet", base / "data" / "topics.tsv")
        queries = len(topics)
        naive = queries * len(plan.systems) * plan.config["bm25"]["depth"]
        for judge in plan.judges[dataset]:
            if not isinstance(judge, LLMJudge):
                continue
            tasks = build_tasks(judge, pairs, topics, texts)
            store_path = base / "judgments" / provenance / f"{judge.name}.sqlite"
            cached: set[str] = set()
            if store_path.is_file():
                with Store(store_path) as store:
                    cached = store.existing(t.key for t in tasks)
            todo = [t for t in tasks if t.key not in cached]
            prompt = sum(estimate_prompt_tokens(litellm, judge.model, t.messages) for t in todo)
            completion = len(todo) * judge.max_tokens
            rows.append(
                {
                    "dataset": dataset, "judge": judge.name, "model": judge.model,
                    "provenance": provenance, "unique_pairs": len(pairs),
                    "naive_pairs": naive, "tasks": len(tasks), "cached": len(cached),
                    "calls": len(todo), "est_prompt_tokens": prompt,
                    "est_completion_tokens_max": completion,
                    # None: litellm's cost map has no price for this model (local, self-hosted)
                    "est_cost_usd_max": token_cost(litellm, judge.model, prompt, completion)
                    if has_price(litellm, judge.model) else None,
                }
            )  # fmt: skip
    return pd.DataFrame(rows)
