"""The plan prices every call directly and through the batch API, and the cost ledger sets what
each judge was planned to cost beside what its stores say it spent: one judge judging through
batches and one directly, against the loopback server (tests/support/batches.py)."""

import copy

import pandas as pd
import pytest
from support.batches import BatchLoopback
from support.judging import judging_job

from voirdire.config import check, validate_schema
from voirdire.formats import atomic_write, write_topics
from voirdire.layout import Layout
from voirdire.llm import Store, count_tokens, estimated_cost
from voirdire.llm.batch import batch_prices, estimated_batch_cost
from voirdire.llm.calls import _litellm, token_cost
from voirdire.llm.ledger import LEDGER_COLUMNS, ledger_notes, spent_by_caller
from voirdire.llm_judge.tasks import judge_calls
from voirdire.output import write_table
from voirdire.plan import ledger_rows, plan_rows

MODEL = "openai/gpt-4o-mini"  # priced in litellm's cost map, batch prices included
TOPICS = {"1": "cats and their whiskers", "2": "dogs that bark at night"}
TEXTS = {f"d{i}": f"passage {i} tells of {'cats' if i % 2 else 'dogs'} in some detail" for i in range(12)}
PAIRS = pd.DataFrame({"query_id": ["1" if i % 2 else "2" for i in range(12)], "doc_id": list(TEXTS)})


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("VOIRDIRE_LEDGER_KEY", "sk-ledger-test")


def a_plan(tmp_path, write, url, judges=None):
    """A checked config of one local dataset and two judges of one model: one batching, one direct
    (or ``judges``), with the dataset's pool inputs in place (as the workflow's BM25 stage leaves them)."""
    corpus = "".join(f'{{"id": "{d}", "contents": "{t}"}}\n' for d, t in TEXTS.items())
    qrels = "".join(f"{q} 0 {d} 1\n" for q, d in PAIRS.itertuples(index=False))
    dataset = {
        "source": "local",
        "topics": str(write("t.tsv", "".join(f"{q}\t{t}\n" for q, t in TOPICS.items()))),
        "qrels": str(write("q.txt", qrels)),
        "corpus": str(write("c.jsonl", corpus)),
    }
    judge = {"kind": "llm", "model": MODEL, "api_base": url, "api_key_env": "VOIRDIRE_LEDGER_KEY"}
    config = {
        "results": str(tmp_path / "results"),
        "datasets": {"toy": dataset},
        "systems": ["BM25", "Perfect"],
        "judges": judges
        or [
            {**judge, "name": "batched", "batch": {"poll_s": 0.05, "timeout_s": 30}},
            {**judge, "name": "direct"},
        ],
    }
    plan = check(validate_schema(copy.deepcopy(config)))
    layout = Layout(plan.config["results"])
    for path in (layout.pairs("toy", "original"), layout.passages("toy"), layout.topics("toy")):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    PAIRS.to_csv(layout.pairs("toy", "original"), sep="\t", index=False)
    with atomic_write(layout.passages("toy"), "wb") as fh:
        pd.DataFrame({"doc_id": list(TEXTS), "text": list(TEXTS.values())}).to_parquet(fh, index=False)
    write_topics(TOPICS, layout.topics("toy"))
    return plan, layout


def judge_it(plan, layout, name, tmp_path):
    return judging_job(
        plan.judge("toy", name),
        tmp_path,
        name,
        pairs=PAIRS,
        texts=TEXTS,
        topics=TOPICS,
        store_path=layout.store("toy", "original", name),
    )


def test_the_plan_prices_each_judges_calls_directly_and_in_a_batch(tmp_path, write):
    with BatchLoopback() as server:
        plan, _ = a_plan(tmp_path, write, server.url)
    rows = plan_rows(plan).set_index("judge")
    assert rows.loc["batched", "batch"] and not rows.loc["direct", "batch"]
    litellm = _litellm()
    prices = batch_prices(litellm, MODEL)
    for judge in ("batched", "direct"):
        row = rows.loc[judge]
        tokens = (row["est_prompt_tokens"], row["est_completion_tokens_max"])
        assert row["est_cost_usd_max"] == pytest.approx(token_cost(litellm, MODEL, *tokens))
        assert row["est_cost_usd_max_batch"] == pytest.approx(tokens[0] * prices[0] + tokens[1] * prices[1])
        assert 0 < row["est_cost_usd_max_batch"] < row["est_cost_usd_max"] and row["batch_price"] == "cost map"


def test_a_model_without_a_batch_price_is_priced_at_half_its_direct_price_and_says_so():
    litellm = _litellm()
    unbatched = next(
        name
        for name, info in litellm.model_cost.items()
        if isinstance(info, dict)
        and info.get("mode") == "chat"
        and info.get("input_cost_per_token")
        and info.get("output_cost_per_token")
        and "input_cost_per_token_batches" not in info
        and estimated_cost(name, 1000, 100)
    )
    cost, assumed = estimated_batch_cost(unbatched, 1000, 100)
    assert assumed and cost == pytest.approx(estimated_cost(unbatched, 1000, 100) / 2)
    assert estimated_batch_cost(MODEL, 1000, 100)[1] is False
    assert estimated_batch_cost("local/smollm2-135m", 1000, 100) == (0.0, False)
    assert estimated_batch_cost("openai/no-such-model-anywhere", 1000, 100) == (None, False)


def test_the_ledger_sets_the_planned_cost_beside_what_the_stores_say_was_spent(tmp_path, write):
    with BatchLoopback() as server:
        plan, layout = a_plan(tmp_path, write, server.url)
        before = ledger_rows(plan)
        assert list(before.columns) == list(LEDGER_COLUMNS) and list(before["caller"]) == ["batched", "direct"]
        assert (before["spent_calls"] == 0).all() and (before["planned_calls"] == len(PAIRS)).all()
        assert (before["role"] == "judge").all()
        # the planned columns are what `voirdire plan` prints for the same config before any call
        printed = plan_rows(plan).set_index("judge")
        for row in before.itertuples(index=False):
            shown = printed.loc[row.caller]
            assert (row.planned_calls, row.planned_prompt_tokens, row.planned_completion_tokens_max) == (
                shown["calls"],
                shown["est_prompt_tokens"],
                shown["est_completion_tokens_max"],
            )
            price = shown["est_cost_usd_max_batch"] if row.batch else shown["est_cost_usd_max"]
            assert row.planned_cost_usd_max == pytest.approx(price)
        summaries = {name: judge_it(plan, layout, name, tmp_path) for name in ("batched", "direct")}
        assert len(server.created) == 1 and summaries["batched"]["batch"]["answered"] == len(PAIRS)
        assert summaries["direct"]["batch"] is None and summaries["direct"]["requests_this_run"] == len(PAIRS)
        ledger = ledger_rows(plan).set_index("caller")
        judge_it(plan, layout, "batched", tmp_path)  # warm: nothing asked, nothing more spent
        pd.testing.assert_frame_equal(ledger_rows(plan).set_index("caller"), ledger)
        # the plan now has nothing left to ask; the ledger still plans every call, each once
        assert (plan_rows(plan)["calls"] == 0).all() and (plan_rows(plan)["cached"] == len(PAIRS)).all()
        pd.testing.assert_frame_equal(ledger[before.columns[4:9]], before.set_index("caller")[before.columns[4:9]])
    litellm = _litellm()
    for name in ("batched", "direct"):
        row = ledger.loc[name]
        judge = plan.judge("toy", name)
        calls = judge_calls(judge, PAIRS, TOPICS, TEXTS, provenance="original")
        prompt = sum(count_tokens(MODEL, c.request.chat_messages()) for c in calls)
        assert (row["planned_calls"], row["planned_prompt_tokens"]) == (len(PAIRS), prompt)
        assert row["planned_completion_tokens_max"] == len(PAIRS) * judge.max_tokens
        with Store(layout.store("toy", "original", name)) as store:
            stored = list(store.get(c.key for c in calls))
        assert (row["spent_calls"], row["spent_requests"]) == (len(PAIRS), sum(r.attempts for r in stored))
        assert row["spent_prompt_tokens"] == sum(r.prompt_tokens for r in stored)
        assert row["spent_cost_usd"] == pytest.approx(sum(r.cost for r in stored))
    batched, direct = ledger.loc["batched"], ledger.loc["direct"]
    assert batched["batch"] and batched["spent_via_batch"] == len(PAIRS)
    assert not direct["batch"] and direct["spent_via_batch"] == 0
    assert batched["price"] == "batch: cost map" and direct["price"] == "direct"
    tokens = (batched["planned_prompt_tokens"], batched["planned_completion_tokens_max"])
    assert batched["planned_cost_usd_max"] == pytest.approx(estimated_batch_cost(MODEL, *tokens)[0])
    assert direct["planned_cost_usd_max"] == pytest.approx(token_cost(litellm, MODEL, *tokens))
    # the same answers (one answer function), at the batch price: cheaper, by the cost map's ratio
    assert batched["spent_prompt_tokens"] == direct["spent_prompt_tokens"]
    assert 0 < batched["spent_cost_usd"] < direct["spent_cost_usd"]
    notes = ledger_notes(ledger.reset_index())
    assert len(notes) == 2 and all(n.startswith("Cost ledger, ") for n in notes)
    assert f"{len(PAIRS)} through provider batches" in notes[0] and "batches" not in notes[1]
    # the verdict reads the notes from the ledger's CSV, as the ledger rule writes it
    write_table(ledger.reset_index(), layout.ledger("csv"), title="ledger")
    assert ledger_notes(pd.read_csv(layout.ledger("csv"))) == notes
    named = ledger_notes(pd.read_csv(layout.ledger("csv")), source=layout.ledger("csv"))
    assert (
        named[:-1] == notes[:-1]
        and named[-1] == f"{notes[-1]} Every caller's calls, tokens and dollars: {layout.ledger('csv')}."
    )
    assert (tmp_path / layout.ledger("md")).is_file()


def test_an_answer_copied_from_another_store_is_counted_once(tmp_path):
    from voirdire.llm.store import Record

    def record(key, attempts, cost):
        return Record(
            key=key,
            purpose="judge",
            caller="j",
            items={},
            sample=0,
            model=MODEL,
            model_version=None,
            raw="x",
            logprobs=None,
            status="ok",
            value=1,
            rule="strict",
            attempts=attempts,
            prompt_tokens=10,
            completion_tokens=2,
            cost=cost,
            latency_s=None,
            created=0.0,
        )

    with Store(tmp_path / "a.sqlite") as a, Store(tmp_path / "b.sqlite") as b:
        a.put(record("k1", 1, 0.5))
        a.put(record("k2", 3, 0.25))
        b.put(record("k1", 0, 0.0))  # copied from a: cost 0, no attempt
        b.put(record("k2", 3, 0.25))  # the same answer in both (counted once)
    stores = {tmp_path / name: "judge" for name in ("a.sqlite", "b.sqlite", "absent.sqlite")}
    spent = spent_by_caller(stores)[("judge", "j")]
    assert (spent.calls, spent.requests, spent.prompt_tokens, spent.cost) == (2, 4, 20, 0.75)


def test_a_local_model_costs_0_and_a_model_without_a_price_costs_an_unknown_amount_never_0(tmp_path, write):
    """The local model is paid nothing ("0 calls paid, $0"); an API model litellm has no price for
    is stored at cost 0, which the ledger does not read as free: its dollars are empty, "unknown"."""
    from voirdire.llm.ledger import LOCAL, UNKNOWN
    from voirdire.llm.store import Record

    unpriced = "openai/voirdire-model-without-a-price"
    with BatchLoopback() as server:
        api = {"kind": "llm", "api_base": server.url, "api_key_env": "VOIRDIRE_LEDGER_KEY"}
        judges = [
            {**api, "name": "unpriced", "model": unpriced},
            {"kind": "llm", "name": "local", "model": "local/smollm2-135m"},
        ]
        plan, layout = a_plan(tmp_path, write, server.url, judges=judges)
        judge_it(plan, layout, "unpriced", tmp_path)
    # the local judge's answers, as its job stores them (a real store through its API; cost 0)
    local = plan.judge("toy", "local")
    calls = judge_calls(local, PAIRS, TOPICS, TEXTS, provenance="original")
    with Store(layout.store("toy", "original", "local")) as store:
        for call in calls:
            store.put(
                Record(
                    key=call.key,
                    purpose="judge",
                    caller="local",
                    items=dict(call.items),
                    sample=0,
                    model=local.model,
                    model_version=None,
                    raw="1",
                    logprobs=None,
                    status="ok",
                    value=1,
                    rule="strict",
                    attempts=1,
                    prompt_tokens=20,
                    completion_tokens=1,
                    cost=0.0,
                    latency_s=None,
                    created=0.0,
                )
            )
    ledger = ledger_rows(plan).set_index("caller")
    row = ledger.loc["unpriced"]
    assert row["price"] == UNKNOWN and row["spent_calls"] == len(PAIRS) and row["spent_prompt_tokens"] > 0
    assert pd.isna(row["spent_cost_usd"]) and pd.isna(row["planned_cost_usd_max"])
    row = ledger.loc["local"]
    assert row["price"] == LOCAL and row["planned_cost_usd_max"] == 0 and row["spent_cost_usd"] == 0
    assert row["spent_calls"] == len(PAIRS) and row["spent_prompt_tokens"] == 20 * len(PAIRS)
    write_table(ledger.reset_index(), layout.ledger("csv"), title="ledger")
    notes = dict(zip(ledger.index, ledger_notes(pd.read_csv(layout.ledger("csv"))), strict=True))
    assert "cost unknown" in notes["unpriced"] and "$0" not in notes["unpriced"]
    assert notes["local"].startswith("Cost ledger, judge local on toy: 0 calls paid, $0 (the local model")
    assert f"{len(PAIRS)} answers made on this machine" in notes["local"]


def test_an_assistant_and_a_judge_of_one_name_are_two_rows(tmp_path):
    """The demo names its judge, its assistant and its padder alike: the store each writes decides the role."""
    from voirdire.llm.store import Record

    def record(key, caller, cost):
        fields = dict(purpose="judge", items={}, sample=0, model=MODEL, model_version=None, raw="x", logprobs=None)
        fields |= dict(status="ok", value=1, rule="strict", latency_s=None, created=0.0)
        return Record(key=key, caller=caller, attempts=1, prompt_tokens=5, completion_tokens=1, cost=cost, **fields)

    with Store(tmp_path / "judge.sqlite") as a, Store(tmp_path / "rewrites.sqlite") as b:
        a.put(record("k1", "twin", 0.5))
        b.put(record("k2", "twin", 0.25))
    spent = spent_by_caller({tmp_path / "judge.sqlite": "judge", tmp_path / "rewrites.sqlite": "assistant"})
    assert {k: (v.calls, v.cost) for k, v in spent.items()} == {
        ("judge", "twin"): (1, 0.5),
        ("assistant", "twin"): (1, 0.25),
    }
