"""Judges on the one call path, against a real HTTP server on 127.0.0.1 speaking the OpenAI
protocol, with a real SQLite store: faults, kill -9 and resume, two writers, secrets."""

import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter

import pandas as pd
import pytest
from support.judging import judging_job
from support.loopback import Faults, LoopbackServer, grade_for

from voirdire.judges import LLMJudge
from voirdire.llm import Endpoint, Store, call_all
from voirdire.llm_judge.aggregate import aggregate
from voirdire.llm_judge.tasks import GradeAccept, judge_calls

N_QUERIES, N_DOCS = 6, 90
PAIRS = pd.DataFrame(
    {"query_id": [f"q{i % N_QUERIES}" for i in range(N_DOCS)], "doc_id": [f"d{i}" for i in range(N_DOCS)]}
)
TOPICS = {f"q{i}": f"what is topic number {i}" for i in range(N_QUERIES)}
TEXTS = {f"d{i}": f"passage {i} says something about topic {i % N_QUERIES}" for i in range(N_DOCS)}


def judge_for(server, concurrency=16, timeout_s=60.0, **options):
    endpoint = Endpoint(
        "openai/loopback",
        api_base=server.url,
        api_key_env="VOIRDIRE_TEST_KEY",
        concurrency=concurrency,
        timeout_s=timeout_s,
    )
    return LLMJudge(name="loop", endpoint=endpoint, **options)


def build_tasks(judge, pairs, topics, texts):
    return judge_calls(judge, pairs, topics, texts, provenance="original")


def judge_all(judge, tasks, store, **options):
    options.pop("provenance")
    return call_all(
        judge.endpoint, tasks, store, accept=GradeAccept(judge.scale), reasks=judge.parse_retries, **options
    )


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("VOIRDIRE_TEST_KEY", "sk-planted-7f3a9c-never-store-me")


def labels_of(store_path, tasks):
    with Store(store_path) as store:
        rows = pd.DataFrame([r.__dict__ for r in store.get(t.key for t in tasks)])
    return rows.rename(columns={"value": "label"})


def test_labels_match_the_servers_answers_and_rerun_makes_no_call(tmp_path):
    with LoopbackServer(latency_s=0.01) as server:
        judge = judge_for(server)
        tasks = build_tasks(judge, PAIRS, TOPICS, TEXTS)
        with Store(tmp_path / "s.sqlite") as store:
            stats = judge_all(judge, tasks, store, provenance="original", progress=False)
            assert (stats.cached, stats.stored, stats.unparsed) == (0, N_DOCS, 0)
            before = len(server.log)
            again = judge_all(judge, tasks, store, provenance="original", progress=False)
            assert again.cached == N_DOCS and len(server.log) == before  # warm: zero calls
        rows = labels_of(tmp_path / "s.sqlite", tasks)
        expected = {t.key: grade_for(t.request.messages[0][1]) for t in tasks}
        assert dict(zip(rows["key"], rows["label"], strict=True)) == expected
        assert set(rows["model_version"]) == {server.model_version}
        assert all(e.authorization == "Bearer sk-planted-7f3a9c-never-store-me" for e in server.log)


def test_faults_end_labelled_or_unparsed_identical_to_fault_free(tmp_path):
    faults = Faults(rate_429=0.1, rate_500=0.1, rate_timeout=0.03, rate_malformed=0.1, timeout_s=3)
    with LoopbackServer(latency_s=0.01) as clean:
        judge = judge_for(clean)
        tasks = build_tasks(judge, PAIRS, TOPICS, TEXTS)
        with Store(tmp_path / "clean.sqlite") as store:
            judge_all(judge, tasks, store, provenance="original", progress=False)
    with LoopbackServer(latency_s=0.01, faults=faults, seed=3) as faulty:
        judge = judge_for(faulty, timeout_s=1.0)
        with Store(tmp_path / "faulty.sqlite") as store:
            stats = judge_all(
                judge, build_tasks(judge, PAIRS, TOPICS, TEXTS), store, provenance="original", progress=False
            )
        outcomes = faulty.outcomes()
    seen = [o for per_prompt in outcomes.values() for o in per_prompt]
    assert {"429", "500", "timeout", "malformed"} <= set(seen)  # every fault was exercised
    clean_rows = labels_of(tmp_path / "clean.sqlite", tasks).set_index("key")
    faulty_rows = labels_of(tmp_path / "faulty.sqlite", tasks).set_index("key")
    assert len(faulty_rows) == N_DOCS == stats.stored
    assert set(faulty_rows["status"]) <= {"ok", "unparsed"}
    ok = faulty_rows[faulty_rows["status"] == "ok"]
    assert (ok["label"] == clean_rows.loc[ok.index, "label"]).all()
    unparsed = faulty_rows[faulty_rows["status"] == "unparsed"]
    assert unparsed["label"].isna().all() and unparsed["raw"].notna().all()
    # no pair was asked again once it had a good answer
    for per_prompt in outcomes.values():
        assert "ok" not in per_prompt[:-1]
    # every request the server saw was sent and counted by the call path: no resend below it (the
    # SDK's or litellm's) after a timeout, which a provider would bill out of the ledger's sight
    assert len(seen) == stats.requests
    # and each transport failure the server gave was resent once, counted by its class
    failures = {"429": "RateLimitError", "500": "InternalServerError", "timeout": "Timeout"}
    given = Counter(failures[o] for o in seen if o in failures)
    assert stats.resent == dict(given), (stats.resent, given)


def test_a_rate_limited_request_is_resent_once_after_the_providers_retry_after(tmp_path, caplog):
    """A 429 with ``Retry-After`` longer than the first backoff (0.5 s): the resend waits for it,
    and is the only one (each request the server saw was counted, each resend by its failure and
    in one line of the job's log)."""
    faults = Faults(rate_429=1.0, max_429_per_prompt=1, retry_after_s=1.5)
    with LoopbackServer(faults=faults) as server:
        judge = judge_for(server, concurrency=4)
        tasks = build_tasks(judge, PAIRS.iloc[:4], TOPICS, TEXTS)
        with Store(tmp_path / "s.sqlite") as store, caplog.at_level(logging.WARNING, logger="voirdire.llm.calls"):
            stats = judge_all(judge, tasks, store, provenance="original", progress=False)
        log = list(server.log)
    assert stats.stored == 4 and stats.requests == len(log) == 8
    assert stats.resent == {"RateLimitError": 4}
    (line,) = [r.getMessage() for r in caplog.records if "sent again" in r.getMessage()]
    assert line.endswith("4 request(s) sent again after a transport failure (RateLimitError 4)"), line
    for sha in {e.prompt_sha for e in log}:
        limited, answered = (e for e in log if e.prompt_sha == sha)
        assert (limited.outcome, answered.outcome) == ("429", "ok")
        assert answered.time - limited.time >= 1.5


def test_pairs_asked_ahead_are_stored_for_another_job_and_enter_none_of_this_jobs_results(tmp_path):
    pool, sample = PAIRS.iloc[:60], PAIRS.iloc[50:75]  # 10 pairs in both, 15 only in the sample

    def job(name, pairs, store, **options):
        return judging_job(
            judge, tmp_path, name, pairs=pairs, texts=TEXTS, topics=TOPICS, store_path=tmp_path / store, **options
        )

    with LoopbackServer(latency_s=0.01) as server:
        judge = judge_for(server)
        ahead = job("pool", pool, "pool.sqlite", ahead=build_tasks(judge, sample, TOPICS, TEXTS))
        assert len(server.log) == 75 and ahead["asked_ahead"] == 15 and ahead["calls_this_run"] == 75
        alone = job("alone", pool, "alone.sqlite")  # the same pool without the sample
        assert alone["asked_ahead"] == 0 and len(server.log) == 75 + 60
        # the pool's results are those of its own pairs, byte for byte
        assert (tmp_path / "pool.txt").read_bytes() == (tmp_path / "alone.txt").read_bytes()
        raw = [
            pd.read_parquet(tmp_path / f"{name}.parquet").drop(columns=["latency_s", "created"])
            for name in ("pool", "alone")
        ]
        assert raw[0].equals(raw[1])  # when each answer came aside
        assert ahead["pairs"] == alone["pairs"] == 60
        # the sample's job copies every answer from the pool's store and asks nothing
        copied = job("sample", sample, "sample.sqlite", seeds=[tmp_path / "pool.sqlite"])
        assert len(server.log) == 135 and copied["calls_this_run"] == 0
        assert copied["copied_from_finished_jobs"] == 25 and copied["pairs"] == 25
        asked = job("asked", sample, "asked.sqlite")  # the labels it would have got by asking
        assert asked["calls_this_run"] == 25
    assert (tmp_path / "sample.txt").read_bytes() == (tmp_path / "asked.txt").read_bytes()


JOB = """
import os, sys, pandas as pd
from voirdire.judges import LLMJudge
from voirdire.llm_judge.job import run_judging_job
from voirdire.llm import Endpoint
url, out, first, last = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
pairs = pd.read_csv(os.path.join(out, "pairs.tsv"), sep="\\t", dtype=str).iloc[first:last]
texts = dict(pd.read_csv(os.path.join(out, "texts.tsv"), sep="\\t", dtype=str).values)
topics = dict(pd.read_csv(os.path.join(out, "topics.tsv"), sep="\\t", dtype=str).values)
endpoint = Endpoint("openai/loopback", api_base=url, api_key_env="VOIRDIRE_TEST_KEY",
                    concurrency=int(os.environ.get("CONCURRENCY", "4")))
judge = LLMJudge(name="loop", endpoint=endpoint)
tag = f"{first}-{last}"
run_judging_job(judge, pairs=pairs, texts=texts, topics=topics, store_path=os.path.join(out, "store.sqlite"),
                provenance="original", qrels_out=os.path.join(out, f"qrels.{tag}.txt"),
                raw_out=os.path.join(out, f"raw.{tag}.parquet"), summary_out=os.path.join(out, f"summary.{tag}.json"),
                progress=False)
"""


def job_inputs(tmp_path):
    PAIRS.to_csv(tmp_path / "pairs.tsv", sep="\t", index=False)
    pd.DataFrame(list(TEXTS.items())).to_csv(tmp_path / "texts.tsv", sep="\t", index=False)
    pd.DataFrame(list(TOPICS.items())).to_csv(tmp_path / "topics.tsv", sep="\t", index=False)
    return [sys.executable, "-c", JOB]


def count_rows(path):
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        try:
            return db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
        except sqlite3.OperationalError:
            return 0


def test_kill_minus_9_then_rerun_asks_only_for_what_is_missing(tmp_path):
    command = job_inputs(tmp_path)
    with LoopbackServer(latency_s=0.2) as server:
        process = subprocess.Popen([*command, server.url, str(tmp_path), "0", str(N_DOCS)])
        deadline = time.time() + 120
        while count_rows(tmp_path / "store.sqlite") < 20 and time.time() < deadline:
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        survived = count_rows(tmp_path / "store.sqlite")
        assert 20 <= survived < N_DOCS
        before = len(server.log)
        subprocess.run([*command, server.url, str(tmp_path), "0", str(N_DOCS)], check=True, timeout=300)
        assert len(server.log) - before == N_DOCS - survived  # calls made = pairs missing
    assert count_rows(tmp_path / "store.sqlite") == N_DOCS
    summary = json.loads((tmp_path / f"summary.0-{N_DOCS}.json").read_text())
    assert summary["cached"] == survived and summary["calls_this_run"] == N_DOCS - survived


def test_two_jobs_sharing_one_store_lose_and_duplicate_nothing(tmp_path):
    command = job_inputs(tmp_path)
    env = {**os.environ, "CONCURRENCY": "8"}
    with LoopbackServer(latency_s=0.02) as server:
        # overlapping halves: pairs 30..59 are judged by both jobs at the same time
        jobs = [
            subprocess.Popen([*command, server.url, str(tmp_path), a, b], env=env)
            for a, b in (("0", "60"), ("30", str(N_DOCS)))
        ]
        assert [job.wait(timeout=300) for job in jobs] == [0, 0]
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        keys = [row[0] for row in db.execute("SELECT key FROM calls")]
    assert len(keys) == len(set(keys)) == N_DOCS
    for tag in ("0-60", f"30-{N_DOCS}"):
        assert len((tmp_path / f"qrels.{tag}.txt").read_text().splitlines()) in (60,)


def test_planted_api_key_reaches_no_file(tmp_path):
    command = job_inputs(tmp_path)
    with LoopbackServer(latency_s=0.0, faults=Faults(rate_500=0.2), seed=5) as server:
        subprocess.run(
            [*command, server.url, str(tmp_path), "0", "40"],
            check=True,
            timeout=300,
            stderr=open(tmp_path / "job.log", "w"),
        )
        assert any(e.authorization and "sk-planted" in e.authorization for e in server.log)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".sqlite" for p in written)
    for path in written:
        assert b"sk-planted-7f3a9c" not in path.read_bytes(), path


def test_aggregate_majority_ties_by_lower_median_unparsed_stays_na():
    rows = pd.DataFrame(
        {
            "query_id": ["q"] * 8,
            "doc_id": ["a", "a", "a", "b", "b", "c", "c", "d"],
            "label": [2, 2, 3, 1, 3, None, None, 0],
        }
    )
    out = aggregate(rows).set_index("doc_id")
    assert out.loc["a", "relevance"] == 2 and out.loc["a", "disagree"]
    assert out.loc["b", "relevance"] == 1  # tie 1 vs 3: lower median of [1, 3]
    assert pd.isna(out.loc["c", "relevance"]) and out.loc["c", "parsed"] == 0
    assert out.loc["d", "relevance"] == 0 and not out.loc["d", "disagree"]
