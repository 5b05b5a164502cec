"""bench/gpu_rankers.py on the CPU: tiny T5 and Llama built from configs, every JSON figure checked.

The benchmark runs once in this process with sockets blocked (and ``HF_HUB_OFFLINE=1``), so
building the models cannot touch the network; the checks read its ``--json`` output and
recompute what can be recomputed (saturating batch, speed-up, the estimate's arithmetic).
Timings are only printed: no assertion depends on how fast this machine is. The PRP prompt
count the estimate uses is checked against the project's own ``prp_rank``.
"""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from conftest import ROOT, load_bench, prp_shown

from voirdire.rankers.llm import prp_rank

SCRIPT = ROOT / "bench" / "gpu_rankers.py"
ARGS = ["--size", "tiny", "--device", "cpu", "--items", "12", "--max-batch", "4", "--seed", "3"]
SWEPT = [1, 2, 4]


bench = load_bench("gpu_rankers")


@pytest.fixture(scope="module")
def figures(tmp_path_factory) -> dict:
    """The benchmark's JSON, from one in-process tiny run on the CPU with the network cut off."""
    attempts: list[object] = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError("network access in a test")

    path = tmp_path_factory.mktemp("gpu-bench") / "figures.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", refuse)
        patch.setattr(socket, "create_connection", refuse)
        patch.setenv("HF_HUB_OFFLINE", "1")
        returned = bench.main([*ARGS, "--json", str(path)])
    assert attempts == []
    written = json.loads(path.read_text(encoding="utf-8"))
    assert written["workloads"].keys() == returned["workloads"].keys()
    return written


def test_every_workload_has_positive_throughputs_and_a_swept_saturating_batch(figures):
    assert figures["device"] == "cpu" and figures["dtype"] == "float32" and figures["size"] == "tiny"
    assert figures["batch_sizes"] == SWEPT
    assert set(figures["workloads"]) == {"rankt5", "prp", "rg"}
    for name, result in figures["workloads"].items():
        throughput = {int(b): rate for b, rate in result["throughput"].items()}
        assert sorted(throughput) == SWEPT, name
        assert all(math.isfinite(rate) and rate > 0 for rate in throughput.values()), name
        assert result["oom_at"] is None
        assert result["saturating_batch"] in SWEPT
        assert result["saturating_batch"] == bench.saturating_batch(throughput)
        assert result["speedup"] == pytest.approx(throughput[result["saturating_batch"]] / throughput[1])
        assert set(result["peak_memory_bytes"].values()) == {None}  # no GPU: "n/a"
        assert result["items"] == 12


def test_input_lengths_are_varied_and_within_the_documented_ranges(figures):
    ranges = {"rankt5": (48, 168), "prp": (133, 363), "rg": (77, 197)}
    for name, (low, high) in ranges.items():
        lengths = figures["workloads"][name]["lengths"]
        assert low <= lengths["min"] < lengths["max"] <= high, name  # padding is real: lengths differ
        assert lengths["min"] < lengths["mean"] < lengths["max"]


def test_estimate_arithmetic_recomputed_from_the_json(figures):
    estimate = figures["estimate"]
    assert (estimate["systems"], estimate["queries"], estimate["depth"], estimate["prp_k"]) == (14, 97, 100, 10)
    rows = {row["name"]: row for row in estimate["rows"]}
    assert set(rows) == {"rankt5", "rg", "prp-sliding", "prp-allpairs"}
    assert rows["rankt5"]["items"] == rows["rg"]["items"] == 14 * 97 * 100
    assert rows["prp-sliding"]["items"] == 1890 * 97
    assert rows["prp-allpairs"]["items"] == 9900 * 97
    caps = {"rankt5": 100, "rg": 100, "prp-sliding": 2, "prp-allpairs": None}
    for name, row in rows.items():
        throughput = {int(b): rate for b, rate in figures["workloads"][row["workload"]]["throughput"].items()}
        assert row["batch"] == figures["workloads"][row["workload"]]["saturating_batch"]
        assert row["items_per_s"] == throughput[row["batch"]]
        assert row["hours"] == pytest.approx(row["items"] / row["items_per_s"] / 3600, rel=1e-12)
        assert row["project_cap"] == caps[name]
        assert row["project_batch"] == bench.saturating_batch(
            {b: r for b, r in throughput.items() if caps[name] is None or b <= caps[name]}
        )
        assert row["project_items_per_s"] == throughput[row["project_batch"]]
        assert row["project_hours"] == pytest.approx(row["items"] / row["project_items_per_s"] / 3600, rel=1e-12)


def test_the_tiny_models_are_a_t5_encoder_decoder_and_a_llama_decoder(figures):
    models = {name: result["model"] for name, result in figures["workloads"].items()}
    for name in ("rankt5", "prp"):
        assert models[name]["class"] == "T5ForConditionalGeneration"
        assert (models[name]["model_type"], models[name]["is_encoder_decoder"]) == ("t5", True)
    assert models["rg"]["class"] == "LlamaForCausalLM"
    assert (models["rg"]["model_type"], models["rg"]["is_encoder_decoder"]) == ("llama", False)
    assert all(
        m["size"] == "tiny" and m["layers"] == 2 and m["dtype"] == "float32" and m["device"] == "cpu"
        for m in models.values()
    )

    from transformers import LlamaForCausalLM, T5ForConditionalGeneration

    t5 = bench.build_model("t5", "tiny", "cpu", "float32")
    llama = bench.build_model("llama", "tiny", "cpu", "float32")
    assert isinstance(t5, T5ForConditionalGeneration) and t5.config.is_gated_act
    assert t5.lm_head.weight is not t5.shared.weight  # FLAN-T5's own output matrix
    assert isinstance(llama, LlamaForCausalLM)
    assert llama.config.num_key_value_heads < llama.config.num_attention_heads  # grouped queries, as Llama 3


def _t5_parameters(c) -> int:
    """FLAN-T5's parameter count from its config: embeddings + untied head, gated FFN, 2 stacks."""
    inner, ffn = c.num_heads * c.d_kv, 3 * c.d_model * c.d_ff
    encoder = c.num_layers * (4 * c.d_model * inner + ffn + 2 * c.d_model)
    decoder = c.num_decoder_layers * (8 * c.d_model * inner + ffn + 3 * c.d_model)
    bias = 2 * c.relative_attention_num_buckets * c.num_heads
    return 2 * c.vocab_size * c.d_model + encoder + decoder + bias + 2 * c.d_model


def test_paper_configs_are_the_published_models_sizes():
    """Built on the meta device (no memory): Llama-3-8B's 8,030,261,248 parameters, FLAN-T5-XXL's 11.1B."""
    t5 = bench.describe(bench.build_model("t5", "paper", "meta", "bfloat16"), "paper")
    assert t5["parameters"] == _t5_parameters(bench.t5_config("paper")) == 11_135_332_352
    assert t5["weight_bytes"] == 2 * t5["parameters"]  # bf16
    llama = bench.describe(bench.build_model("llama", "paper", "meta", "bfloat16"), "paper")
    assert llama["parameters"] == 8_030_261_248
    assert (llama["layers"], llama["hidden"], llama["vocab_size"]) == (32, 4096, 128256)


# ----------------------------------------------------------------------------- pure helpers


def test_saturating_batch_with_planted_throughputs():
    assert bench.saturating_batch({1: 10.0, 2: 19.0, 4: 35.0, 8: 60.0, 16: 62.0, 32: 61.0}) == 8
    assert bench.saturating_batch({1: 1.0, 2: 2.0, 4: 4.0, 8: 8.0}) == 8  # monotonic: the largest
    assert bench.saturating_batch({1: 100.0, 2: 50.0}) == 1
    assert bench.saturating_batch({1: 10.0, 2: 90.0, 4: 100.0}) == 2  # exactly 10% below the best
    assert bench.saturating_batch({1: 10.0, 2: 89.9, 4: 100.0}) == 4
    with pytest.raises(ValueError):
        bench.saturating_batch({})


def test_batch_sizes_and_full_run_estimate():
    assert bench.batch_sizes(1) == [1]
    assert bench.batch_sizes(8) == [1, 2, 4, 8]
    assert bench.batch_sizes(12) == [1, 2, 4, 8, 12]
    with pytest.raises(ValueError):
        bench.batch_sizes(0)
    rates = {1: 10.0, 2: 50.0, 4: 100.0, 8: 104.0}
    assert bench.full_run_estimate(360_000, rates) == {"items": 360_000, "batch": 4, "items_per_s": 100.0, "hours": 1.0}
    assert bench.full_run_estimate(360_000, rates, cap=2)["hours"] == pytest.approx(2.0)
    assert bench.full_run_estimate(360_000, rates, cap=1)["batch"] == 1


def test_batch_order_and_padding():
    lengths = [3, 5, 4, 1, 2, 6]
    assert bench.batch_order(lengths, depth=3, sort_per_query=False) == [0, 1, 2, 3, 4, 5]
    assert bench.batch_order(lengths, depth=3, sort_per_query=True) == [1, 2, 0, 5, 4, 3]  # per query
    ids, mask = bench.pad([[7, 8, 9], [5]], pad_id=0, left=False)
    assert ids.tolist() == [[7, 8, 9], [5, 0, 0]] and mask.tolist() == [[1, 1, 1], [1, 0, 0]]
    ids, mask = bench.pad([[7, 8, 9], [5]], pad_id=0, left=True)
    assert ids.tolist() == [[7, 8, 9], [0, 0, 5]] and mask.tolist() == [[1, 1, 1], [0, 0, 1]]
    t5 = bench.t5_config("tiny")
    rows = bench.token_rows([4, 6], t5, seed=0)
    assert [len(r) for r in rows] == [4, 6] and all(r[-1] == t5.eos_token_id for r in rows)
    assert all(3 <= t < t5.vocab_size for r in rows for t in r[:-1])
    llama = bench.llama_config("tiny")
    assert all(r[0] == llama.bos_token_id for r in bench.token_rows([4, 6], llama, seed=0))


class RankedBackend:
    """PRP answers from a hidden ranking: the better-ranked passage wins in both orders."""

    def __init__(self, passages, ranking):
        self.rank = {passages[p]: r for r, p in enumerate(ranking)}

    def preferences(self, conversations, items=None):
        out = []
        for conversation in conversations:
            a, b = prp_shown(conversation)
            out.append("A" if self.rank[a] < self.rank[b] else "B")
        return out


class FirstShownBackend:
    def preferences(self, conversations, items=None):
        return ["A"] * len(conversations)


@pytest.mark.parametrize(("n", "k"), [(5, 1), (5, 3), (6, 10), (12, 4)])
def test_prp_prompt_counts_match_the_projects_prp_rank(n, k):
    passages = [f"p{i}" for i in range(n)]
    # the best passage last: every pass carries a new winner up, so no ordered pair repeats
    worst_first = RankedBackend(passages, list(range(n))[::-1])
    _, ledger = prp_rank(worst_first, "q", passages, variant="sliding", k=k)
    assert len(ledger.answers) == bench.prp_sliding_prompts(n, k)
    # an order-dependent judge swaps nothing: later passes re-ask known pairs, which are skipped
    _, ledger = prp_rank(FirstShownBackend(), "q", passages, variant="sliding", k=k)
    assert len(ledger.answers) == 2 * (n - 1) <= bench.prp_sliding_prompts(n, k)
    _, ledger = prp_rank(worst_first, "q", passages, variant="allpairs")
    assert len(ledger.answers) == bench.prp_allpairs_prompts(n)
    assert bench.prp_sliding_prompts(100, 10) == 1890 and bench.prp_allpairs_prompts(100) == 9900


def test_the_command_line_prints_every_workload_and_the_estimate(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TQDM_DISABLE": "1"}
    path = tmp_path / "cli.json"
    result = subprocess.run(
        [sys.executable, str(SCRIPT), *ARGS, "--max-batch", "2", "--json", str(path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for name, cls in [
        ("rankt5", "T5ForConditionalGeneration"),
        ("prp", "T5ForConditionalGeneration"),
        ("rg", "LlamaForCausalLM"),
    ]:
        assert any(line.startswith(f"{name} ") and cls in line for line in lines), result.stdout
    assert sum("saturating batch" in line for line in lines) == 3
    assert any(line.startswith("estimate of the paper's full run") and "97 queries" in line for line in lines)
    assert json.loads(path.read_text())["batch_sizes"] == [1, 2]
