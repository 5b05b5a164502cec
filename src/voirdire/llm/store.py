"""The call store: every LLM answer of every purpose, keyed by its request, in SQLite.

One schema fits judges, rankers, assistants and probes: the purpose, the
request key, the ids the caller gives (query, passage, pair, persona, provenance ... as a
JSON object), the caller's name, the model and the version string the provider returned,
the raw answer (and the first token's ``top_logprobs`` when they were asked for), what
the caller's acceptance rule read from it (``status`` ``ok`` or ``unparsed``, ``value``,
``rule``), tokens, cost, latency and time.

A row is written and committed the moment its call returns, so a job killed with
``kill -9`` loses only the calls in flight, and a rerun asks only for missing keys.
Transport failures (timeouts, 429, 5xx) are never written. Rows are inserted with
``INSERT OR IGNORE`` on the key, so two writers can never duplicate an answer.

Layout: one store file per LLM job (dataset x judge x provenance; one per ranker), under
``results/{dataset}/judgments/{provenance}/``. SQLite's WAL mode and locks are safe among
processes of one machine; on NFS/Lustre they are not, which is why each job writes a shard
of its own and other jobs only read finished shards (docs/configuration.md, LLM judges).

A request's key can change between releases. A caller that knows an older key of a request
passes it as an *alias*: an answer stored under it answers the request, and the first lookup
re-keys the row (:meth:`Store.adopt`), so paid answers are never asked for again. Stores of
an older schema are migrated when opened (voirdire 0.1's: :mod:`voirdire.llm.legacy`).

A judge that judges through a provider's batch API (:mod:`voirdire.llm.batch`) keeps its batches
beside its answers, in two more tables of the same file: ``batches`` (the uploaded input file's
id, the provider's batch id once it is known, the provider's last status, whether its answers
are read) and ``batch_calls`` (each request key a batch carries, and what became of it:
answered, not accepted, an error line, not run). A killed job's rerun reads them and picks up
its batches instead of submitting the same calls again.

No API key, header or other secret ever reaches the store: keys hash the request body only, and
the batch tables hold ids, statuses, counts and error messages redacted of the key.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import legacy

SCHEMA_VERSION = "2"

PRICE_KNOWN = "price_known:"
"""``meta`` rows ``price_known:{cost map}:{model}`` = ``1`` or ``0``: whether that cost map prices
``model`` (:func:`voirdire.llm.calls.price_known`), kept by the job whose calls were priced (its
summary's ``price_known``, asked of litellm once it is imported) and carried with copied answers. Rows of ``meta`` only: a store without them opens as before (its
price is asked of litellm), and older code reads a store with them (the schema is unchanged)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    key TEXT PRIMARY KEY,
    purpose TEXT NOT NULL,
    caller TEXT NOT NULL,
    items TEXT NOT NULL,
    sample INTEGER NOT NULL,
    model TEXT NOT NULL,
    model_version TEXT,
    raw TEXT,
    logprobs TEXT,
    status TEXT NOT NULL CHECK (status IN ('ok', 'unparsed')),
    value TEXT,
    rule TEXT,
    attempts INTEGER NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    cost REAL NOT NULL,
    latency_s REAL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS calls_caller ON calls (purpose, caller);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS batches (
    input_file_id TEXT PRIMARY KEY,
    batch_id TEXT,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('submitting', 'submitted', 'read')),
    provider_status TEXT,
    requests INTEGER NOT NULL,
    created REAL NOT NULL,
    finished REAL,
    counts TEXT
);
CREATE TABLE IF NOT EXISTS batch_calls (
    input_file_id TEXT NOT NULL,
    key TEXT NOT NULL,
    outcome TEXT,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    cost REAL,
    detail TEXT,
    PRIMARY KEY (input_file_id, key)
);
CREATE INDEX IF NOT EXISTS batch_calls_key ON batch_calls (key);
"""


@dataclass(frozen=True)
class Record:
    """One stored answer (see the module docstring for what each field holds)."""

    key: str
    purpose: str
    caller: str
    items: dict[str, str] = field(hash=False)
    sample: int
    model: str
    model_version: str | None
    raw: str | None
    logprobs: list[dict] | None = field(hash=False)
    status: str
    value: Any = field(hash=False)
    rule: str | None
    attempts: int
    prompt_tokens: int | None
    completion_tokens: int | None
    cost: float
    latency_s: float | None
    created: float

    def row(self) -> tuple:
        # the fields as they are (dataclasses.astuple would deep-copy the logprobs first: a third
        # of a put's CPU), the structured ones as JSON
        return tuple(
            json.dumps(value, ensure_ascii=False) if name in _JSON and value is not None else value
            for name, value in ((name, getattr(self, name)) for name in COLUMNS)
        )

    @classmethod
    def from_row(cls, row: tuple) -> Record:
        values = list(row)
        for name in ("items", "logprobs", "value"):
            index = COLUMNS.index(name)
            if values[index] is not None:
                values[index] = json.loads(values[index])
        return cls(*values)


COLUMNS = tuple(Record.__dataclass_fields__)
_JSON = frozenset({"items", "logprobs", "value"})
"""The columns stored as JSON text."""
_CHUNK = 500


def _select(db: sqlite3.Connection, columns: str, keys: Iterable[str]) -> Iterator[tuple]:
    """``columns`` of the rows stored under ``keys``, in chunks SQLite's parameter limit allows."""
    keys = list(keys)
    for start in range(0, len(keys), _CHUNK):
        chunk = keys[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        yield from db.execute(f"SELECT {columns} FROM calls WHERE key IN ({marks})", chunk)


class Store:
    """A SQLite call store (WAL mode, one connection per process)."""

    def __init__(self, path: str | Path, *, timeout_s: float = 60.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=timeout_s, isolation_level=None)
        self._db.execute(f"PRAGMA busy_timeout={int(timeout_s * 1000)}")
        self._wal(timeout_s)
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        self.migrated = self._migrate()

    def _wal(self, timeout_s: float) -> None:
        """Switch to WAL mode (persistent in the file). Two processes opening a new file at once
        can see SQLITE_BUSY here, which SQLite's busy handler does not cover: retry until the
        timeout."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if self._db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    self._db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _migrate(self) -> int:
        """Migrate a store of an older schema (voirdire 0.1's, :func:`legacy.migrate`) and stamp
        today's schema version; returns the rows moved."""
        if not legacy.found(self._db):
            if not self._db.execute("SELECT 1 FROM meta WHERE name = 'schema_version'").fetchone():
                # written once, so opening a store again (once per ranking batch) stays read-only
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
            return 0
        self._db.execute("BEGIN IMMEDIATE")
        try:
            moved = legacy.migrate(self._db)  # 0 when another process migrated it while we waited
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (SCHEMA_VERSION,))
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return moved

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _select(self, columns: str, keys: Iterable[str]) -> Iterator[tuple]:
        return _select(self._db, columns, keys)

    def existing(self, keys: Iterable[str]) -> set[str]:
        """Which of ``keys`` are stored already."""
        return {row[0] for row in self._select("key", keys)}

    def put(self, record: Record) -> bool:
        """Insert one answer, committed at once; False if its key was already stored."""
        marks = ",".join("?" * len(COLUMNS))
        cursor = self._db.execute(f"INSERT OR IGNORE INTO calls ({','.join(COLUMNS)}) VALUES ({marks})", record.row())
        return cursor.rowcount == 1

    def get(self, keys: Iterable[str]) -> Iterator[Record]:
        for row in self._select(",".join(COLUMNS), keys):
            yield Record.from_row(row)

    def adopt(self, alias: str, record: Record) -> bool:
        """Replace the row stored under ``alias`` (an older key) by ``record``, in one transaction.

        ``record`` carries today's key, ids and reading of the same answer. False when no
        row is stored under ``alias`` (or another process adopted it first).
        """
        self._db.execute("BEGIN IMMEDIATE")
        try:
            gone = self._db.execute("DELETE FROM calls WHERE key = ?", (alias,)).rowcount
            if gone:
                self.put(record)
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        return bool(gone)

    def copy_from(self, seeds: Iterable[str | Path], keys: Iterable[str]) -> dict[str, Record]:
        """Stored answers of ``keys`` in other, finished stores, read without writing to them.

        A job reads the shard of a job it depends on (only finished shards are
        read), e.g. the ``rewritten-*`` judging job reuses the ``original`` job's answers for
        every pair whose text the rewrite left alone. Returns the first match of each key.
        """
        wanted = set(keys)
        found: dict[str, Record] = {}
        for seed in seeds:
            if not wanted - found.keys() or not Path(seed).is_file():
                continue
            db = sqlite3.connect(f"file:{Path(seed).resolve()}?mode=ro", uri=True)
            try:
                for row in _select(db, ",".join(COLUMNS), sorted(wanted - found.keys())):
                    found.setdefault(row[0], Record.from_row(row))
            finally:
                db.close()
        return found

    def meta(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT name, value FROM meta"))

    def price_known(self, model: str, cost_map: str) -> bool | None:
        """Whether ``cost_map`` prices ``model``, as kept here; None when this store cannot say."""
        row = self._db.execute(
            "SELECT value FROM meta WHERE name = ?", (f"{PRICE_KNOWN}{cost_map}:{model}",)
        ).fetchone()
        return None if row is None else row[0] == "1"

    def keep_price_known(self, model: str, cost_map: str, known: bool) -> None:
        """Keep whether ``cost_map`` prices ``model`` (written only when it is not kept already)."""
        if self.price_known(model, cost_map) is not known:
            name = f"{PRICE_KNOWN}{cost_map}:{model}"
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (name, "1" if known else "0"))

    def copy_prices_from(self, seeds: Iterable[str | Path]) -> int:
        """Keep the prices other, finished stores keep (those of the answers copied from them), read
        without writing to them; returns how many were new here."""
        rows: dict[str, str] = {}
        for seed in seeds:
            if not Path(seed).is_file():
                continue
            db = sqlite3.connect(f"file:{Path(seed).resolve()}?mode=ro", uri=True)
            try:
                found = db.execute("SELECT name, value FROM meta WHERE name LIKE ?", (f"{PRICE_KNOWN}%",)).fetchall()
            except sqlite3.OperationalError:  # no meta table: a store no release of this code opened
                found = []
            finally:
                db.close()
            for name, value in found:
                rows.setdefault(name, value)
        have = self.meta()
        new = {name: value for name, value in rows.items() if name not in have}
        if new:
            self._db.executemany("INSERT OR IGNORE INTO meta VALUES (?, ?)", new.items())
        return len(new)

    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """Writes inside commit together or not at all (a kill in between leaves none of them)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # ------------------------------------------------------------------ provider batches
    def batch_begin(self, input_file_id: str, provider: str, model: str, keys: Sequence[str]) -> None:
        """Record an uploaded batch input file and the keys it carries, before the batch is created."""
        with self.transaction():
            self._db.execute(
                "INSERT INTO batches (input_file_id, provider, model, state, requests, created) "
                "VALUES (?, ?, ?, 'submitting', ?, ?)",
                (input_file_id, provider, model, len(keys), time.time()),
            )
            self._db.executemany(
                "INSERT INTO batch_calls (input_file_id, key) VALUES (?, ?)", ((input_file_id, k) for k in keys)
            )

    def batch_submitted(self, input_file_id: str, batch_id: str) -> None:
        """The provider's id of the batch of ``input_file_id``: it runs (and is paid for) now."""
        self._db.execute(
            "UPDATE batches SET batch_id = ?, state = 'submitted' WHERE input_file_id = ?", (batch_id, input_file_id)
        )

    def batch_status(self, input_file_id: str, provider_status: str) -> None:
        self._db.execute(
            "UPDATE batches SET provider_status = ? WHERE input_file_id = ?", (provider_status, input_file_id)
        )

    def batch_read(self, input_file_id: str, outcomes: Mapping[str, BatchOutcome], counts: Mapping[str, int]) -> None:
        """What became of each key of a finished batch; its answers are read (call inside
        :meth:`transaction`, with the answers' :meth:`put`, so that both land or neither)."""
        self._db.executemany(
            "UPDATE batch_calls SET outcome = ?, prompt_tokens = ?, completion_tokens = ?, cost = ?, detail = ? "
            "WHERE input_file_id = ? AND key = ?",
            (
                (o.outcome, o.prompt_tokens, o.completion_tokens, o.cost, o.detail, input_file_id, key)
                for key, o in outcomes.items()
            ),
        )
        self._db.execute(
            "UPDATE batches SET state = 'read', finished = ?, counts = ? WHERE input_file_id = ?",
            (time.time(), json.dumps(dict(counts), sort_keys=True), input_file_id),
        )

    def batches(self, *, unread: bool = False) -> list[BatchRow]:
        """The batches recorded in this store (only those whose answers are not read yet: ``unread``), oldest first."""
        where = " WHERE state != 'read'" if unread else ""
        rows = self._db.execute(f"SELECT {','.join(BATCH_COLUMNS)} FROM batches{where} ORDER BY created, rowid")
        return [BatchRow(*row) for row in rows]

    def batch_keys(self, input_file_id: str) -> list[str]:
        return [
            row[0] for row in self._db.execute("SELECT key FROM batch_calls WHERE input_file_id = ?", (input_file_id,))
        ]

    def batch_history(self, keys: Iterable[str]) -> dict[str, list[BatchOutcome]]:
        """Every read outcome of each of ``keys`` in a batch, oldest first (keys never batched are absent)."""
        keys = list(keys)
        history: dict[str, list[BatchOutcome]] = {}
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                "SELECT c.key, c.outcome, c.prompt_tokens, c.completion_tokens, c.cost, c.detail FROM batch_calls c "
                f"JOIN batches b USING (input_file_id) WHERE b.state = 'read' AND c.key IN ({marks}) "
                "ORDER BY b.created, b.rowid",
                chunk,
            )
            for key, *outcome in rows:
                history.setdefault(key, []).append(BatchOutcome(*outcome))
        return history

    def batch_spent(self) -> dict[str, float]:
        """What the batches of this store were paid for: answers (stored or not), their tokens and cost."""
        row = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), "
            "COALESCE(SUM(cost), 0) FROM batch_calls WHERE outcome IN ('answered', 'unaccepted', 'unused')"
        ).fetchone()
        return dict(zip(("answers", "prompt_tokens", "completion_tokens", "cost"), row, strict=True))


@dataclass(frozen=True)
class BatchOutcome:
    """What became of one request in one batch: ``answered`` (stored), ``unaccepted`` (an answer
    the caller's rule did not accept: paid, asked again), ``unused`` (answered, but no run asked
    for it: paid, not stored), ``error`` (an error line: not paid), ``missing`` (not run: the batch
    expired or was cancelled), ``failed`` (not run: the batch failed); tokens and cost of a paid
    answer; an error's message."""

    outcome: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost: float | None = None
    detail: str | None = None


@dataclass(frozen=True)
class BatchRow:
    """One batch recorded in a store (see :meth:`Store.batches`)."""

    input_file_id: str
    batch_id: str | None
    provider: str
    model: str
    state: str  # submitting (input uploaded, batch maybe not created) | submitted | read
    provider_status: str | None
    requests: int
    created: float
    finished: float | None
    counts: str | None


BATCH_COLUMNS = tuple(BatchRow.__dataclass_fields__)
