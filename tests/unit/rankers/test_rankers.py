"""RG and PRP: hand-made preference tables, the local model (real SmolLM2), the litellm path
against a real loopback server speaking the OpenAI protocol with logprobs."""

import json
import math

import pytest
from conftest import LOOPBACK_KEY, prp_shown
from support.loopback import LoopbackServer, choice_for, yes_probability_for

from voirdire.llm import Endpoint
from voirdire.rankers.api import LiteLLMBackend, parse_choice, yes_no_from_top_logprobs
from voirdire.rankers.llm import (
    PRP_PROMPT,
    LogitsBackend,
    PairwiseLedger,
    p_yes,
    prp_allpairs,
    prp_rank,
    rg_messages,
)
from voirdire.rankers.rerank import load_checkpoint, rerank_all, total_bias
from voirdire.systems import Ranker


class TableBackend:
    """Answers PRP prompts from a hand-made table: (first shown, second shown) -> 'A' | 'B'."""

    def __init__(self, passages, table):
        self.index = {p: i for i, p in enumerate(passages)}
        self.table = table
        self.asked = []

    def preferences(self, conversations, items=None):
        out = []
        for conversation in conversations:
            a, b = prp_shown(conversation)
            pair = (self.index[a], self.index[b])
            self.asked.append(pair)
            out.append(self.table[pair])
        return out


def consistent(order):
    """A table where the passage earlier in `order` wins in both presentation orders."""
    rank = {p: r for r, p in enumerate(order)}
    return {(i, j): "A" if rank[i] < rank[j] else "B" for i in order for j in order if i != j}


PASSAGES = ["p0", "p1", "p2", "p3"]


def test_allpairs_hand_computed_points_with_an_order_dependent_pair():
    table = consistent([2, 0, 3, 1])
    table[(0, 3)] = table[(3, 0)] = "A"  # the first shown always wins: order-dependent
    order, ledger = prp_rank(TableBackend(PASSAGES, table), "q", PASSAGES, variant="allpairs")
    # points: 2 -> 3; 0 -> 1 (beats 1) + 0.5 = 1.5; 3 -> 1 (beats 1) + 0.5 = 1.5; 1 -> 0
    # 0 and 3 tie at 1.5: input order keeps 0 first
    assert order == [2, 0, 3, 1]
    bias = ledger.bias()
    # a consistent pair has one 'A' in its two prompts; the order-dependent pair has two
    assert bias == {
        "prompts": 12,
        "pairs": 6,
        "order_dependent": 1,
        "first_position_wins": 5 * 1 + 2,
        "answered": 12,
        "unparsed": 0,
        "answered_both": 6,
        "surviving": 5,
    }


def test_sliding_window_bubbles_the_best_to_the_top_in_k_passes():
    table = consistent([3, 1, 2, 0])
    order, _ = prp_rank(TableBackend(PASSAGES, table), "q", PASSAGES, variant="sliding", k=1)
    assert order[0] == 3  # one pass from the bottom brings the best to the top
    order, _ = prp_rank(TableBackend(PASSAGES, table), "q", PASSAGES, variant="sliding", k=3)
    assert order == [3, 1, 2, 0]


def test_heap_top_k_then_the_rest_in_input_order():
    table = consistent([3, 1, 2, 0])
    order, ledger = prp_rank(TableBackend(PASSAGES, table), "q", PASSAGES, variant="heap", k=2)
    assert order == [3, 1, 0, 2]
    many = [f"p{i}" for i in range(16)]
    truth = list(range(16))[::-1]
    order, ledger = prp_rank(TableBackend(many, consistent(truth)), "q", many, variant="heap", k=3)
    assert order[:3] == truth[:3]
    assert len(ledger.answers) < 16 * 15 / 2  # well under all-pairs' 240 prompts


def test_every_pair_asked_once_per_order_and_unknown_variant():
    backend = TableBackend(PASSAGES, consistent([0, 1, 2, 3]))
    prp_rank(backend, "q", PASSAGES, variant="sliding", k=3)
    assert len(backend.asked) == len(set(backend.asked))
    with pytest.raises(ValueError, match="unknown PRP variant"):
        prp_rank(backend, "q", PASSAGES, variant="bubble")


def test_small_pieces():
    assert p_yes(math.log(0.2), math.log(0.6)) == pytest.approx(0.25)
    assert p_yes(-math.inf, -math.inf) == 0.5
    assert [parse_choice(t) for t in ["Passage A", "passage b.", "B", "A or B", "Neither", None]] == [
        "A",
        "B",
        "B",
        None,
        None,
        None,
    ]
    assert yes_no_from_top_logprobs([{"token": " Yes", "logprob": -0.1}, {"token": "no", "logprob": -2}]) == (-0.1, -2)
    ledger = PairwiseLedger({(0, 1): "A", (1, 0): "B"})
    assert prp_allpairs(ledger, 2) == [0, 1]


# ----------------------------------------------------------------------------- the real local model


@pytest.mark.local_llm
def test_local_rg_and_prp_batched_equal_one_by_one_and_deterministic():
    passages = [
        "Osmosis moves water across a membrane.",
        "Cats sleep a lot.",
        "The Titanic sank in April 1912 after hitting an iceberg in the North Atlantic.",
        "Water, membranes, osmosis and diffusion are covered in chapter 3 of the book.",
    ]
    conversations = [rg_messages("what is osmosis", p) for p in passages]
    batched = LogitsBackend("local/smollm2-135m", batch_size=4).yes_probabilities(conversations)
    single = LogitsBackend("local/smollm2-135m", batch_size=1).yes_probabilities(conversations)
    assert batched == pytest.approx(single, abs=1e-4)
    assert all(0 < p < 1 for p in batched) and len(set(batched)) == len(batched)
    first = prp_rank(LogitsBackend("local/smollm2-135m", batch_size=4), "what is osmosis", passages, variant="allpairs")
    second = prp_rank(
        LogitsBackend("local/smollm2-135m", batch_size=1), "what is osmosis", passages, variant="allpairs"
    )
    assert first[0] == second[0] and first[1].answers == second[1].answers


# ----------------------------------------------------------------------------- litellm, loopback


def test_litellm_backend_reads_logprobs_and_answers_and_caches(tmp_path, monkeypatch):
    monkeypatch.setenv("VOIRDIRE_TEST_KEY", LOOPBACK_KEY)
    with LoopbackServer() as server:
        endpoint = Endpoint("openai/served", api_base=server.url, api_key_env="VOIRDIRE_TEST_KEY")
        backend = LiteLLMBackend(endpoint=endpoint, store_path=tmp_path / "r.sqlite", ranker="r")
        conversations = [rg_messages("q", f"passage {i}") for i in range(6)]
        probabilities = backend.yes_probabilities(conversations)
        expected = [yes_probability_for(c[0]["content"]) for c in conversations]
        assert probabilities == pytest.approx(expected, abs=1e-9)
        prompts = [[{"role": "user", "content": PRP_PROMPT.format(query="q", a=f"x{i}", b=f"y{i}")}] for i in range(6)]
        assert backend.preferences(prompts) == [choice_for(p[0]["content"]) for p in prompts]
        calls = len(server.log)
        backend.yes_probabilities(conversations)
        backend.preferences(prompts)
        assert len(server.log) == calls == 12  # the store answers the second time


def test_rerank_all_resumes_from_its_checkpoint(tmp_path, monkeypatch):
    monkeypatch.setenv("VOIRDIRE_TEST_KEY", LOOPBACK_KEY)
    pools = {f"q{i}": [f"d{i}{j}" for j in range(5)] for i in range(4)}
    texts = {d: f"text of {d}" for docs in pools.values() for d in docs}
    topics = {q: f"query {q}" for q in pools}
    with LoopbackServer() as server:
        ranker = Ranker(
            name="prp-api",
            method="prp",
            model="openai/served",
            backend="litellm",
            variant="allpairs",
            endpoint=Endpoint("openai/served", api_base=server.url, api_key_env="VOIRDIRE_TEST_KEY"),
        )
        checkpoint = tmp_path / "ckpt.jsonl"
        first = rerank_all(
            ranker, {"q0": pools["q0"]}, topics, texts, checkpoint, store_path=tmp_path / "a.sqlite", progress=False
        )
        with checkpoint.open("a") as fh:
            fh.write('{"query_id": "q1", "rank')  # a write torn by kill -9
        assert set(load_checkpoint(checkpoint)) == {"q0"}
        calls = len(server.log)
        records = rerank_all(ranker, pools, topics, texts, checkpoint, store_path=tmp_path / "b.sqlite", progress=False)
        assert len(server.log) - calls == 3 * 20  # q1..q3 only, 5*4 ordered pairs each
    assert records["q0"] == first["q0"]
    assert sorted(records) == sorted(pools)
    bias = total_bias(records.values())
    assert bias["pairs"] == 4 * 10 and 0 <= bias["order_dependent_rate"] <= 1
    assert json.loads(checkpoint.read_text().splitlines()[-1])["query_id"] in pools


def test_rg_through_an_api_without_logprobs_is_an_error_not_a_coin_flip(tmp_path, monkeypatch):
    monkeypatch.setenv("VOIRDIRE_TEST_KEY", LOOPBACK_KEY)
    with LoopbackServer() as server:
        endpoint = Endpoint("openai/served", api_base=server.url, api_key_env="VOIRDIRE_TEST_KEY")
        backend = LiteLLMBackend(endpoint=endpoint, store_path=tmp_path / "r.sqlite", ranker="r", top_logprobs=0)
        with pytest.raises(ValueError, match="returned no top_logprobs"):
            backend.yes_probabilities([rg_messages("q", "p")])
