"""RankT5 / monoT5 scoring on a tiny T5 built offline: real torch computation, no mocks.

The fixture trains a small SentencePiece model on generated English-like text, wraps it as a
T5 tokenizer (100 sentinel tokens, so ``<extra_id_10>`` exists), builds a randomly initialised
two-layer T5 (seed 0) and saves both into a temporary directory, which the scorer loads like any
checkpoint. Nothing is downloaded.
"""

from __future__ import annotations

import math
import os
import random
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
spm = pytest.importorskip("sentencepiece")

from transformers import T5Config, T5ForConditionalGeneration, T5Tokenizer  # noqa: E402

from voirdire.rankers import t5  # noqa: E402
from voirdire.rankers.t5 import T5Scorer  # noqa: E402

WORDS = (
    "the a an of to and in is was for on with as by at from that this which what how why when "
    "where who river bank money city water science history music computer network search "
    "engine rank judge model data law court health disease treatment cause symptom weather "
    "climate ocean mountain forest animal plant energy power price market company school "
    "student teacher book story film game team player year day time people world country "
    "state government war peace language word number answer question passage document query "
    "relevant true false yes no good bad new old first last long short high low large small"
).split()

QUERY = "what causes high blood pressure"


def _sentences(rng: random.Random, n: int) -> list[str]:
    lines = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(4, 18))]
        lines.append(" ".join(words).capitalize() + rng.choice([".", "?", "!", ",", ";"]))
    return lines


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory) -> Path:
    """A tiny T5 (tokenizer + weights) saved the way Hugging Face checkpoints are."""
    root = tmp_path_factory.mktemp("tiny-t5")
    rng = random.Random(0)
    lines = _sentences(rng, 400)
    # the prompt words, the monoT5 targets and some digits/capitals, so nothing is <unk>
    lines += [f"Query: {s} Document: {t} Relevant: true" for s, t in zip(lines[:60], lines[60:120])]
    lines += [f"Query: {s} Document: {t} Relevant: false" for s, t in zip(lines[120:180], lines[180:240])]
    lines += ["0 1 2 3 4 5 6 7 8 9 ABCDEFGHIJKLMNOPQRSTUVWXYZ ( ) - ' \""] * 5
    corpus = root / "corpus.txt"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")

    spm_dir = root / "spm"
    spm_dir.mkdir()
    spm.SentencePieceTrainer.train(
        input=str(corpus),
        model_prefix=str(spm_dir / "spiece"),
        vocab_size=300,
        hard_vocab_limit=False,  # a soft cap: the small corpus decides the exact size
        model_type="unigram",
        character_coverage=1.0,
        pad_id=0,
        eos_id=1,
        unk_id=2,
        bos_id=-1,
        minloglevel=2,
    )
    # transformers 5: T5Tokenizer(vocab_file=...) ignores the file; from_pretrained converts it
    tokenizer = T5Tokenizer.from_pretrained(str(spm_dir), extra_ids=100)
    assert (tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id) == (0, 1, 2)
    for token in ("true", "false", "<extra_id_10>"):
        ids = tokenizer.encode(token, add_special_tokens=False)
        assert len(ids) == 1 and ids[0] != tokenizer.unk_token_id, (token, ids)
    assert tokenizer.unk_token_id not in tokenizer.encode(
        t5.format_input("monot5", QUERY, "Blood pressure rises with salt."),
    )

    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=2,
        d_kv=16,
        decoder_start_token_id=tokenizer.pad_token_id,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(config)
    out = root / "model"
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def raw(model_dir):
    """The same checkpoint loaded directly, for independent computation in the tests."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = T5ForConditionalGeneration.from_pretrained(model_dir, dtype=torch.float32).eval()
    return model, tokenizer


def _first_step_logits(raw, text: str, max_length: int = 512):
    model, tokenizer = raw
    enc = tokenizer(text, truncation=True, max_length=max_length, return_tensors="pt")
    start = torch.tensor([[model.config.decoder_start_token_id]])
    with torch.no_grad():
        out = model(**enc, decoder_input_ids=start)
    return out.logits[0, 0]


def _passages(rng: random.Random) -> list[str]:
    """Seven passages of very different lengths, in increasing length (1 to ~400 words)."""
    sizes = [1, 3, 12, 40, 90, 200, 400]
    return [" ".join(rng.choice(WORDS) for _ in range(n)) for n in sizes]


PASSAGES = _passages(random.Random(1))


@pytest.mark.parametrize("kind", ["rankt5", "monot5"])
def test_batched_scores_equal_one_by_one(model_dir, kind):
    batched = T5Scorer(model=str(model_dir), kind=kind, batch_size=3, device="cpu").score(QUERY, PASSAGES)
    single = T5Scorer(model=str(model_dir), kind=kind, batch_size=1, device="cpu")
    one_by_one = [single.score(QUERY, [p])[0] for p in PASSAGES]
    assert len(batched) == len(PASSAGES)
    assert batched == pytest.approx(one_by_one, abs=1e-4)
    # a random model still tells these passages apart, so the comparison means something
    assert len({round(s, 5) for s in batched}) == len(PASSAGES)


@pytest.mark.parametrize("kind", ["rankt5", "monot5"])
def test_order_is_restored(model_dir, kind):
    """Inputs are scored longest-first internally; results come back in input order."""
    scorer = T5Scorer(model=str(model_dir), kind=kind, batch_size=2, device="cpu")
    rng = random.Random(7)
    perm = list(range(len(PASSAGES)))
    rng.shuffle(perm)
    base = scorer.score(QUERY, PASSAGES)
    shuffled = scorer.score(QUERY, [PASSAGES[i] for i in perm])
    assert shuffled == pytest.approx([base[i] for i in perm], abs=1e-4)
    # score_pairs with mixed queries matches per-query score()
    other = "who won the war"
    pairs = [(QUERY if j % 2 else other, p) for j, p in enumerate(PASSAGES)]
    mixed = scorer.score_pairs(pairs)
    expected = [scorer.score(q, [p])[0] for q, p in pairs]
    assert mixed == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize("kind", ["rankt5", "monot5"])
def test_deterministic_across_scorers_and_reloads(model_dir, kind):
    first = T5Scorer(model=str(model_dir), kind=kind, batch_size=3).score(QUERY, PASSAGES)
    second = T5Scorer(model=str(model_dir), kind=kind, batch_size=3).score(QUERY, PASSAGES)
    assert first == second
    t5.clear_cache()
    reloaded = T5Scorer(model=str(model_dir), kind=kind, batch_size=3).score(QUERY, PASSAGES)
    assert reloaded == first


def test_monot5_is_true_logprob_against_false(model_dir, raw):
    _, tokenizer = raw
    scorer = T5Scorer(model=str(model_dir), kind="monot5", batch_size=4, device="cpu")
    scores = scorer.score(QUERY, PASSAGES)
    assert all(s <= 0.0 for s in scores)
    true_id = tokenizer.encode("true", add_special_tokens=False)[0]
    false_id = tokenizer.encode("false", add_special_tokens=False)[0]
    for passage, score in zip(PASSAGES[:3], scores[:3], strict=True):
        text = f"Query: {QUERY} Document: {passage} Relevant:"
        logits = _first_step_logits(raw, text)
        pair = torch.stack([logits[true_id], logits[false_id]])
        lp_true, lp_false = torch.log_softmax(pair, dim=0).tolist()
        assert score == pytest.approx(lp_true, abs=1e-5)
        assert math.exp(score) + math.exp(lp_false) == pytest.approx(1.0, abs=1e-5)


def test_rankt5_is_raw_extra_id_10_logit(model_dir, raw):
    _, tokenizer = raw
    scorer = T5Scorer(model=str(model_dir), kind="rankt5", batch_size=4, device="cpu")
    scores = scorer.score(QUERY, PASSAGES)
    token = tokenizer.convert_tokens_to_ids("<extra_id_10>")
    for passage, score in zip(PASSAGES[:3], scores[:3], strict=True):
        logits = _first_step_logits(raw, f"Query: {QUERY} Document: {passage}")
        assert score == pytest.approx(float(logits[token]), abs=1e-5)
    # the override reads another token's logit
    other = T5Scorer(model=str(model_dir), kind="rankt5", device="cpu", score_token="<extra_id_3>").score(
        QUERY, PASSAGES[:1]
    )[0]
    logits = _first_step_logits(raw, f"Query: {QUERY} Document: {PASSAGES[0]}")
    assert other == pytest.approx(float(logits[tokenizer.convert_tokens_to_ids("<extra_id_3>")]), abs=1e-5)


def test_truncation_scores_the_truncated_text(model_dir, raw):
    _, tokenizer = raw
    rng = random.Random(3)
    words = [rng.choice(WORDS) for _ in range(1500)]
    head = " ".join(words[:30])
    long_passage = " ".join(words)
    # max_length is exactly the length of the head's input (with </s>), so truncating the long
    # passage's input keeps the head's tokens and re-appends </s>: the same ids as the head alone
    length = len(tokenizer(t5.format_input("rankt5", QUERY, head))["input_ids"])
    truncated = tokenizer(t5.format_input("rankt5", QUERY, long_passage), truncation=True, max_length=length)[
        "input_ids"
    ]
    assert truncated == tokenizer(t5.format_input("rankt5", QUERY, head))["input_ids"]

    short = T5Scorer(model=str(model_dir), kind="rankt5", max_length=length, device="cpu")
    full = T5Scorer(model=str(model_dir), kind="rankt5", device="cpu")
    got = short.score(QUERY, [long_passage, head])
    assert got[0] == pytest.approx(got[1], abs=1e-5)
    assert got[0] == pytest.approx(full.score(QUERY, [head])[0], abs=1e-4)

    # the default max_length (512) truncates a ~1500-word passage without error, for both kinds
    for kind in ("rankt5", "monot5"):
        scorer = T5Scorer(model=str(model_dir), kind=kind, device="cpu")
        [score_long] = scorer.score(QUERY, [long_passage])
        assert math.isfinite(score_long)
        logits = _first_step_logits(raw, t5.format_input(kind, QUERY, long_passage), 512)
        if kind == "rankt5":
            expected = float(logits[tokenizer.convert_tokens_to_ids("<extra_id_10>")])
        else:
            ids = [tokenizer.encode(w, add_special_tokens=False)[0] for w in ("true", "false")]
            expected = torch.log_softmax(logits[ids], dim=0)[0].item()
        assert score_long == pytest.approx(expected, abs=1e-4)


def test_empty_input_and_validation(model_dir):
    assert T5Scorer(model=str(model_dir), kind="monot5").score(QUERY, []) == []
    assert T5Scorer(model=str(model_dir), kind="rankt5").score_pairs([]) == []
    with pytest.raises(ValueError, match="kind"):
        T5Scorer(model=str(model_dir), kind="duot5")
    with pytest.raises(ValueError, match="dtype"):
        T5Scorer(model=str(model_dir), kind="monot5", dtype="int8")
    with pytest.raises(ValueError, match="batch_size"):
        T5Scorer(model=str(model_dir), kind="monot5", batch_size=0)
    with pytest.raises(ValueError, match="score_token"):
        T5Scorer(model=str(model_dir), kind="monot5", score_token="<extra_id_10>")


def test_dtype_and_device_resolution():
    assert t5.resolve_dtype("auto", "cuda") == "bfloat16"
    assert t5.resolve_dtype("auto", "cuda:1") == "bfloat16"
    assert t5.resolve_dtype("auto", "cpu") == "float32"
    assert t5.resolve_dtype("float16", "cpu") == "float16"
    assert t5.resolve_device("cpu") == "cpu"
    assert t5.resolve_device(None) == ("cuda" if torch.cuda.is_available() else "cpu")


def test_bfloat16_on_cpu_runs(model_dir):
    """The half-precision path (what CUDA uses by default) computes finite, close scores."""
    f32 = T5Scorer(model=str(model_dir), kind="monot5", device="cpu").score(QUERY, PASSAGES[:3])
    bf16 = T5Scorer(model=str(model_dir), kind="monot5", device="cpu", dtype="bfloat16").score(QUERY, PASSAGES[:3])
    assert all(math.isfinite(s) and s <= 0 for s in bf16)
    assert bf16 == pytest.approx(f32, abs=0.1)


def test_encoder_decoder_logits_path_for_flan_style_rg_and_prp(model_dir):
    """FLAN-T5/UL2 RG and PRP read the first decoder step; batched equals one by one and
    equals the raw model's log-softmax computed here."""
    import torch

    from voirdire.rankers import causal

    conversations = [
        [{"role": "user", "content": text}]
        for text in ["true or false: the sky", "a much longer question about rivers and the sea " * 5, "short"]
    ]
    batched = causal.candidate_logprobs(str(model_dir), conversations, ["true", "false"], batch_size=3)
    single = causal.candidate_logprobs(str(model_dir), conversations, ["true", "false"], batch_size=1)
    for b, s in zip(batched, single, strict=True):
        assert b == pytest.approx(s, abs=1e-4)
    model, tokenizer = causal.load(str(model_dir))
    encoded = tokenizer(conversations[0][0]["content"], return_tensors="pt")
    start = torch.tensor([[model.config.decoder_start_token_id]])
    with torch.inference_mode():
        logits = model(**encoded, decoder_input_ids=start).logits[0, 0]
    expected = torch.log_softmax(logits, -1)[tokenizer.encode("true", add_special_tokens=False)[0]].item()
    assert batched[0]["true"] == pytest.approx(expected, abs=1e-5)


def test_rerank_query_orders_the_head_by_t5_score_and_keeps_the_tail(model_dir):
    from voirdire.rankers.rerank import backend_for, rerank_query
    from voirdire.systems import Ranker

    ranker = Ranker(name="mono", method="monot5", model=str(model_dir), depth=4, batch_size=2)
    backend = backend_for(ranker)
    texts = {f"d{i}": f"passage number {i} about rivers " * (i + 1) for i in range(6)}
    docids = list(texts)
    ranking, bias = rerank_query(ranker, backend, "rivers", docids, texts)
    scores = backend.score("rivers", [texts[d] for d in docids[:4]])
    assert ranking[:4] == [docids[i] for i in sorted(range(4), key=lambda i: (-scores[i], i))]
    assert ranking[4:] == docids[4:] and bias is None
