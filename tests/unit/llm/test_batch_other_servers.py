"""Batch judging against servers that keep the OpenAI Files and Batches protocol but differ from
ours wherever it lets a provider choose (tests/support/batches.py, :class:`Quirks`): output lines
in any order, slow validating and finalizing, opaque ids, a batch or file that answers 404 at
first, a list that lags behind a creation, failed lines in the output file or with no response,
blank lines and CRLF, an expired batch silent on what it did not run, fields left out instead of
null, the list oldest first in small pages. Each is judged end to end through the path the other
batch tests use (a real HTTP server on 127.0.0.1, a real SQLite store), with the invariants of
issue 53: every answer stored under the direct call's key and equal to the direct answer, each
request paid once (counted on the server after every batch has run to its end), failures counted
and asked again, never read as a grade, no call on a warm rerun, and a resume after a kill."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from openai._legacy_response import HttpxBinaryResponseContent
from support.batches import BatchLoopback, Quirks, in_share
from test_batch_judging import (
    CHILD,
    MODEL,
    N_DOCS,
    SECRET,
    Killed,
    _recorded,
    calls_of,
    chats,
    direct_answers,
    judge_all,
    judge_for,
    paid,
    rows,
    run_and_server,
)

from voirdire.llm import Store
from voirdire.llm.batch import BatchError, BatchOptions, CollectFirst, file_bytes, jsonl_entries
from voirdire.llm.calls import BatchPending, _litellm, token_cost

ONE_AT_A_TIME = {
    "shuffle": Quirks(shuffle=True),
    "slow": Quirks(slow=3),
    "opaque_ids": Quirks(opaque_ids=True),
    "not_found": Quirks(not_found=2),
    "file_not_found": Quirks(file_not_found=2),
    "ragged_jsonl": Quirks(ragged_jsonl=True),
    "errors_inline": Quirks(errors_inline=True),
    "unrun_absent": Quirks(unrun_absent=True),
    "random_partial": Quirks(random_partial=True),
    "sparse": Quirks(sparse=True),
    "every": Quirks.every(),
}
SHARE = 0.25  # lines a batch fails (a server error inside it) though a direct call answers them


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("VOIRDIRE_BATCH_KEY", SECRET)


@pytest.mark.parametrize("quirks", ONE_AT_A_TIME.values(), ids=ONE_AT_A_TIME.keys())
def test_a_server_that_differs_where_the_protocol_allows_gets_the_direct_answers_each_paid_once(tmp_path, quirks):
    """The first batch expires with part of its lines run (the rest into a new batch), a quarter
    of the lines fail inside their batch (asked directly): the stored answers equal a direct
    run's under the same keys, every count says what happened, every request is paid once."""
    direct = direct_answers(tmp_path, calls_of)
    with BatchLoopback(quirks=quirks, ends=["expired"], keep=0.5, batch_error_share=SHARE) as server:
        judge = judge_for(server)
        calls = calls_of(judge)
        failing = {c.key for c in calls if in_share(c.key, SHARE)}
        assert 0 < len(failing) < N_DOCS
        stats = judge_all(judge, calls, tmp_path / "s.sqlite")
        first, second = server.created
        not_run = N_DOCS - len(server.ran(first))
        assert 0 < not_run < N_DOCS and set(server.ran(second)) == {c.key for c in calls} - set(server.ran(first))
        assert stats.batch.ended == {"expired": 1, "completed": 1} and stats.batch.submitted == 2
        assert (stats.batch.not_run, stats.batch.resubmitted) == (not_run, not_run)
        said = run_and_server(stats, server)
        assert (stats.batch.error_lines, stats.batch.direct, stats.requests) == (len(failing),) * 3, said
        assert stats.batch.answered == N_DOCS - len(failing) and stats.stored == N_DOCS
        stored = rows(tmp_path / "s.sqlite", calls)
        assert stored.keys() == direct.keys()
        for key, record in stored.items():  # the direct answer, under the direct call's key
            assert (record.value, record.raw, record.status) == (direct[key].value, direct[key].raw, "ok"), key
            assert record.attempts == 1
        for key in failing:  # a failed line is no grade: asked directly, at the direct price
            record = stored[key]
            assert record.cost == pytest.approx(
                token_cost(_litellm(), MODEL, record.prompt_tokens, record.completion_tokens)
            )
        with Store(tmp_path / "s.sqlite") as store:
            assert {h[-1].outcome for h in store.batch_history(failing).values()} == {"error"}
        # warm: a batch rerun and a direct rerun ask nothing and create no batch
        before = len(server.log)
        assert judge_all(judge, calls, tmp_path / "s.sqlite").cached == N_DOCS
        assert judge_all(judge_for(server, batch=None), calls, tmp_path / "s.sqlite").cached == N_DOCS
        assert len(server.log) == before and len(server.created) == 2
        server.drain()  # a batch the client let go still runs, and is paid for
        assert set(paid(server, calls).values()) == {1}, said


def test_a_job_killed_while_its_batch_runs_at_a_different_server_resumes_it(tmp_path):
    tests = str(Path(__file__).resolve().parents[2])
    with BatchLoopback(hold=True, quirks=Quirks.every()) as server:
        store = tmp_path / "s.sqlite"
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD.format(tests=tests, url=server.url, store=str(store))],
            env={**os.environ, "VOIRDIRE_BATCH_KEY": SECRET},
        )
        try:
            deadline = time.monotonic() + 120
            while not (server.created and _recorded(store)):
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
        assert (stats.batch.resumed, stats.batch.submitted, stats.stored, stats.requests) == (1, 0, N_DOCS, 0)
        assert len(server.created) == 1 and "_" not in server.created[0]  # an opaque id, resumed
        server.drain()
        assert set(paid(server, calls).values()) == {1}


def kill_before_recording(judge, calls, store_path, monkeypatch):
    def killed(self, input_file_id, batch_id):
        raise Killed

    with monkeypatch.context() as patch:
        patch.setattr(Store, "batch_submitted", killed)
        with pytest.raises(Killed):
            judge_all(judge, calls, store_path)


@pytest.mark.parametrize("same_second", [False, True], ids=["apart", "same_second"])
def test_a_batch_the_list_does_not_show_yet_is_looked_for_again_not_created_twice(tmp_path, monkeypatch, same_second):
    """A kill between creation and recording, at a provider whose list lags behind a creation and
    lists oldest first, a few batches a page, older batches first: the rerun looks again, through
    every page, and finds the batch instead of creating (and paying for) a second one. Older
    batches made in the same second (a page of equal created_at, as often as not when they are
    made apart by a fraction of a second) do not pass for a newest-first page that ends the search."""
    with BatchLoopback(quirks=Quirks(unlisted=2, oldest_first=True, page_size=2)) as server:
        # a short consistency_s: a client that stops the search early fails in seconds, not minutes
        judge = judge_for(server, batch=BatchOptions(poll_s=0.05, timeout_s=30, consistency_s=30))
        calls = calls_of(judge)
        for i in range(5):  # older batches of the same organisation, made two hours ago
            judge_all(judge, calls[i : i + 1], tmp_path / "older.sqlite")
        two_hours_ago = int(time.time()) - 7200
        for batch_id in server.created:
            if same_second:
                server.batches[batch_id]["created_at"] = two_hours_ago
            else:
                server.batches[batch_id]["created_at"] -= 7200
        kill_before_recording(judge, calls[5:], tmp_path / "s.sqlite", monkeypatch)
        assert len(server.created) == 6
        stats = judge_all(judge, calls[5:], tmp_path / "s.sqlite")
        assert (stats.batch.resumed, stats.batch.submitted, stats.stored) == (1, 0, N_DOCS - 5)
        assert len(server.created) == 6
        server.drain()
        assert set(paid(server, calls).values()) == {1}


def test_a_direct_run_does_not_close_a_batch_the_list_does_not_show_yet(tmp_path, monkeypatch):
    """The direct path after the same kill: the list does not show the batch yet, so it asks
    nothing (one clear error) rather than close the record and ask directly what the batch runs."""
    with BatchLoopback(quirks=Quirks(unlisted=1)) as server:
        judge = judge_for(server)
        calls = calls_of(judge)
        kill_before_recording(judge, calls, tmp_path / "s.sqlite", monkeypatch)
        direct = judge_for(server, batch=None)
        with pytest.raises(BatchPending, match="does not show the batch of .* yet"):
            judge_all(direct, calls, tmp_path / "s.sqlite", batch=CollectFirst(BatchOptions(consistency_s=60)))
        assert chats(server) == 0
        stats, runs = None, 0
        while stats is None:  # listed now: found, then looked at once a run (in_progress, finalizing), then read
            runs += 1
            assert runs <= 5, "the direct run never read the batch"
            try:
                stats = judge_all(
                    direct, calls, tmp_path / "s.sqlite", batch=CollectFirst(BatchOptions(consistency_s=60))
                )
            except BatchPending:
                assert chats(server) == 0
        assert stats.batch.answered == N_DOCS and chats(server) == 0 and len(server.created) == 1
        assert set(paid(server, calls).values()) == {1}


def test_a_batch_that_answers_404_for_good_is_replaced_once_the_provider_has_not_known_it_long_enough(tmp_path):
    with BatchLoopback(hold=True, quirks=Quirks(opaque_ids=True)) as server:
        judge = judge_for(server, batch=BatchOptions(poll_s=0.05, timeout_s=0.3))
        calls = calls_of(judge)
        with pytest.raises(BatchPending):
            judge_all(judge, calls, tmp_path / "s.sqlite")
        server.batches.pop(server.created[0])
        server.hold = False
        # not believed within consistency_s: the job stops with its batch recorded, nothing asked twice
        patient = BatchOptions(poll_s=0.05, timeout_s=0.3, consistency_s=60)
        with pytest.raises(BatchPending):
            judge_all(judge_for(server, batch=patient), calls, tmp_path / "s.sqlite")
        assert len(server.created) == 1 and chats(server) == 0
        believing = BatchOptions(poll_s=0.05, timeout_s=30, consistency_s=0.2)
        stats = judge_all(judge_for(server, batch=believing), calls, tmp_path / "s.sqlite")
        assert stats.batch.ended == {"gone": 1, "completed": 1} and len(server.created) == 2
        assert stats.stored == N_DOCS and set(paid(server, calls).values()) == {1}


def test_a_failed_batch_at_a_sparse_server_is_asked_directly(tmp_path):
    with BatchLoopback(ends=["failed"], quirks=Quirks.every()) as server:
        judge = judge_for(server)
        calls = calls_of(judge)
        stats = judge_all(judge, calls, tmp_path / "s.sqlite")
        assert stats.batch.ended == {"failed": 1} and len(server.created) == 1
        said = run_and_server(stats, server)
        assert (stats.batch.not_run, stats.batch.direct, stats.requests, stats.stored) == (N_DOCS,) * 4, said
        assert set(paid(server, calls).values()) == {1}, said


def test_a_batch_whose_every_line_fails_has_no_output_file_and_is_asked_directly(tmp_path):
    with BatchLoopback(batch_error_share=1.0, quirks=Quirks(sparse=True)) as server:
        judge = judge_for(server)
        calls = calls_of(judge)
        stats = judge_all(judge, calls, tmp_path / "s.sqlite")
        (batch_id,) = server.created
        assert server.batches[batch_id]["output_file_id"] is None  # left out of the batch object it sends
        said = run_and_server(stats, server)
        assert (stats.batch.error_lines, stats.batch.answered, stats.requests, stats.stored) == (
            N_DOCS,
            0,
            N_DOCS,
            N_DOCS,
        ), said
        assert set(paid(server, calls).values()) == {1}, said


# ---------------------------------------------------------------------------- reading the files
def test_a_batch_file_is_read_whatever_its_line_ends_and_a_broken_line_is_named():
    entries = [{"custom_id": "a", "n": 1}, {"custom_id": "b", "n": 2}]
    lines = ['{"custom_id": "a", "n": 1}', '{"custom_id": "b", "n": 2}']
    for content in (
        ("\n".join(lines) + "\n").encode(),
        "\n".join(lines).encode(),  # no newline after the last line
        ("\r\n\r\n".join(lines) + "\r\n").encode(),
        ("\ufeff\n" + "\n\n  \n".join(lines)).encode(),  # a byte-order mark, blank lines
    ):
        assert [e for _, e in jsonl_entries(content, "f")] == entries, content
    with pytest.raises(BatchError, match=r"file out-7:3: not a JSON line"):
        list(jsonl_entries(b'{"custom_id": "a"}\n\n{"custom_id": "b"', "out-7"))
    with pytest.raises(BatchError, match=r"file out-7:1: a JSON list"):
        list(jsonl_entries(b"[1, 2]\n", "out-7"))


def test_the_bytes_of_a_file_whatever_litellm_hands_back():
    data = b'{"custom_id": "a"}\n'
    binary = HttpxBinaryResponseContent(httpx.Response(200, content=data))  # what litellm's file_content returns

    class Readable:  # an object with only read(), as a streamed body offers
        def read(self):
            return data

    for found in (binary, data, data.decode(), bytearray(data), Readable()):
        assert file_bytes(found) == data, type(found)
    with pytest.raises(BatchError, match="no bytes"):
        file_bytes(object())
