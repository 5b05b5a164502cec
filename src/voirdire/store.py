"""The judgment store: every LLM call, keyed by a hash of the full request, in SQLite.

SPEC section 3. A row is written (and committed) the moment a call finishes, so a job killed
with ``kill -9`` loses only the calls in flight, and a rerun asks only for missing keys.
Transport failures (timeouts, 429, 5xx) are never written; an answer that could not be
parsed is written with status ``unparsed`` and its raw text. Rows are inserted with
``INSERT OR IGNORE`` on the primary key, so two writers can never duplicate a judgment.

Layout: one store file per judging job (dataset x judge x provenance), under
``results/{dataset}/judgments/{provenance}/{judge}.sqlite``. SQLite's WAL mode and locks are
safe among processes of one machine (several Snakemake jobs, or two jobs sharing a file);
on NFS/Lustre they are not, which is why each job writes a shard of its own and other
jobs only read finished shards (SPEC section 3, "Clusters").

No API key, header or other secret is ever passed to the store: the key hashes only the
model, messages and sampling parameters.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS judgments (
    key TEXT PRIMARY KEY,
    judge TEXT NOT NULL,
    query_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    provenance TEXT NOT NULL,
    sample INTEGER NOT NULL,
    model TEXT NOT NULL,
    model_version TEXT,
    raw TEXT,
    label INTEGER,
    status TEXT NOT NULL CHECK (status IN ('ok', 'unparsed')),
    parse_rule TEXT,
    attempts INTEGER NOT NULL,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    cost REAL NOT NULL,
    latency_s REAL,
    passage_chars INTEGER,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS judgments_pair ON judgments (judge, provenance, query_id, doc_id);
"""


def request_key(request: dict) -> str:
    """SHA-256 of a request (model, messages, every sampling parameter, sample index, template hash)."""
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Judgment:
    key: str
    judge: str
    query_id: str
    doc_id: str
    provenance: str
    sample: int
    model: str
    model_version: str | None
    raw: str | None
    label: int | None
    status: str
    parse_rule: str | None
    attempts: int
    prompt_tokens: int | None
    completion_tokens: int | None
    cost: float
    latency_s: float | None
    passage_chars: int | None
    created: float


COLUMNS = tuple(Judgment.__dataclass_fields__)


class Store:
    """A SQLite judgment store (WAL mode, one connection per process)."""

    def __init__(self, path: str | Path, *, timeout_s: float = 60.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=timeout_s, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(f"PRAGMA busy_timeout={int(timeout_s * 1000)}")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def existing(self, keys: Iterable[str]) -> set[str]:
        """Which of ``keys`` are stored already."""
        keys = list(keys)
        found: set[str] = set()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(f"SELECT key FROM judgments WHERE key IN ({marks})", chunk)
            found.update(row[0] for row in rows)
        return found

    def put(self, judgment: Judgment) -> bool:
        """Insert one judgment, committed at once; False if the key was already stored."""
        values = asdict(judgment)
        marks = ",".join("?" * len(COLUMNS))
        cursor = self._db.execute(
            f"INSERT OR IGNORE INTO judgments ({','.join(COLUMNS)}) VALUES ({marks})",
            [values[c] for c in COLUMNS],
        )
        return cursor.rowcount == 1

    def get(self, keys: Iterable[str]) -> Iterator[Judgment]:
        keys = list(keys)
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT {','.join(COLUMNS)} FROM judgments WHERE key IN ({marks})", chunk
            )
            for row in rows:
                yield Judgment(*row)

    def count(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0]


def now() -> float:
    return time.time()
