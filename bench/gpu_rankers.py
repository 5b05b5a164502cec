"""Throughput of the paper's GPU rerankers at full size, on random weights: batched vs one by one.

    python bench/gpu_rankers.py [--size paper|tiny] [--items N] [--max-batch B]
        [--device cuda|cpu] [--dtype auto|float32|bfloat16|float16] [--seed 0]
        [--systems 14] [--queries 97] [--depth 100] [--prp-k 10] [--json PATH]

The paper (Balog, Metzler & Qin, "Rankers, Judges, and Assistants", SIGIR 2025) reranks
BM25's top 100 with RankT5 and PRP on FLAN-T5-XXL (an 11B encoder-decoder) and with RG
(pointwise P(Yes)); RG is timed here on a 7-8B decoder-only model (Llama-3-8B shapes).
Nothing is downloaded: each model is built from its architecture's config (hard-coded below)
with random weights, directly on the device and in the target dtype -- a forward pass costs
the same whatever the weights' values. ``--size paper`` (the default on CUDA) builds the full
models, one at a time: bf16 weights alone are 22.3 GB (T5-XXL, 11.1B parameters) and 16.1 GB
(Llama-3-8B, 8.0B). ``--size tiny`` (the default elsewhere) builds two-layer models of the
same two architectures, for CPU and tests.

Workloads, scored exactly as ``voirdire.rankers`` scores them (torch.inference_mode,
use_cache=False, an attention mask over padded rows):

* ``rankt5`` (t5.T5Scorer): ``"Query: q Document: d</s>"``, one encoder pass and ONE decoder
  step from the start token; the score is the logit of ``<extra_id_10>``. Rows sorted longest
  first within each query's ``--depth`` passages, right padding.
* ``prp`` (causal.seq2seq_logprobs, PRP on FLAN-T5): the PRP prompt with two passages, one
  encoder pass + one decoder step, log-softmax of the "A"/"B" logits. Input order, right padding.
* ``rg`` (llm.local.logprobs_with): Llama-3 chat prompt with one passage, one forward pass,
  log-softmax of the last position's "Yes"/"No" logits (``logits_to_keep=1``); left padding,
  position ids from the mask. Input order.

Input lengths are random token ids with lengths drawn from seeded uniform ranges that match TREC
DL 2019's BM25 top-100 (measured on ../shared/data/trec-dl-2019/bm25-top100.rankgpt.json:
queries 2-9 words, mean 5.4; passages mean 63 words, median 55, 5th-95th percentile 32-110
words, i.e. 1.39 BPE tokens/word: mean 87 tokens, 5th-95th percentile 43-157): query 3-13 and
passage 40-150 tokens, plus the prompt's fixed tokens (RankT5 5, PRP 50, RG 34 with the Llama-3
chat header). RankT5 inputs are 48-168 tokens, PRP 133-363, RG 77-197.

For each workload it prints items/s at batch sizes 1, 2, 4, ... up to ``--max-batch`` (the
sweep stops at CUDA out-of-memory), peak GPU memory per batch size, the saturating batch (the
smallest whose throughput is within 10% of the best) and its speed-up per item over batch 1
(the target on a GPU: >= 4x); then an estimate of the paper's full run on one device.
``--json PATH`` writes every figure.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

SIZES = ("tiny", "paper")
DTYPES = ("auto", "float32", "bfloat16", "float16")
TOLERANCE = 0.10
"""A batch size saturates when its throughput is within 10% of the sweep's best."""

QUERY_TOKENS = (3, 13)
PASSAGE_TOKENS = (40, 150)
DL19_QUERIES, DL20_QUERIES = 43, 54
"""Judged queries of ir_datasets msmarco-passage/trec-dl-2019/judged and .../trec-dl-2020/judged
(config/paper.yaml's datasets; counts from ir_datasets' metadata, DL19 also from ../shared)."""
PAPER_SYSTEMS, PAPER_DEPTH, PAPER_PRP_K = 14, 100, 10


# ----------------------------------------------------------------------------- models


def t5_config(size: str) -> Any:
    """FLAN-T5-XXL's architecture (google/flan-t5-xxl config.json), or a tiny T5 of the same kind."""
    from transformers import T5Config

    common: dict[str, Any] = {
        "feed_forward_proj": "gated-gelu",
        "tie_word_embeddings": False,
        "pad_token_id": 0,
        "eos_token_id": 1,
        "decoder_start_token_id": 0,
        "relative_attention_num_buckets": 32,
        "relative_attention_max_distance": 128,
        "layer_norm_epsilon": 1e-6,
    }
    if size == "paper":
        return T5Config(
            vocab_size=32128,
            d_model=4096,
            d_ff=10240,
            d_kv=64,
            num_heads=64,
            num_layers=24,
            num_decoder_layers=24,
            **common,
        )
    return T5Config(
        vocab_size=512, d_model=64, d_ff=128, d_kv=16, num_heads=4, num_layers=2, num_decoder_layers=2, **common
    )


def llama_config(size: str) -> Any:
    """Llama-3-8B's architecture (meta-llama/Meta-Llama-3-8B config.json), or a tiny Llama."""
    from transformers import LlamaConfig

    common: dict[str, Any] = {
        "rope_theta": 500000.0,
        "rms_norm_eps": 1e-5,
        "tie_word_embeddings": False,
        "hidden_act": "silu",
        "attention_bias": False,
    }
    if size == "paper":
        return LlamaConfig(
            vocab_size=128256,
            hidden_size=4096,
            intermediate_size=14336,
            num_hidden_layers=32,
            num_attention_heads=32,
            num_key_value_heads=8,
            max_position_embeddings=8192,
            bos_token_id=128000,
            eos_token_id=128001,
            **common,
        )
    return LlamaConfig(
        vocab_size=512,
        hidden_size=64,
        intermediate_size=224,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        bos_token_id=1,
        eos_token_id=2,
        **common,
    )


def build_model(arch: str, size: str, device: str, dtype: str, seed: int = 0) -> Any:
    """A randomly initialised T5ForConditionalGeneration ("t5") or LlamaForCausalLM ("llama"),
    created on ``device`` in ``dtype`` (never materialised in float32 on the CPU first)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM

    config = t5_config(size) if arch == "t5" else llama_config(size)
    loader = AutoModelForSeq2SeqLM if arch == "t5" else AutoModelForCausalLM
    torch.manual_seed(seed)
    with torch.device(device):
        model = loader.from_config(config, dtype=getattr(torch, dtype))
        if arch == "t5":
            untie_lm_head(model)
    return model.eval()


def untie_lm_head(model: Any) -> None:
    """Give a T5 its own output matrix, as FLAN-T5's checkpoints have (T5 v1.1: untied).

    transformers 5 builds every T5 with ``lm_head`` tied to the input embedding (its
    ``T5Config`` forces ``tie_word_embeddings=True``; ``from_pretrained`` unties it when the
    checkpoint holds a different ``lm_head``), which would leave FLAN-T5-XXL 263 MB (bf16) and
    0.13B parameters short. Call it inside the ``torch.device`` context.
    """
    import torch

    if model.lm_head.weight is model.shared.weight:
        model.lm_head.weight = torch.nn.Parameter(torch.empty_like(model.shared.weight).normal_(std=1.0))
        model.all_tied_weights_keys.pop("lm_head.weight", None)


def describe(model: Any, size: str) -> dict[str, Any]:
    """What was built: class, architecture, shape, parameters and weight bytes."""
    config = model.config
    params = sum(p.numel() for p in model.parameters())
    return {
        "class": type(model).__name__,
        "model_type": config.model_type,
        "is_encoder_decoder": bool(config.is_encoder_decoder),
        "size": size,
        "stands_for": {"t5": "FLAN-T5-XXL", "llama": "Llama-3-8B"}[config.model_type],
        "layers": config.num_hidden_layers,
        "hidden": config.hidden_size if config.model_type == "llama" else config.d_model,
        "vocab_size": config.vocab_size,
        "parameters": params,
        "weight_bytes": sum(p.numel() * p.element_size() for p in model.parameters()),
        "dtype": str(next(model.parameters()).dtype).removeprefix("torch."),
        "device": str(next(model.parameters()).device),
    }


# ----------------------------------------------------------------------------- workloads


@dataclass(frozen=True)
class Workload:
    name: str
    arch: str  # "t5" | "llama"
    fixed: int  # the prompt's own tokens (template, special tokens)
    passages: int  # passages in one prompt
    left_padding: bool
    sort_per_query: bool  # RankT5: longest first within each query's passages
    pointwise: bool
    what: str


WORKLOADS = (
    Workload("rankt5", "t5", 5, 1, False, True, True, "RankT5: encoder + 1 decoder step, <extra_id_10> logit"),
    Workload("prp", "t5", 50, 2, False, False, False, "PRP on FLAN-T5: encoder + 1 decoder step, A/B log-softmax"),
    Workload("rg", "llama", 34, 1, True, False, True, "RG on a decoder: 1 forward pass, last-position Yes/No"),
)


def input_lengths(workload: Workload, items: int, seed: int) -> list[int]:
    """Seeded token lengths: fixed tokens + a query + ``workload.passages`` passages."""
    rng = random.Random(f"{seed}-{workload.name}")
    return [
        workload.fixed
        + rng.randint(*QUERY_TOKENS)
        + sum(rng.randint(*PASSAGE_TOKENS) for _ in range(workload.passages))
        for _ in range(items)
    ]


def token_rows(lengths: Sequence[int], config: Any, seed: int) -> list[list[int]]:
    """Random token ids of the given lengths; T5 rows end with </s>, Llama rows begin with BOS."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    high = min(config.vocab_size, 128000)  # Llama-3's special tokens start at 128000
    rows = [torch.randint(3, high, (n,), generator=generator).tolist() for n in lengths]
    for row in rows:
        if config.model_type == "t5":
            row[-1] = config.eos_token_id
        else:
            row[0] = config.bos_token_id
    return rows


def batch_order(lengths: Sequence[int], depth: int, sort_per_query: bool) -> list[int]:
    """Input order, or (RankT5) longest first within each consecutive group of ``depth`` items."""
    order = list(range(len(lengths)))
    if not sort_per_query:
        return order
    return [
        i
        for start in range(0, len(order), depth)
        for i in sorted(order[start : start + depth], key=lambda i: -lengths[i])
    ]


def pad(rows: Sequence[Sequence[int]], pad_id: int, left: bool) -> tuple[Any, Any]:
    """``input_ids`` and ``attention_mask`` (CPU tensors), padded on the right or the left."""
    import torch

    width = max(len(row) for row in rows)
    input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for j, row in enumerate(rows):
        span = slice(width - len(row), width) if left else slice(0, len(row))
        input_ids[j, span] = torch.tensor(row, dtype=torch.long)
        mask[j, span] = 1
    return input_ids, mask


def make_batches(workload: Workload, rows: Sequence[Sequence[int]], size: int, depth: int, pad_id: int) -> list:
    order = batch_order([len(r) for r in rows], depth, workload.sort_per_query)
    chunks = [order[i : i + size] for i in range(0, len(order), size)]
    return [pad([rows[i] for i in chunk], pad_id, workload.left_padding) for chunk in chunks]


def score_batch(model: Any, workload: Workload, input_ids: Any, mask: Any, device: str) -> list:
    """One batch scored the project's way; ``.tolist()`` waits for the device, as the project's does."""
    import torch

    input_ids, mask = input_ids.to(device), mask.to(device)
    vocab = model.config.vocab_size
    if workload.arch == "t5":
        start = torch.full((input_ids.shape[0], 1), model.config.decoder_start_token_id, device=device)
        logits = model(input_ids=input_ids, attention_mask=mask, decoder_input_ids=start, use_cache=False).logits[
            :, 0, :
        ]
        if workload.name == "rankt5":  # <extra_id_10> is id vocab - 39 (32089 of 32128)
            return logits.index_select(1, torch.tensor([vocab - 39], device=device)).float()[:, 0].tolist()
        return torch.log_softmax(logits.float(), dim=-1)[:, torch.tensor([3, 4], device=device)].tolist()
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    logits = model(
        input_ids=input_ids, attention_mask=mask, position_ids=positions, use_cache=False, logits_to_keep=1
    ).logits[:, -1, :]
    return torch.log_softmax(logits.float(), dim=-1)[:, torch.tensor([3, 4], device=device)].tolist()


# ----------------------------------------------------------------------------- measuring


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


def measure(model: Any, workload: Workload, batches: Sequence, device: str) -> tuple[float, int | None]:
    """Items per second over ``batches`` (after one warm-up batch) and the peak GPU memory."""
    import torch

    cuda = device.startswith("cuda")
    with torch.inference_mode():
        score_batch(model, workload, *batches[0], device)  # warm-up: first kernels of this shape
        if cuda:
            torch.cuda.reset_peak_memory_stats(device)
        _sync(device)
        started = time.perf_counter()
        scored = sum(len(score_batch(model, workload, *batch, device)) for batch in batches)
        _sync(device)
        elapsed = time.perf_counter() - started
    return scored / elapsed, (torch.cuda.max_memory_allocated(device) if cuda else None)


def batch_sizes(max_batch: int) -> list[int]:
    """1, 2, 4, ... up to ``max_batch`` (``max_batch`` itself last when it is not a power of two)."""
    if max_batch < 1:
        raise ValueError(f"max_batch must be >= 1, got {max_batch}")
    sizes = [1]
    while sizes[-1] * 2 <= max_batch:
        sizes.append(sizes[-1] * 2)
    return sizes if sizes[-1] == max_batch else [*sizes, max_batch]


def saturating_batch(throughputs: Mapping[int, float], tolerance: float = TOLERANCE) -> int:
    """The smallest batch size whose throughput is within ``tolerance`` of the best one."""
    if not throughputs:
        raise ValueError("no throughputs")
    best = max(throughputs.values())
    return min(b for b, rate in throughputs.items() if rate >= (1 - tolerance) * best)


def sweep(
    model: Any, workload: Workload, rows: Sequence, sizes: Sequence[int], depth: int, device: str
) -> dict[str, Any]:
    """Throughput and peak memory per batch size; stops at CUDA out-of-memory."""
    import torch
    from tqdm.auto import tqdm

    throughputs: dict[int, float] = {}
    peaks: dict[int, int | None] = {}
    oom_at = None
    pad_id = model.config.pad_token_id if model.config.pad_token_id is not None else model.config.eos_token_id
    for size in tqdm(sizes, desc=f"{workload.name} batch sizes", leave=False):
        try:
            rate, peak = measure(model, workload, make_batches(workload, rows, size, depth, pad_id), device)
        except torch.cuda.OutOfMemoryError:
            oom_at = size
        if oom_at is not None:
            gc.collect()
            torch.cuda.empty_cache()
            break
        throughputs[size], peaks[size] = rate, peak
    result: dict[str, Any] = {"throughput": throughputs, "peak_memory_bytes": peaks, "oom_at": oom_at}
    if throughputs:
        best = saturating_batch(throughputs)
        result |= {"saturating_batch": best, "speedup": throughputs[best] / throughputs[1]}
    return result


# ----------------------------------------------------------------------------- the full run


def prp_sliding_prompts(n: int, k: int) -> int:
    """PRP prompts per query of ``voirdire.rankers.llm.prp_rank(variant="sliding")``, at most.

    ``for done in range(min(k, n - 1))`` passes, each comparing positions ``n-2 .. done``
    (``n - 1 - done`` pairs), each comparison asking both orders: 2 * sum(n - 1 - p). The ledger
    skips an ordered pair already asked, so a query whose order barely changes asks fewer.
    """
    return 2 * sum(n - 1 - done for done in range(min(k, n - 1)))


def prp_allpairs_prompts(n: int) -> int:
    """PRP prompts per query of ``prp_rank(variant="allpairs")``: every ordered pair, n(n-1)."""
    return n * (n - 1)


def full_run_estimate(items: int, throughputs: Mapping[int, float], cap: int | None = None) -> dict[str, Any]:
    """Hours to score ``items`` at the saturating batch of ``throughputs`` (sizes <= ``cap`` only)."""
    usable = {b: rate for b, rate in throughputs.items() if cap is None or b <= cap}
    batch = saturating_batch(usable)
    rate = usable[batch]
    return {"items": items, "batch": batch, "items_per_s": rate, "hours": items / rate / 3600}


def estimate_rows(results: Mapping[str, Mapping], systems: int, queries: int, depth: int, k: int) -> list[dict]:
    """The full run per workload: hours at the saturating batch, and as the project batches.

    The project scores one query at a time, so a pointwise ranker's batches hold at most
    ``depth`` passages, and PRP's sliding window asks 2 prompts per call (one comparison, both
    orders); all-pairs PRP asks a query's n(n-1) prompts in one call.
    """
    plans = {
        "rankt5": [
            ("rankt5", systems * queries * depth, f"{systems} systems x {queries} queries x {depth} passages", depth)
        ],
        "rg": [("rg", systems * queries * depth, f"{systems} systems x {queries} queries x {depth} passages", depth)],
        "prp": [
            (
                "prp-sliding",
                prp_sliding_prompts(depth, k) * queries,
                f"{prp_sliding_prompts(depth, k)} prompts (sliding, k={k}, n={depth}) x {queries} queries",
                2,
            ),
            (
                "prp-allpairs",
                prp_allpairs_prompts(depth) * queries,
                f"{prp_allpairs_prompts(depth)} prompts (all pairs, n={depth}) x {queries} queries",
                None,
            ),
        ],
    }
    rows = []
    for workload, result in results.items():
        if not result["throughput"]:
            continue
        for name, items, formula, cap in plans[workload]:
            at_best = full_run_estimate(items, result["throughput"])
            as_run = full_run_estimate(items, result["throughput"], cap)
            rows.append(
                {
                    "name": name,
                    "workload": workload,
                    "formula": formula,
                    **at_best,
                    "project_cap": cap,
                    "project_batch": as_run["batch"],
                    "project_items_per_s": as_run["items_per_s"],
                    "project_hours": as_run["hours"],
                }
            )
    return rows


# ----------------------------------------------------------------------------- output


def gib(value: int | None) -> str:
    """Bytes as GiB (MiB below 1 GiB); "n/a" when there is no figure (CPU)."""
    if value is None:
        return "n/a"
    return f"{value / 2**30:.2f} GiB" if value >= 2**30 else f"{value / 2**20:.1f} MiB"


def report_workload(workload: Workload, result: Mapping[str, Any], cuda: bool) -> None:
    model, lengths = result["model"], result["lengths"]
    print(
        f"{workload.name:6s} {model['class']} ({model['size']}, {model['parameters'] / 1e6:,.1f}M params, "
        f"{gib(model['weight_bytes'])} weights) {model['dtype']} {model['device']}: {workload.what}; "
        f"{result['items']} items of {lengths['min']}-{lengths['max']} tokens (mean {lengths['mean']:.0f})"
    )
    for size, rate in result["throughput"].items():
        print(f"  batch {size:4d}: {rate:10.1f} items/s  peak {gib(result['peak_memory_bytes'][size])}")
    if result["oom_at"] is not None:
        print(f"  batch {result['oom_at']:4d}: CUDA out of memory (sweep stopped)")
    if not result["throughput"]:
        return
    best = result["saturating_batch"]
    target = (" (target >= 4x: " + ("met" if result["speedup"] >= 4 else "NOT met") + ")") if cuda else ""
    print(
        f"  one by one {result['throughput'][1]:.1f} items/s, batched {result['throughput'][best]:.1f} items/s "
        f"at saturating batch {best}: speed-up {result['speedup']:.2f}x per item{target}, "
        f"peak {gib(result['peak_memory_bytes'][best])}"
    )


def report_estimate(rows: Sequence[Mapping], queries: int, device: str, size: str) -> None:
    caveat = " -- tiny models: the arithmetic only, not a forecast" if size == "tiny" else ""
    print(
        f"estimate of the paper's full run on one {device} ({queries} queries; the paper's DL19 "
        f"{DL19_QUERIES} + DL20 {DL20_QUERIES} = {DL19_QUERIES + DL20_QUERIES}){caveat}:"
    )
    for row in rows:
        cap = "no cap" if row["project_cap"] is None else f"batch <= {row['project_cap']}"
        print(
            f"  {row['name']:12s} {row['formula']} = {row['items']:,} items: {row['hours']:8.2f} h at batch "
            f"{row['batch']} ({row['items_per_s']:.1f}/s); as the project batches ({cap}): "
            f"{row['project_hours']:8.2f} h at batch {row['project_batch']}"
        )


# ----------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--size", choices=SIZES, default=None, help="default: paper on CUDA, tiny elsewhere")
    parser.add_argument("--device", default=None, help="default: cuda when available, else cpu")
    parser.add_argument("--dtype", choices=DTYPES, default="auto", help="auto: bfloat16 on CUDA, float32 elsewhere")
    parser.add_argument("--items", type=int, default=None, help="items per batch size (default: 256 paper, 64 tiny)")
    parser.add_argument("--max-batch", type=int, default=None, help="default: 128 paper, 32 tiny")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--systems", type=int, default=PAPER_SYSTEMS)
    parser.add_argument("--queries", type=int, default=DL19_QUERIES + DL20_QUERIES)
    parser.add_argument("--depth", type=int, default=PAPER_DEPTH)
    parser.add_argument("--prp-k", type=int, default=PAPER_PRP_K)
    parser.add_argument("--json", type=Path, default=None, help="write every figure to this JSON file")
    args = parser.parse_args(argv)
    import torch

    args.device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    args.size = args.size or ("paper" if args.device.startswith("cuda") else "tiny")
    if args.dtype == "auto":
        args.dtype = "bfloat16" if args.device.startswith("cuda") else "float32"
    args.items = args.items or (256 if args.size == "paper" else 64)
    args.max_batch = args.max_batch or (128 if args.size == "paper" else 32)
    return args


def run_workloads(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Build each architecture once, sweep its workloads, free it before the next one."""
    import torch

    results: dict[str, dict[str, Any]] = {}
    for arch in ("t5", "llama"):
        model = build_model(arch, args.size, args.device, args.dtype, args.seed)
        for workload in (w for w in WORKLOADS if w.arch == arch):
            lengths = input_lengths(workload, args.items, args.seed)
            rows = token_rows(lengths, model.config, args.seed)
            result = {
                "workload": asdict(workload),
                "model": describe(model, args.size),
                "items": args.items,
                "lengths": {"min": min(lengths), "max": max(lengths), "mean": sum(lengths) / len(lengths)},
                **sweep(model, workload, rows, batch_sizes(args.max_batch), args.depth, args.device),
            }
            report_workload(workload, result, args.device.startswith("cuda"))
            results[workload.name] = result
        del model
        gc.collect()
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()
    return results


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    import torch
    import transformers

    results = run_workloads(args)
    rows = estimate_rows(results, args.systems, args.queries, args.depth, args.prp_k)
    report_estimate(rows, args.queries, args.device, args.size)
    gpu = torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else None
    figures = {
        "device": args.device,
        "gpu": gpu,
        "cpu": platform.processor() or platform.machine(),
        "dtype": args.dtype,
        "size": args.size,
        "items": args.items,
        "batch_sizes": batch_sizes(args.max_batch),
        "seed": args.seed,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "tolerance": TOLERANCE,
        "workloads": results,
        "estimate": {
            "systems": args.systems,
            "queries": args.queries,
            "depth": args.depth,
            "prp_k": args.prp_k,
            "rows": rows,
        },
    }
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return figures


if __name__ == "__main__":
    main()
