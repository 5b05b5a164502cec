"""Judging through a provider's batch API, against a real HTTP server on 127.0.0.1 that speaks the
OpenAI Files and Batches protocol (tests/support/batches.py), with a real SQLite store: the answers
equal direct ones, a killed job resumes its batch, failures inside a batch are asked again and
counted, and no answer is paid for twice (counted on the server, per request, over each test)."""

import gc
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pandas as pd
import pytest
from support.batches import BatchLoopback, in_share
from support.loopback import REJECT, Faults, LoopbackServer

from voirdire.errors import ConfigError
from voirdire.judges import LLMJudge, judge_from_config
from voirdire.llm import Endpoint, Store, call_all
from voirdire.llm.batch import DIRECT, BatchOptions, Client, CollectFirst, batch_prices, carried, chunks, route
from voirdire.llm.calls import BatchPending, CallsIncomplete, _litellm, token_cost
from voirdire.llm.store import BatchOutcome
from voirdire.llm_judge.tasks import GradeAccept, judge_calls

SECRET = "sk-planted-batch-5e1d-never-store-me"
MODEL = "openai/gpt-4o-mini"  # priced in litellm's cost map, batch prices included; served by the loopback
N_QUERIES, N_DOCS = 4, 40
PAIRS = pd.DataFrame(
    {"query_id": [f"q{i % N_QUERIES}" for i in range(N_DOCS)], "doc_id": [f"d{i}" for i in range(N_DOCS)]}
)
TOPICS = {f"q{i}": f"what is batch topic number {i}" for i in range(N_QUERIES)}
TEXTS = {f"d{i}": f"passage {i} says something about batch topic {i % N_QUERIES}" for i in range(N_DOCS)}
FAST = BatchOptions(poll_s=0.05, timeout_s=30)


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("VOIRDIRE_BATCH_KEY", SECRET)


def judge_for(server, batch=FAST, model=MODEL, **options):
    endpoint = Endpoint(model, api_base=server.url, api_key_env="VOIRDIRE_BATCH_KEY", concurrency=8)
    return LLMJudge(name="batched", endpoint=endpoint, batch=batch, **options)


def calls_of(judge, pairs=PAIRS, texts=TEXTS):
    return judge_calls(judge, pairs, TOPICS, texts, provenance="original")


def judge_all(judge, calls, store_path, **options):
    with Store(store_path) as store:
        return call_all(
            judge.endpoint,
            calls,
            store,
            accept=GradeAccept(judge.scale),
            reasks=judge.parse_retries,
            batch=options.pop("batch", judge.batch),
            progress=False,
            **options,
        )


def rows(store_path, calls):
    with Store(store_path) as store:
        return {r.key: r for r in store.get(c.key for c in calls)}


def prompt_sha(call):
    """The server's id of a request's prompt (support.loopback hashes the joined messages)."""
    prompt = "\n".join(content for _, content in call.request.messages)
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


def paid(server, calls):
    """Answers the server gave each call, over both paths (chat requests and batch lines)."""
    answered = {}
    for entry in server.log:
        if entry.outcome in ("ok", "malformed"):
            answered[entry.prompt_sha] = answered.get(entry.prompt_sha, 0) + 1
    return {c.key: answered.get(prompt_sha(c), 0) for c in calls}


def direct_answers(tmp_path, calls_for):
    """The same requests asked directly of the chat endpoint (the same answer function)."""
    with LoopbackServer() as server:
        judge = judge_for(server, batch=None)
        calls = calls_for(judge)
        judge_all(judge, calls, tmp_path / "direct.sqlite")
    return rows(tmp_path / "direct.sqlite", calls)


def batch_cost(record):
    prices = batch_prices(_litellm(), MODEL)
    return record.prompt_tokens * prices[0] + record.completion_tokens * prices[1]


def test_a_batch_answers_as_direct_calls_do_at_the_batch_price_and_a_warm_rerun_makes_no_call(tmp_path):
    direct = direct_answers(tmp_path, calls_of)
    with BatchLoopback() as server:
        judge = judge_for(server)
        calls = calls_of(judge)
        stats = judge_all(judge, calls, tmp_path / "s.sqlite")
        assert len(server.created) == 1 and stats.batch.submitted == 1 and stats.requests == 0  # no direct call
        assert stats.batch.answered == stats.stored == N_DOCS
        assert set(server.stats()["answered"]) == {c.key for c in calls}  # custom_id is the store key
        # the same grades, raw texts and versions as direct answers of the same requests
        batched = rows(tmp_path / "s.sqlite", calls)
        for key, record in batched.items():
            assert (record.value, record.raw, record.status, record.model_version) == (
                direct[key].value,
                direct[key].raw,
                direct[key].status,
                direct[key].model_version,
            )
            assert (record.prompt_tokens, record.completion_tokens) == (
                direct[key].prompt_tokens,
                direct[key].completion_tokens,
            )
            # the batch price from litellm's cost map, below the direct price of the same tokens
            assert record.cost == pytest.approx(batch_cost(record))
            assert 0 < record.cost < direct[key].cost
            assert direct[key].cost == pytest.approx(
                token_cost(_litellm(), MODEL, record.prompt_tokens, record.completion_tokens)
            )
        assert stats.cost == pytest.approx(sum(r.cost for r in batched.values()))
        # warm: a batch rerun and a direct rerun make no request and no batch
        before = len(server.log)
        again = judge_all(judge, calls, tmp_path / "s.sqlite")
        assert again.cached == N_DOCS and again.batch is None and len(server.log) == before
        plain = judge_all(judge_for(server, batch=None), calls, tmp_path / "s.sqlite")
        assert plain.cached == N_DOCS and len(server.log) == before and len(server.created) == 1
        assert set(paid(server, calls).values()) == {1}


def test_a_batch_run_leaves_no_open_async_http_client_to_the_collector(tmp_path):
    """litellm builds an HTTP client for each file and batch call and drops it. Collected later, an
    open async one closes itself on whatever event loop runs where the collection happens, after
    its sockets' finalizers freed their descriptors: that close unregisters a descriptor number a
    new connection may hold by then, and the connection never reads its answer (a request that
    waits out its timeout). The batch path must leave none for the collector."""
    gc.collect()
    # clients alive before the run (an earlier test's, in litellm's cache) are held here: one the
    # cache evicts during the run is not the run's to close
    before = [o for o in gc.get_objects() if isinstance(o, httpx.AsyncClient)]
    gc.disable()  # what the run drops stays uncollected until the look below
    try:
        with BatchLoopback(ends=["expired"], keep=0.5) as server:
            judge = judge_for(server)
            stats = judge_all(judge, calls_of(judge), tmp_path / "s.sqlite")
        gc.set_debug(gc.DEBUG_SAVEALL)  # the unreachable objects are kept in gc.garbage, to be looked at
        gc.collect()
        dropped = [o for o in gc.garbage if isinstance(o, httpx.AsyncClient)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert len(server.created) == 2 and stats.stored == N_DOCS  # two batches: uploads, creates, looks, reads
    assert [client for client in dropped if not client.is_closed] == []
    del before


def test_a_run_stopped_while_its_batch_runs_picks_the_same_batch_up(tmp_path):
    with BatchLoopback(hold=True) as server:
        judge = judge_for(server, batch=BatchOptions(poll_s=0.05, timeout_s=0.3))
        calls = calls_of(judge)
        with pytest.raises(BatchPending, match="rerun picks them up"):
            judge_all(judge, calls, tmp_path / "s.sqlite")
        with Store(tmp_path / "s.sqlite") as store:
            (row,) = store.batches()
            assert (
                row.batch_id == server.created[0]
                and row.state == "submitted"
                and not store.existing(store.batch_keys(row.input_file_id))
            )
        server.hold = False
        stats = judge_all(judge_for(server), calls, tmp_path / "s.sqlite")
        assert (stats.batch.resumed, stats.batch.submitted, stats.stored) == (1, 0, N_DOCS)
        assert len(server.created) == 1 and set(paid(server, calls).values()) == {1}


CHILD = """
import sys
sys.path.insert(0, {tests!r})
import pandas as pd
from voirdire.judges import LLMJudge
from voirdire.llm import Endpoint, Store, call_all
from voirdire.llm.batch import BatchOptions
from voirdire.llm_judge.tasks import GradeAccept, judge_calls
from unit.llm.test_batch_judging import MODEL, PAIRS, TOPICS, TEXTS
endpoint = Endpoint(MODEL, api_base={url!r}, api_key_env="VOIRDIRE_BATCH_KEY")
judge = LLMJudge(name="batched", endpoint=endpoint, batch=BatchOptions(poll_s=0.05, timeout_s=600))
with Store({store!r}) as store:
    call_all(endpoint, judge_calls(judge, PAIRS, TOPICS, TEXTS, provenance="original"), store,
             accept=GradeAccept(judge.scale), batch=judge.batch, progress=False)
"""


def test_a_job_killed_with_sigkill_while_its_batch_runs_resumes_it_and_submits_nothing_twice(tmp_path):
    tests = str(Path(__file__).resolve().parents[2])
    with BatchLoopback(hold=True) as server:
        store = tmp_path / "s.sqlite"
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD.format(tests=tests, url=server.url, store=str(store))],
            env={**os.environ, "VOIRDIRE_BATCH_KEY": SECRET},
        )
        try:
            deadline = time.monotonic() + 120
            while not (server.created and _recorded(store)):  # the batch is created and its id recorded
                assert child.poll() is None, "the child ended before its batch was running"
                assert time.monotonic() < deadline, "the child never created its batch"
                time.sleep(0.05)
            os.kill(child.pid, signal.SIGKILL)
        finally:
            child.wait(30)
        assert child.returncode == -signal.SIGKILL
        server.hold = False
        judge = judge_for(server)
        calls = calls_of(judge)
        stats = judge_all(judge, calls, store)
        assert (stats.batch.resumed, stats.batch.submitted, stats.stored) == (1, 0, N_DOCS)
        assert len(server.created) == 1 and set(paid(server, calls).values()) == {1}


def _recorded(store) -> bool:
    if not Path(store).is_file():
        return False
    db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return bool(db.execute("SELECT 1 FROM batches WHERE batch_id IS NOT NULL").fetchone())
    except sqlite3.OperationalError:  # the tables are not made yet
        return False
    finally:
        db.close()


class Killed(BaseException):
    """Stands for a kill -9 between the provider creating the batch and the store recording its id."""


def test_a_batch_created_but_not_recorded_before_a_kill_is_found_at_the_provider_not_created_again(
    tmp_path, monkeypatch
):
    with BatchLoopback() as server:
        judge = judge_for(server)
        calls = calls_of(judge)

        def killed(self, input_file_id, batch_id):
            raise Killed

        with monkeypatch.context() as patch:
            patch.setattr(Store, "batch_submitted", killed)
            with pytest.raises(Killed):
                judge_all(judge, calls, tmp_path / "s.sqlite")
        assert len(server.created) == 1
        with Store(tmp_path / "s.sqlite") as store:
            assert [(r.state, r.batch_id) for r in store.batches()] == [("submitting", None)]
        stats = judge_all(judge, calls, tmp_path / "s.sqlite")
        assert (stats.batch.resumed, stats.batch.submitted, stats.stored) == (1, 0, N_DOCS)
        assert len(server.created) == 1 and set(paid(server, calls).values()) == {1}
        with Store(tmp_path / "s.sqlite") as store:
            assert [(r.state, r.batch_id) for r in store.batches()] == [("read", server.created[0])]


def test_error_lines_are_asked_again_directly_and_counted_never_read_as_grades(tmp_path):
    share = 0.25
    direct = direct_answers(tmp_path, calls_of)
    with BatchLoopback(batch_error_share=share) as server:
        judge = judge_for(server)
        calls = calls_of(judge)
        failing = {c.key for c in calls if in_share(c.key, share)}
        assert 0 < len(failing) < N_DOCS
        stats = judge_all(judge, calls, tmp_path / "s.sqlite")
        assert (stats.batch.error_lines, stats.batch.direct, stats.requests) == (len(failing),) * 3
        assert stats.batch.answered == N_DOCS - len(failing) and stats.stored == N_DOCS
        stored = rows(tmp_path / "s.sqlite", calls)
        assert {k: r.value for k, r in stored.items()} == {k: r.value for k, r in direct.items()}
        # an error line costs nothing; its direct answer is priced as a direct call
        for key in failing:
            record = stored[key]
            assert record.attempts == 1
            assert record.cost == pytest.approx(
                token_cost(_litellm(), MODEL, record.prompt_tokens, record.completion_tokens)
            )
        assert len(server.created) == 1 and set(paid(server, calls).values()) == {1}
        with Store(tmp_path / "s.sqlite") as store:
            history = store.batch_history(failing)
        assert {h[-1].outcome for h in history.values()} == {"error"} and history.keys() == failing


@pytest.mark.parametrize("end", ["expired", "cancelled"])
def test_the_rest_of_an_expired_or_cancelled_batch_goes_into_a_new_batch_and_its_answers_are_kept(tmp_path, end):
    with BatchLoopback(ends=[end], keep=0.5) as server:
        judge = judge_for(server)
        calls = calls_of(judge)
        stats = judge_all(judge, calls, tmp_path / "s.sqlite")
        half = N_DOCS - round(N_DOCS * 0.5)
        assert len(server.created) == 2 and stats.batch.ended == {end: 1, "completed": 1}
        assert (stats.batch.not_run, stats.batch.resubmitted, stats.batch.direct) == (half, half, 0)
        assert stats.batch.requests == N_DOCS + half and stats.requests == 0
        assert stats.stored == N_DOCS and set(paid(server, calls).values()) == {1}


def test_a_request_no_batch_runs_goes_directly_after_its_resubmits(tmp_path):
    with BatchLoopback(ends=["expired", "expired"], keep=0.5) as server:
        judge = judge_for(server, batch=BatchOptions(poll_s=0.05, timeout_s=30, resubmits=1))
        calls = calls_of(judge)
        stats = judge_all(judge, calls, tmp_path / "s.sqlite")
        first = N_DOCS - round(N_DOCS * 0.5)  # not run by the first batch
        second = first - round(first * 0.5)  # nor by the second: asked directly
        assert len(server.created) == 2 and stats.batch.ended == {"expired": 2}
        assert (stats.batch.direct, stats.requests, stats.stored) == (second, second, N_DOCS)
        assert set(paid(server, calls).values()) == {1}


def test_a_failed_batch_is_asked_directly(tmp_path):
    with BatchLoopback(ends=["failed"]) as server:
        judge = judge_for(server)
        calls = calls_of(judge)
        stats = judge_all(judge, calls, tmp_path / "s.sqlite")
        assert len(server.created) == 1 and stats.batch.ended == {"failed": 1}
        said = run_and_server(stats, server)
        assert (stats.batch.not_run, stats.batch.direct, stats.requests, stats.stored) == (N_DOCS,) * 4, said
        assert set(paid(server, calls).values()) == {1}, said


def test_an_answer_the_rule_rejects_is_asked_again_directly_its_batch_answer_counted_and_paid_once(tmp_path):
    faults = Faults(rate_malformed=0.3, max_malformed_per_prompt=1)
    with BatchLoopback(faults=faults, seed=5) as server:
        judge = judge_for(server, parse_retries=2)
        calls = calls_of(judge)
        stats = judge_all(judge, calls, tmp_path / "s.sqlite")
        outcomes = server.outcomes()
        malformed = {c.key for c in calls if outcomes[prompt_sha(c)][0] == "malformed"}
        assert 0 < len(malformed) < N_DOCS
        assert (stats.batch.unaccepted, stats.batch.direct, stats.requests) == (len(malformed),) * 3
        stored = rows(tmp_path / "s.sqlite", calls)
        assert {r.status for r in stored.values()} == {"ok"}
        litellm = _litellm()
        for key in malformed:  # two paid answers: the batch's (not accepted) and the direct one
            record = stored[key]
            assert record.attempts == 2
            with Store(tmp_path / "s.sqlite") as store:
                (first,) = store.batch_history([key])[key]
            second = (record.prompt_tokens - first.prompt_tokens, record.completion_tokens - first.completion_tokens)
            assert record.cost == pytest.approx(first.cost + token_cost(litellm, MODEL, *second))
        counts = paid(server, calls)
        assert {counts[k] for k in malformed} == {2} and {v for k, v in counts.items() if k not in malformed} == {1}


def test_a_request_the_provider_rejects_fails_redacted_and_the_key_reaches_no_file(tmp_path):
    texts = {**TEXTS, "d3": f"passage 3 {REJECT}"}
    with BatchLoopback() as server:
        judge = judge_for(server)
        calls = calls_of(judge, texts=texts)
        with pytest.raises(CallsIncomplete) as failed:
            judge_all(judge, calls, tmp_path / "s.sqlite")
        assert SECRET not in str(failed.value) and "***" in str(failed.value)
        assert len(rows(tmp_path / "s.sqlite", calls)) == N_DOCS - 1
        assert all(entry.authorization == f"Bearer {SECRET}" for entry in server.log)  # it was sent
        # a rerun asks the rejected one only (directly: its batch gave an error line)
        before = len(server.log)
        with pytest.raises(CallsIncomplete):
            judge_all(judge, calls, tmp_path / "s.sqlite")
        assert len(server.log) == before + 1 and len(server.created) == 1
    for path in tmp_path.iterdir():
        assert SECRET.encode() not in path.read_bytes(), path


def test_batches_hold_the_providers_limits():
    calls = calls_of(LLMJudge(name="batched", endpoint=Endpoint(MODEL), batch=FAST))
    parts = list(chunks(calls, "gpt-4o-mini", max_requests=15, max_bytes=10**9))
    assert [len(p) for p, _ in parts] == [15, 15, 10]
    sizes = [len(line) for _, data in chunks(calls, "gpt-4o-mini", 10**6, 10**9) for line in data.splitlines(True)]
    parts = list(chunks(calls, "gpt-4o-mini", max_requests=10**6, max_bytes=3 * max(sizes)))
    assert all(len(data) <= 3 * max(sizes) for _, data in parts) and sum(len(p) for p, _ in parts) == N_DOCS
    line = json.loads(parts[0][1].splitlines()[0])
    assert line["custom_id"] == calls[0].key and line["body"] == calls[0].request.body() | {"model": "gpt-4o-mini"}


def test_where_a_request_goes_after_its_batches():
    answered, unaccepted = BatchOutcome("answered"), BatchOutcome("unaccepted", 10, 2, 0.5)
    missing, error, failed = BatchOutcome("missing"), BatchOutcome("error"), BatchOutcome("failed")
    assert route([], 1) == route([BatchOutcome("unused")], 1) == route([missing], 1) == "batch"
    assert route([missing, missing], 1) == route([missing], 0) == "direct"
    assert route([error], 3) == route([unaccepted], 3) == route([failed], 3) == "direct"
    assert carried([unaccepted, missing, unaccepted, answered]) == carried([unaccepted, unaccepted])
    assert carried([unaccepted, unaccepted]).attempts == 2 and carried([unaccepted]).cost == 0.5


def test_the_batch_key_in_a_judges_config():
    base = {"name": "j", "kind": "llm", "model": MODEL}
    assert judge_from_config(base, key="judges[j]").batch is None
    assert judge_from_config({**base, "batch": False}, key="judges[j]").batch is None
    assert judge_from_config({**base, "batch": True}, key="judges[j]").batch == BatchOptions()
    chosen = judge_from_config({**base, "batch": {"poll_s": 5, "resubmits": 0}}, key="judges[j]").batch
    assert (chosen.poll_s, chosen.resubmits, chosen.timeout_s) == (5, 0, BatchOptions().timeout_s)
    with pytest.raises(ConfigError, match="batch"):
        judge_from_config({**base, "model": "local/smollm2-135m", "batch": True}, key="judges[j]")
    with pytest.raises(ConfigError, match="poll_s"):
        judge_from_config({**base, "batch": {"poll_s": 0}}, key="judges[j]")


def test_the_schema_takes_the_batch_key_as_a_switch_or_its_settings_with_the_dataclass_defaults():
    from voirdire.config import schema_default, validate_schema

    def config(batch):
        dataset = {"source": "local", "topics": "t.tsv", "qrels": "q.txt", "corpus": "c.jsonl"}
        return {"datasets": {"toy": dataset}, "judges": [{"name": "j", "kind": "llm", "model": MODEL, "batch": batch}]}

    assert validate_schema(config(True))["judges"][0]["batch"] is True
    keys = ("poll_s", "timeout_s", "resubmits", "max_requests", "consistency_s")
    for name in keys:  # the schema is the defaults' home; the dataclass mirrors it (for batch: true)
        assert schema_default("judges", "batch", name) == getattr(BatchOptions(), name), name
    filled = validate_schema(config({"poll_s": 1.5}))["judges"][0]["batch"]
    assert filled == {name: getattr(BatchOptions(), name) for name in keys} | {"poll_s": 1.5}
    assert BatchOptions.from_config(filled, key="judges[j].batch") == BatchOptions(poll_s=1.5)
    for wrong in ({"poll": 1.5}, {"poll_s": 0}, "yes"):
        with pytest.raises(ConfigError):
            validate_schema(config(wrong))


def test_a_batch_the_provider_no_longer_knows_is_replaced_by_a_new_one(tmp_path):
    with BatchLoopback(hold=True) as server:
        judge = judge_for(server, batch=BatchOptions(poll_s=0.05, timeout_s=0.3))
        calls = calls_of(judge)
        with pytest.raises(BatchPending):
            judge_all(judge, calls, tmp_path / "s.sqlite")
        server.batches.pop(server.created[0])  # deleted at the provider before it ran
        server.hold = False
        # its 404s are believed once they have lasted consistency_s (before, it may be a batch not visible yet)
        believing = BatchOptions(poll_s=0.05, timeout_s=30, consistency_s=0.3)
        stats = judge_all(judge_for(server, batch=believing), calls, tmp_path / "s.sqlite")
        assert stats.batch.ended == {"gone": 1, "completed": 1} and stats.batch.resubmitted == N_DOCS
        assert len(server.created) == 2 and stats.stored == N_DOCS and set(paid(server, calls).values()) == {1}


# ---------------------------------------------------------------------------- the direct path
def chat_times(server):
    """The chat requests the server saw, each as (outcome, seconds after the first): what a failed
    count assertion prints, so that a request that hung shows where."""
    entries = [e for e in list(server.log) if e.custom_id is None]
    start = min((e.time for e in entries), default=0.0)
    return [(e.outcome, round(e.time - start, 2)) for e in entries]


def run_and_server(stats, server):
    """What a failed count assertion prints: the run's stats and the chat requests the server saw."""
    return f"{stats}; the server's chat requests (outcome, s after the first): {chat_times(server)}"


def chats(server):
    """Requests the chat endpoint answered directly (a batch's lines carry their custom_id)."""
    return sum(entry.custom_id is None for entry in server.log)


def test_a_direct_run_collects_the_batches_an_earlier_batch_run_left_before_asking_anything(tmp_path):
    """batch: turned off while a batch runs: the judge's direct job asks nothing while the batch
    runs (one clear error naming the judge and the batch), then reads the batch once it has
    ended and stores its answers; nothing is asked directly and every request is paid once."""
    from voirdire.llm_judge.job import run_judging_job

    store = tmp_path / "s.sqlite"
    with BatchLoopback(hold=True) as server:
        judge = judge_for(server, batch=BatchOptions(poll_s=0.05, timeout_s=0.3))
        calls = calls_of(judge)
        with pytest.raises(BatchPending):
            judge_all(judge, calls, store)
        (batch_id,) = server.created
        direct = judge_for(server, batch=None)
        with pytest.raises(BatchPending, match=rf"judges\[batched\]: 1 provider batch.*{batch_id} \(in_progress\)"):
            judge_all(direct, calls, store, batch=DIRECT, config_key="judges[batched]")
        assert chats(server) == 0 and set(paid(server, calls).values()) == {0}
        server.hold = False

        def job():
            return run_judging_job(
                direct,
                pairs=PAIRS,
                texts=TEXTS,
                topics=TOPICS,
                store_path=store,
                provenance="original",
                qrels_out=tmp_path / "q.txt",
                raw_out=tmp_path / "raw.parquet",
                summary_out=tmp_path / "summary.json",
                progress=False,
            )

        # the judge's own job (direct: no batch setting): one look a run, the batch finalizing, then done
        with pytest.raises(BatchPending, match=rf"{batch_id} \(finalizing\).*asks nothing"):
            job()
        assert chats(server) == 0
        summary = job()
        assert summary["batch"]["resumed"] == 1 and summary["batch"]["answered"] == N_DOCS
        assert summary["batch"]["submitted"] == 0 and chats(server) == 0
        assert len(server.created) == 1 and set(paid(server, calls).values()) == {1}
        with Store(store) as opened:
            assert not opened.batches(unread=True) and len(opened.existing(c.key for c in calls)) == N_DOCS
        again = judge_all(direct, calls, store, batch=DIRECT)
        assert again.cached == N_DOCS and again.batch is None and chats(server) == 0


def test_a_direct_run_finds_a_batch_created_but_not_recorded_and_closes_one_never_created(tmp_path, monkeypatch):
    """A kill between the provider creating the batch and the store recording it: the direct run
    finds the batch at the provider and collects it; a kill before the batch was created: the
    direct run finds none, closes the record (nothing was paid) and asks directly, once."""
    with BatchLoopback() as server:
        judge = judge_for(server)
        calls = calls_of(judge)
        half = len(calls) // 2

        def killed(self, input_file_id, batch_id):
            raise Killed

        with monkeypatch.context() as patch:
            patch.setattr(Store, "batch_submitted", killed)
            with pytest.raises(Killed):
                judge_all(judge, calls[:half], tmp_path / "s.sqlite")

        async def never(self, input_file_id):
            raise Killed

        with monkeypatch.context() as patch:
            patch.setattr(Client, "create", never)
            with pytest.raises(Killed):
                judge_all(judge, calls[half:], tmp_path / "s.sqlite")
        assert len(server.created) == 1
        with Store(tmp_path / "s.sqlite") as store:  # the second run found the first batch before it was killed
            expected = [("submitted", server.created[0]), ("submitting", None)]
            assert [(r.state, r.batch_id) for r in store.batches()] == expected
        direct = judge_for(server, batch=None)
        # the batch never created is not in the provider's list: believed at once here (consistency_s 0)
        believing = CollectFirst(BatchOptions(consistency_s=0))
        for _ in range(2):  # in_progress, then finalizing (a step a look, one look a run): nothing asked
            with pytest.raises(BatchPending, match=server.created[0]):
                judge_all(direct, calls, tmp_path / "s.sqlite", batch=believing)
            assert chats(server) == 0
        stats = judge_all(direct, calls, tmp_path / "s.sqlite", batch=believing)
        assert stats.batch.answered == half and stats.requests == len(calls) - half == chats(server)
        assert len(server.created) == 1 and set(paid(server, calls).values()) == {1}
        with Store(tmp_path / "s.sqlite") as store:
            states = sorted((r.state, r.batch_id or "") for r in store.batches())
            assert states == sorted([("read", server.created[0]), ("read", "")])
        # a batch run afterwards finds everything stored: no batch, no request
        assert judge_all(judge, calls, tmp_path / "s.sqlite").cached == len(calls) and len(server.created) == 1


def test_a_caller_that_cannot_collect_unread_batches_asks_nothing(tmp_path):
    with BatchLoopback(hold=True) as server:
        judge = judge_for(server, batch=BatchOptions(poll_s=0.05, timeout_s=0.2))
        calls = calls_of(judge)
        with pytest.raises(BatchPending):
            judge_all(judge, calls, tmp_path / "s.sqlite")
        with pytest.raises(BatchPending, match="nothing is asked"):
            judge_all(judge_for(server, batch=None), calls, tmp_path / "s.sqlite")
        assert chats(server) == 0
