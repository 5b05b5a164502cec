"""The one LLM call path (voirdire.llm): request keys, the store and its migration from 0.1,
permanent errors, redaction, the in-flight cap, and an API PRP ranker under faults.

Against the real loopback HTTP server on 127.0.0.1 and real SQLite files."""

import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from support.legacy_inputs import JUDGE, PAIRS, PASSAGES, QUERIES, RANK_DOCS, RANK_QUERY
from support.loopback import REJECT, Faults, LoopbackServer

from voirdire.judges import LLMJudge
from voirdire.llm import Call, CallsIncomplete, Endpoint, Request, Store, accept_any, answered, call_all, legacy
from voirdire.llm_judge.aggregate import judgments
from voirdire.llm_judge.job import run_judging_job
from voirdire.llm_judge.tasks import GradeAccept, judge_calls
from voirdire.rankers.api import REASKS, LiteLLMBackend
from voirdire.rankers.llm import prp_rank, rg_scores
from voirdire.rankers.rerank import rerank_all
from voirdire.systems import Ranker

V0_1 = Path(__file__).resolve().parents[2] / "data" / "store-v0.1"
SECRET = "sk-planted-c41l-path-never-log"
MESSAGES = [{"role": "user", "content": "hello"}]


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("VOIRDIRE_TEST_KEY", SECRET)


# ----------------------------------------------------------------------------- request keys


def test_the_key_covers_what_is_sent_and_what_decides_its_reading_and_nothing_else():
    base = Request.chat(
        "judge",
        "openai/m",
        MESSAGES,
        template_sha256="t",
        sample=0,
        accept="grade:0..3",
        temperature=0.0,
        max_tokens=16,
        seed=None,
    )
    assert base.body() == {"model": "openai/m", "messages": MESSAGES, "temperature": 0.0, "max_tokens": 16}
    variants = [
        Request.chat(
            "judge", "openai/m2", MESSAGES, template_sha256="t", accept="grade:0..3", temperature=0.0, max_tokens=16
        ),
        Request.chat(
            "judge",
            "openai/m",
            [{"role": "user", "content": "hello!"}],
            template_sha256="t",
            accept="grade:0..3",
            temperature=0.0,
            max_tokens=16,
        ),
        Request.chat(
            "judge", "openai/m", MESSAGES, template_sha256="t", accept="grade:0..3", temperature=0.5, max_tokens=16
        ),
        Request.chat(
            "judge", "openai/m", MESSAGES, template_sha256="t", accept="grade:0..3", temperature=0.0, max_tokens=17
        ),
        Request.chat(
            "judge",
            "openai/m",
            MESSAGES,
            template_sha256="t",
            accept="grade:0..3",
            temperature=0.0,
            max_tokens=16,
            seed=1,
        ),
        Request.chat(
            "judge", "openai/m", MESSAGES, template_sha256="u", accept="grade:0..3", temperature=0.0, max_tokens=16
        ),
        Request.chat(
            "judge",
            "openai/m",
            MESSAGES,
            template_sha256="t",
            sample=1,
            accept="grade:0..3",
            temperature=0.0,
            max_tokens=16,
        ),
        Request.chat(
            "probe", "openai/m", MESSAGES, template_sha256="t", accept="grade:0..3", temperature=0.0, max_tokens=16
        ),
        Request.chat(
            "judge", "openai/m", MESSAGES, template_sha256="t", accept="grade:1..5", temperature=0.0, max_tokens=16
        ),
    ]
    keys = {base.key} | {v.key for v in variants}
    assert len(keys) == 1 + len(variants)  # every one of them changes the key
    same = Request.chat(
        "judge", "openai/m", MESSAGES, template_sha256="t", accept="grade:0..3", max_tokens=16, temperature=0.0
    )
    assert same.key == base.key  # parameter order and unsent Nones do not
    with pytest.raises(ValueError, match="unknown purpose"):
        Request.chat("grading", "openai/m", MESSAGES)


def test_the_local_models_number_format_is_in_its_key_and_float32_keys_are_the_old_ones(monkeypatch):
    from voirdire.llm.local import inference
    from voirdire.llm.request import canonical_hash

    def keyed(model):
        request = Request.chat("judge", model, MESSAGES, template_sha256="t", accept="grade:0..3", max_tokens=8)
        old = {"body": request.body(), "purpose": "judge", "template_sha256": "t", "sample": 0, "accept": "grade:0..3"}
        return request.key, canonical_hash(old)

    keys = {}
    for number_format in inference.DTYPES:
        monkeypatch.setenv(inference.DTYPE_ENV, number_format)
        keys[number_format] = keyed("local/smollm2-135m")
        remote, old_remote = keyed("openai/m")
        assert remote == old_remote  # other models' keys never depend on it
    new, old = keys["float32"]
    assert new == old  # float32: the key earlier releases wrote
    assert keys["bfloat16"][0] != new and keys["bfloat16"][1] == old


def test_the_endpoint_is_not_in_the_key_and_the_key_is_read_from_the_environment(monkeypatch):
    endpoint = Endpoint("openai/m", api_base="http://127.0.0.1:1/v1", api_key_env="VOIRDIRE_TEST_KEY")
    assert endpoint.api_key() == SECRET
    assert endpoint.connection(SECRET)["api_key"] == SECRET
    monkeypatch.delenv("VOIRDIRE_TEST_KEY")
    with pytest.raises(Exception, match="VOIRDIRE_TEST_KEY"):
        endpoint.api_key(key="judges.x")


# ----------------------------------------------------------------------------- store written by 0.1


def legacy_judge(server):
    endpoint = Endpoint(JUDGE["model"], api_base=server.url, api_key_env=JUDGE["api_key_env"])
    return LLMJudge(name=JUDGE["name"], endpoint=endpoint, samples=JUDGE["samples"])


def test_a_store_written_by_0_1_answers_a_rerun_of_the_same_judge_with_zero_calls(tmp_path):
    store_path = tmp_path / "judge.sqlite"
    shutil.copy(V0_1 / "judge.sqlite", store_path)
    with sqlite3.connect(store_path) as db:
        old = dict(db.execute("SELECT key, label FROM judgments"))
    pairs = pd.DataFrame(PAIRS, columns=["query_id", "doc_id"])
    with LoopbackServer() as server:
        judge = legacy_judge(server)
        result = run_judging_job(
            judge,
            pairs=pairs,
            texts=PASSAGES,
            topics=QUERIES,
            store_path=store_path,
            provenance="original",
            qrels_out=tmp_path / "q.txt",
            raw_out=tmp_path / "raw.parquet",
            summary_out=tmp_path / "s.json",
            progress=False,
        )
        assert server.log == []  # nothing asked again
    assert result["calls_this_run"] == 0 and result["cached"] == len(PAIRS) * 2 == len(old)
    assert result["rekeyed_from_v0_1"] == len(old)
    with Store(store_path) as store:
        assert store.meta()["migrated_from"] == "0.1"
        calls = judge_calls(judge, pairs, QUERIES, PASSAGES, provenance="original")
        rows = list(store.get(c.key for c in calls))
    assert len(rows) == len(old) and {r.purpose for r in rows} == {"judge"}
    assert sorted(r.value for r in rows) == sorted(old.values())  # the same labels, read again
    assert {tuple(sorted(r.items)) for r in rows} == {("doc_id", "provenance", "query_id")}
    with sqlite3.connect(store_path) as db:  # nothing was lost: the old table is kept, renamed
        assert db.execute("SELECT COUNT(*) FROM judgments_v0_1").fetchone()[0] == len(old)
    # a second open finds nothing left to migrate, and reading by today's keys still works
    with LoopbackServer() as server:
        again = run_judging_job(
            legacy_judge(server),
            pairs=pairs,
            texts=PASSAGES,
            topics=QUERIES,
            store_path=store_path,
            provenance="original",
            qrels_out=tmp_path / "q2.txt",
            raw_out=tmp_path / "raw2.parquet",
            summary_out=tmp_path / "s2.json",
            progress=False,
        )
        assert server.log == [] and again["rekeyed_from_v0_1"] == 0
    assert (tmp_path / "q.txt").read_text() == (tmp_path / "q2.txt").read_text()


def test_a_ranker_store_written_by_0_1_answers_rg_and_prp_with_zero_calls(tmp_path):
    store_path = tmp_path / "ranker.sqlite"
    shutil.copy(V0_1 / "ranker.sqlite", store_path)
    passages = [PASSAGES[d] for d in RANK_DOCS]
    with LoopbackServer() as server:
        endpoint = Endpoint("openai/served", api_base=server.url, api_key_env="VOIRDIRE_TEST_KEY")
        backend = LiteLLMBackend(endpoint=endpoint, store_path=store_path, ranker="api")
        scores = rg_scores(backend, QUERIES[RANK_QUERY], passages, ids=RANK_DOCS, query_id=RANK_QUERY)
        order, ledger = prp_rank(
            backend, QUERIES[RANK_QUERY], passages, variant="allpairs", ids=RANK_DOCS, query_id=RANK_QUERY
        )
        assert server.log == []
    with LoopbackServer() as server:  # the same answers from a fresh store, by asking
        endpoint = Endpoint("openai/served", api_base=server.url, api_key_env="VOIRDIRE_TEST_KEY")
        backend = LiteLLMBackend(endpoint=endpoint, store_path=tmp_path / "new.sqlite", ranker="api")
        assert rg_scores(backend, QUERIES[RANK_QUERY], passages) == pytest.approx(scores, abs=1e-12)
        assert prp_rank(backend, QUERIES[RANK_QUERY], passages, variant="allpairs")[0] == order
        assert len(server.log) == 3 + 6
    with sqlite3.connect(store_path) as db:
        items = [r[0] for r in db.execute("SELECT items FROM calls WHERE purpose = 'rank'")]
    assert len(items) == 9 and all('"query_id": "q1"' in i for i in items)  # ids, no longer empty


V0_1_TABLE = """
CREATE TABLE judgments (
    key TEXT PRIMARY KEY, judge TEXT NOT NULL, query_id TEXT NOT NULL, doc_id TEXT NOT NULL,
    provenance TEXT NOT NULL, sample INTEGER NOT NULL, model TEXT NOT NULL, model_version TEXT, raw TEXT,
    label INTEGER, status TEXT NOT NULL CHECK (status IN ('ok', 'unparsed')), parse_rule TEXT,
    attempts INTEGER NOT NULL, prompt_tokens INTEGER, completion_tokens INTEGER, cost REAL NOT NULL,
    latency_s REAL, passage_chars INTEGER, created REAL NOT NULL
)
"""


def test_a_hand_built_0_1_store_answers_todays_request_and_the_plan_counts_it_before_any_rekey(tmp_path):
    """0.1's table written by hand, keyed by :func:`legacy.judge_key`: an accepted answer and an
    unparsed one (both paid, neither asked again). The plan counts them as stored without
    re-keying; the job re-keys both and counts them as ``adopted``."""
    pairs = pd.DataFrame(PAIRS[:1], columns=["query_id", "doc_id"])
    store_path = tmp_path / "judge.sqlite"
    with LoopbackServer() as server:
        judge = legacy_judge(server)
        calls = judge_calls(judge, pairs, QUERIES, PASSAGES, provenance="original")
        assert [len(c.aliases) for c in calls] == [1, 1] and calls[0].key != calls[0].aliases[0]
        with sqlite3.connect(store_path) as db:
            db.execute(V0_1_TABLE)
            for call, raw, label, status in (
                (calls[0], "##final score: 2", 2, "ok"),
                (calls[1], "maybe", None, "unparsed"),
            ):
                db.execute(
                    "INSERT INTO judgments VALUES (?, ?, 'q1', 'd1', 'original', ?, ?, 'v', ?, ?, ?, NULL, 1, 10, 3, 0.5, 0.1, 9, 1.0)",
                    (call.aliases[0], judge.name, call.request.sample, judge.model, raw, label, status),
                )
        with Store(store_path) as store:
            assert store.migrated == 2 and store.meta() == {"migrated_from": legacy.VERSION, "schema_version": "2"}
            assert answered(store, calls) == {c.key for c in calls}  # what the plan reads
            assert store.existing(c.key for c in calls) == set()  # and nothing was re-keyed by reading
            stats = call_all(judge.endpoint, calls, store, accept=GradeAccept(judge.scale), progress=False)
            rows = {r.key: r for r in store.get(c.key for c in calls)}
        assert server.log == []
    assert (stats.calls, stats.cached, stats.adopted) == (2, 2, 2)
    assert [(rows[c.key].status, rows[c.key].value) for c in calls] == [("ok", 2), ("unparsed", None)]
    assert all(
        r.cost == 0.5 and r.items == {"query_id": "q1", "doc_id": "d1", "provenance": "original"} for r in rows.values()
    )
    with sqlite3.connect(store_path) as db:
        assert db.execute(f"SELECT COUNT(*) FROM {legacy.KEPT_AS}").fetchone()[0] == 2


def test_the_0_1_migration_is_done_once_when_two_processes_race_for_it(tmp_path):
    """The table is looked for again under the write lock: a second migration moves nothing."""
    store_path = tmp_path / "judge.sqlite"
    shutil.copy(V0_1 / "judge.sqlite", store_path)
    with Store(store_path) as first:
        moved = first.migrated
    assert moved == len(PAIRS) * 2
    db = sqlite3.connect(store_path, isolation_level=None)
    try:
        assert not legacy.found(db)
        db.execute("BEGIN IMMEDIATE")
        assert legacy.migrate(db) == 0
        db.execute("COMMIT")
        assert db.execute("SELECT COUNT(*) FROM calls").fetchone()[0] == moved
    finally:
        db.close()
    with Store(store_path) as again:
        assert again.migrated == 0 and again.meta()["migrated_from"] == "0.1"


def test_the_0_1_compatibility_states_when_it_goes():
    assert legacy.VERSION == "0.1" and legacy.REMOVED_IN == "1.0"
    assert "removed in 1.0" in legacy.__doc__


# ----------------------------------------------------------------------------- failures


def test_permanent_errors_fail_at_once_without_aborting_the_others_and_are_redacted(tmp_path):
    with LoopbackServer() as server:
        endpoint = Endpoint("openai/loopback", api_base=server.url, api_key_env="VOIRDIRE_TEST_KEY", concurrency=4)
        calls = [
            Call(
                Request.chat(
                    "probe", endpoint.model, [{"role": "user", "content": f"prompt {i}" + (REJECT if i < 2 else "")}]
                ),
                "p",
                {"i": str(i)},
            )
            for i in range(8)
        ]
        with Store(tmp_path / "s.sqlite") as store, pytest.raises(CallsIncomplete) as failure:
            call_all(endpoint, calls, store, accept=accept_any, progress=False)
        outcomes = server.outcomes()
    rejected = [o for o in outcomes.values() if o[0] == "400"]
    assert len(rejected) == 2 and all(o == ["400"] for o in rejected)  # asked once: no retry can fix it
    message = str(failure.value)
    assert "2 of 8 calls" in message and "BadRequestError" in message
    assert SECRET not in message and "***" in message  # the server echoed the key; we did not
    with Store(tmp_path / "s.sqlite") as store:
        assert len(store.existing(c.key for c in calls)) == 6  # the others are stored


def test_max_in_flight_caps_concurrency_below_the_endpoints(tmp_path):
    with LoopbackServer(latency_s=0.05) as server:
        endpoint = Endpoint("openai/loopback", api_base=server.url, api_key_env="VOIRDIRE_TEST_KEY", concurrency=16)
        calls = [
            Call(Request.chat("probe", endpoint.model, [{"role": "user", "content": f"x{i}"}]), "p") for i in range(40)
        ]
        with Store(tmp_path / "s.sqlite") as store:
            stats = call_all(endpoint, calls, store, max_in_flight=3, progress=False)
        assert server.peak_in_flight <= 3 and stats.max_in_flight <= 3
        with Store(tmp_path / "t.sqlite") as store:
            call_all(endpoint, calls, store, progress=False)
        assert server.peak_in_flight > 3  # uncapped, the same calls overlap more: the cap did it


def test_an_api_prp_ranker_under_faults_ranks_as_on_a_fault_free_server(tmp_path):
    pools = {f"q{i}": [f"d{i}{j}" for j in range(5)] for i in range(3)}
    texts = {d: f"passage text of {d}" for docs in pools.values() for d in docs}
    topics = {q: f"query about {q}" for q in pools}

    def rank(server, name):
        ranker = Ranker(
            name="prp-api",
            method="prp",
            model="openai/served",
            backend="litellm",
            variant="allpairs",
            endpoint=Endpoint(
                "openai/served", api_base=server.url, api_key_env="VOIRDIRE_TEST_KEY", concurrency=8, timeout_s=1.0
            ),
        )
        return rerank_all(
            ranker,
            pools,
            topics,
            texts,
            tmp_path / f"{name}.jsonl",
            store_path=tmp_path / f"{name}.sqlite",
            progress=False,
        )

    with LoopbackServer() as clean:
        expected = rank(clean, "clean")
    # garbage at most twice for one prompt: within the ranker's re-asks (REASKS), so every
    # prompt ends with a readable answer, as on the clean server
    faults = Faults(
        rate_429=0.1, rate_500=0.1, rate_timeout=0.03, rate_malformed=0.15, timeout_s=3, max_malformed_per_prompt=REASKS
    )
    with LoopbackServer(faults=faults, seed=11) as faulty:
        got = rank(faulty, "faulty")
        outcomes = faulty.outcomes()
    assert {"429", "500", "timeout", "malformed"} <= {o for per in outcomes.values() for o in per}
    assert {q: r["ranking"] for q, r in got.items()} == {q: r["ranking"] for q, r in expected.items()}
    assert {q: r["bias"] for q, r in got.items()} == {q: r["bias"] for q, r in expected.items()}
    for per_prompt in outcomes.values():  # no prompt answered again after a good answer
        assert "ok" not in per_prompt[:-1]


def test_judgments_table_keeps_the_raw_answer_columns(tmp_path):
    with LoopbackServer() as server:
        judge = legacy_judge(server)
        pairs = pd.DataFrame(PAIRS, columns=["query_id", "doc_id"])
        calls = judge_calls(judge, pairs, QUERIES, PASSAGES, provenance="original")
        with Store(tmp_path / "s.sqlite") as store:
            call_all(judge.endpoint, calls, store, accept=GradeAccept(judge.scale), progress=False)
            frame = judgments(store.get(c.key for c in calls), PASSAGES)
    assert len(frame) == len(calls) and frame["label"].notna().all()
    assert (frame["passage_chars"] == frame["doc_id"].map(lambda d: len(PASSAGES[d]))).all()
    assert set(frame["model_version"]) == {server.model_version}
