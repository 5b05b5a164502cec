"""``voirdire plan``: what judging will cost, before any call (SPEC section 3, "Cost").

Per judge and dataset: unique pairs, calls (pairs x samples), how many the store already
has (answers stored by voirdire 0.1 under their old keys count as stored), calls to make,
estimated prompt and completion tokens, and estimated cost from litellm's cost map. Prompt
tokens are counted with ``litellm.token_counter`` on the rendered prompts; completions are
assumed to use ``max_tokens`` (an upper bound). Also the naive count the paper's design
avoids: queries x systems x depth.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..config import Plan
from ..judges import LLMJudge
from ..layout import Layout
from ..llm import Store, has_price, token_cost
from ..llm.env import import_litellm
from .job import load_inputs
from .tasks import judge_calls


def estimate_prompt_tokens(litellm, model: str, messages: list[dict]) -> int:
    try:
        return int(litellm.token_counter(model=model, messages=messages))
    except Exception:  # noqa: BLE001 - no tokenizer for this model: ~4 characters a token
        return sum(len(m["content"]) for m in messages) // 4


def plan_rows(plan: Plan, provenance: str = "original") -> pd.DataFrame:
    litellm = import_litellm()
    layout = Layout(plan.config["results"])
    rows = []
    for dataset in plan.datasets:
        pairs_tsv = layout.pairs(dataset, provenance)
        if not Path(pairs_tsv).is_file():
            raise FileNotFoundError(
                f"{pairs_tsv} does not exist yet: run `snakemake --cores N plan` (it builds the "
                "BM25 pools first) rather than the bare command"
            )
        pairs, texts, topics = load_inputs(pairs_tsv, layout.passages(dataset), layout.topics(dataset))
        naive = len(topics) * len(plan.systems) * plan.config["bm25"]["depth"]
        for judge in plan.judges[dataset]:
            if not isinstance(judge, LLMJudge):
                continue
            calls = judge_calls(judge, pairs, topics, texts, provenance=provenance)
            cached: set[str] = set()
            store_path = layout.store(dataset, provenance, judge.name)
            if Path(store_path).is_file():
                with Store(store_path) as store:
                    cached = store.existing(c.key for c in calls)
                    aliased = store.existing(a for c in calls for a in c.aliases)  # one batched read
                    cached |= {c.key for c in calls if aliased.intersection(c.aliases)}
            todo = [c for c in calls if c.key not in cached]
            prompt = sum(estimate_prompt_tokens(litellm, judge.model, c.request.chat_messages()) for c in todo)
            completion = len(todo) * judge.max_tokens
            rows.append(
                {
                    "dataset": dataset, "judge": judge.name, "model": judge.model,
                    "provenance": provenance, "unique_pairs": len(pairs),
                    "naive_pairs": naive, "tasks": len(calls), "cached": len(cached),
                    "calls": len(todo), "est_prompt_tokens": prompt,
                    "est_completion_tokens_max": completion,
                    # None: litellm's cost map has no price for this model (local, self-hosted)
                    "est_cost_usd_max": token_cost(litellm, judge.model, prompt, completion)
                    if has_price(litellm, judge.model) else None,
                }
            )  # fmt: skip
    return pd.DataFrame(rows)
