"""Readers and writers for the formats that pass between rules.

TREC qrels (``qid iter docid grade``), TREC runs (``qid Q0 docid rank score tag``), topics
TSV (``qid<TAB>text``), JSONL corpora (``{"id", "contents"}``, as Pyserini's JsonCollection)
and RankGPT / rank_llm ``retrieve_results`` JSON (candidates with passage texts).

Every reader validates as it goes and raises :class:`~voirdire.errors.InputError` naming the
file and line of the first problem. Every writer writes to a temporary file beside the
target and renames it, so a killed job never leaves a half-written output behind.

Tables use ir_measures' column names: ``query_id``, ``doc_id``, ``relevance``, ``score``.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pandas as pd

from .errors import InputError

QRELS_COLUMNS = ["query_id", "doc_id", "relevance"]
RUN_COLUMNS = ["query_id", "doc_id", "rank", "score"]


@contextlib.contextmanager
def atomic_write(path: str | Path, mode: str = "w") -> Iterator[IO]:
    """Open a temporary file beside ``path``; rename it over ``path`` only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _require_file(path: str | Path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    return path


def text_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Every line of a UTF-8 text file with its 1-based number, without the line end.

    A byte-order mark at the start is dropped (``utf-8-sig``: ``\ufeffq01`` would otherwise
    be a query id of its own). Bytes that are not UTF-8 are an error naming the byte offset
    and the line, never a bare ``UnicodeDecodeError``. Streams, so corpora of any size work.
    """
    path = _require_file(path)
    offset = 0
    with open_binary(path) as fh:
        for number, raw in enumerate(fh, start=1):
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                bom = 3 if number == 1 and raw.startswith(b"\xef\xbb\xbf") else 0
                raise InputError(
                    f"not UTF-8 at byte {offset + exc.start + bom} (line {number}); save the file as UTF-8",
                    path=path,
                    line=number,
                ) from None
            offset += len(raw)
            yield number, text.rstrip("\r\n")


def is_gzip(path: str | Path) -> bool:
    """Whether a file is gzip-compressed: by its magic bytes, whatever its name says."""
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def open_binary(path: str | Path) -> IO[bytes]:
    """Open a file for reading bytes, decompressing it on the fly when it is gzip
    (``run.txt.gz``, ``qrels.txt.gz``: TREC releases ship both)."""
    return gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")


def read_text(path: str | Path) -> str:
    """A whole UTF-8 text file (byte-order mark dropped, non-UTF-8 named as in :func:`text_lines`)."""
    return "\n".join(line for _, line in text_lines(path))


def _lines(path: Path) -> Iterator[tuple[int, list[str]]]:
    """Non-blank lines split on whitespace, with 1-based line numbers."""
    for number, line in text_lines(path):
        fields = line.split()
        if fields:
            yield number, fields


# ----------------------------------------------------------------------------- qrels


def read_qrels(path: str | Path, scale: tuple[int, int] = (0, 3), *, allow_empty: bool = False) -> pd.DataFrame:
    """Read a TREC qrels file (plain or gzip), checking every grade against ``scale`` (inclusive).

    Identical repeated lines are tolerated (kept once); the same (qid, docid) with two
    different grades is an error that names both lines.
    """
    return read_qrels_counted(path, scale, allow_empty=allow_empty)[0]


def read_qrels_counted(
    path: str | Path, scale: tuple[int, int] = (0, 3), *, allow_empty: bool = False, invalid: str = "error"
) -> tuple[pd.DataFrame, dict[str, int]]:
    """Read a TREC qrels file, and count what ``invalid="drop"`` left out.

    Lines that cannot be used as written -- a grade outside the declared scale, or a pair
    graded twice with different grades -- are an error naming the file:line by default. With
    ``invalid="drop"`` the out-of-scale lines and every line of a conflicting pair (both
    sides: neither grade can be trusted) are dropped and counted. A line that is not a qrels
    line at all (field count, a grade that is not an integer) is always an error.
    """
    path = _require_file(path)
    low, high = scale
    fast = _read_qrels_fast(path, low, high)
    if fast is not None:  # nothing to drop or to report
        return fast, {"lines_out_of_scale": 0, "conflicting_pairs": 0, "conflicting_lines": 0}
    seen: dict[tuple[str, str], tuple[int, int]] = {}
    conflicts: dict[tuple[str, str], int] = {}
    out_of_scale = 0
    for number, fields in _lines(path):
        if len(fields) != 4:
            raise InputError(
                f"qrels line has {len(fields)} fields, expected 4 (qid iter docid grade)",
                path=path,
                line=number,
            )
        qid, _, docid, grade_text = fields
        try:
            grade = int(grade_text)
        except ValueError:
            raise InputError(f"grade {grade_text!r} is not an integer", path=path, line=number) from None
        if not low <= grade <= high:
            if invalid == "drop":
                out_of_scale += 1
                continue
            raise InputError(
                f"grade {grade} is outside the declared scale {low}..{high}"
                " (invalid_labels: drop on a recorded judge drops and counts such lines)",
                path=path,
                line=number,
            )
        previous = seen.get((qid, docid))
        if previous is not None and previous[0] != grade:
            if invalid == "drop":
                conflicts[qid, docid] = conflicts.get((qid, docid), 1) + 1
                continue
            raise InputError(
                f"conflicting grades for query {qid} document {docid}: {previous[0]} (line {previous[1]}) and {grade}",
                path=path,
                line=number,
            )
        seen.setdefault((qid, docid), (grade, number))
    for pair in conflicts:
        del seen[pair]
    if not seen and not allow_empty:
        raise InputError("qrels file has no judgments", path=path)
    frame = pd.DataFrame([(q, d, g) for (q, d), (g, _) in seen.items()], columns=QRELS_COLUMNS).astype(
        {"query_id": str, "doc_id": str, "relevance": int}
    )
    counts = {
        "lines_out_of_scale": out_of_scale,
        "conflicting_pairs": len(conflicts),
        "conflicting_lines": sum(conflicts.values()),
    }
    return frame, counts


_NOT_PLAIN = re.compile(rb"[^\x20-\x7e\t\n]")


def _read_qrels_fast(path: Path, low: int, high: int) -> pd.DataFrame | None:
    """The qrels as :func:`read_qrels_counted` reads them (C-parsed), or None when anything in
    the file needs its line-by-line reading: a line of other than 4 fields, a grade that is not
    plain digits or lies outside ``low..high``, a pair given twice, no line at all, and any byte
    but printable ASCII, tab and newline (where the C parser and ``str.split`` could part a line
    differently: a carriage return, a form feed, Unicode spaces, a byte-order mark)."""
    with open_binary(path) as fh:
        data = fh.read()
    if _NOT_PLAIN.search(data):
        return None
    try:
        frame = pd.read_csv(
            io.BytesIO(data),
            sep=r"\s+",
            header=None,
            dtype=str,
            keep_default_na=False,
            na_values=[],
            engine="c",
            comment=None,
            skip_blank_lines=True,
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError):
        return None
    if frame.shape[1] != 4 or frame.empty or (frame == "").any().any():
        return None
    if not frame[3].str.fullmatch(r"-?[0-9]{1,9}").all():
        return None
    grade = frame[3].astype(int)
    if not grade.between(low, high).all() or frame.duplicated([0, 2]).any():
        return None
    return pd.DataFrame({"query_id": frame[0], "doc_id": frame[2], "relevance": grade}).astype(
        {"query_id": str, "doc_id": str, "relevance": int}
    )


def write_qrels(qrels: pd.DataFrame, path: str | Path) -> None:
    columns = (qrels["query_id"].tolist(), qrels["doc_id"].tolist(), qrels["relevance"].tolist())
    with atomic_write(path) as fh:
        fh.writelines(f"{qid} 0 {doc} {int(grade)}\n" for qid, doc, grade in zip(*columns))


# ----------------------------------------------------------------------------- runs


def read_run(path: str | Path) -> pd.DataFrame:
    """Read a TREC run (plain or gzip); a docid repeated within one query is an error.

    Runs of recorded systems are large (1,000 documents x 50 queries), so a well-formed file is
    read by a parser in C: Arrow's, for the usual form (fields one space apart, as this project
    writes its runs), else pandas' (any whitespace between fields); any file either finds fault
    with is read again line by line, which names the file:line of the first problem.
    """
    path = _require_file(path)
    for reader in (_read_run_arrow, _read_run_pandas):
        found = reader(path)
        if found is not None:
            return found
    return _read_run_checked(path)


_TREC_RUN_FIELDS = ("query_id", "q0", "doc_id", "rank", "score", "tag")


def _read_run_arrow(path: Path) -> pd.DataFrame | None:
    """The run by Arrow's CSV reader (one thread; a double quote is part of its field, as for
    the other readers), or None for anything but six non-empty fields one space apart on every
    non-blank line, in UTF-8 without a byte-order mark: pandas' reader takes those. Four times
    faster than pandas' on a run of 50,000 lines."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as csv

    strings = {name: pa.string() for name in _TREC_RUN_FIELDS}
    try:
        with open_binary(path) as fh:
            if fh.read(3) == b"\xef\xbb\xbf":
                return None
            fh.seek(0)
            table = csv.read_csv(
                fh,
                read_options=csv.ReadOptions(column_names=list(_TREC_RUN_FIELDS), use_threads=False),
                parse_options=csv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False),
                convert_options=csv.ConvertOptions(column_types=strings, strings_can_be_null=False),
            )
    except (pa.ArrowInvalid, UnicodeDecodeError, OSError, EOFError):
        return None
    if table.num_rows == 0 or any(pc.any(pc.equal(table[name], "")).as_py() for name in _TREC_RUN_FIELDS):
        return None  # a space before a line's end (or after its start): an empty field
    return _run_frame(
        pd.array(table["query_id"], dtype="str"), pd.array(table["doc_id"], dtype="str"), table["rank"], table["score"]
    )


def _read_run_pandas(path: Path) -> pd.DataFrame | None:
    """The run by pandas' C parser (fields apart by any whitespace), or None when anything in
    it needs the line-by-line reader's diagnosis."""
    try:
        with open_binary(path) as fh:  # as Python strings: only the id columns are kept, made str at the end
            frame = pd.read_csv(
                fh,
                sep=r"\s+",
                header=None,
                dtype=object,
                keep_default_na=False,
                na_values=[],
                engine="c",
                comment=None,
                skip_blank_lines=True,
                encoding="utf-8-sig",
                quoting=3,  # csv.QUOTE_NONE: a double quote is part of its field, as the line reader keeps it
            )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError):
        return None
    if frame.shape[1] != 6 or frame.empty or (frame == "").any().any():
        return None
    return _run_frame(frame[0].astype(str), frame[2].astype(str), frame[3], frame[4])


def _run_frame(query_ids, doc_ids, rank_texts, score_texts) -> pd.DataFrame | None:
    """A run's table from its id columns (str) and its rank and score texts, or None where a
    rank or score is no number, a rank is not whole, or a document repeats within a query."""
    rank, score = _numbers(rank_texts), _numbers(score_texts)
    if rank is None or score is None or rank.isna().any() or score.isna().any() or (rank % 1 != 0).any():
        return None
    frame = pd.DataFrame(
        {"query_id": query_ids, "doc_id": doc_ids, "rank": rank.astype(int), "score": score.astype(float)}
    )
    return None if frame.duplicated(["query_id", "doc_id"]).any() else frame


def _numbers(column) -> pd.Series | None:
    """A column of number texts (a pandas column of str, or an Arrow one) as floats, by Arrow's
    parser (correctly rounded, as ``pd.to_numeric`` and ``float`` are, and thirty times faster
    on a run's 50,000 lines); None where a text is no number (``pd.to_numeric`` refuses the
    same texts)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    texts = column if isinstance(column, pa.ChunkedArray | pa.Array) else pa.array(column, type=pa.string())
    try:
        return pd.Series(pc.cast(texts, pa.float64()).to_numpy())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None


def run_tag(path: str | Path) -> str:
    """The run tag (6th column) of a run file's first line."""
    for number, fields in _lines(_require_file(path)):
        if len(fields) != 6:
            raise InputError(
                f"run line has {len(fields)} fields, expected 6 (qid Q0 docid rank score tag)",
                path=path,
                line=number,
            )
        return fields[5]
    raise InputError("run file is empty", path=path)


def _read_run_checked(path: Path) -> pd.DataFrame:
    rows = []
    first_line: dict[tuple[str, str], int] = {}
    for number, fields in _lines(path):
        if len(fields) != 6:
            raise InputError(
                f"run line has {len(fields)} fields, expected 6 (qid Q0 docid rank score tag)",
                path=path,
                line=number,
            )
        qid, _, docid, rank_text, score_text, _tag = fields
        try:
            rank, score = int(rank_text), float(score_text)
        except ValueError:
            raise InputError(
                f"rank {rank_text!r} / score {score_text!r} are not numbers",
                path=path,
                line=number,
            ) from None
        if (qid, docid) in first_line:
            raise InputError(
                f"document {docid} appears twice for query {qid} (first on line {first_line[qid, docid]})",
                path=path,
                line=number,
            )
        first_line[qid, docid] = number
        rows.append((qid, docid, rank, score))
    if not rows:
        raise InputError("run file is empty", path=path)
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def _in_rank_order(run: pd.DataFrame) -> pd.DataFrame:
    return run.sort_values(["query_id", "score", "rank", "doc_id"], ascending=[True, False, True, True])


def trec_eval_order(run: pd.DataFrame) -> pd.DataFrame:
    """A run in the order trec_eval (and so ir_measures' pytrec_eval backend) scores it: per
    query, score descending, then document id descending, whatever the rank column says."""
    return run.sort_values(["query_id", "score", "doc_id"], ascending=[True, False, False], kind="stable")


def ranked(run: pd.DataFrame) -> dict[str, list[str]]:
    """Docids per query in rank order (score descending, then rank, then docid)."""
    return {qid: list(group["doc_id"]) for qid, group in _in_rank_order(run).groupby("query_id", sort=False)}


def run_from_rankings(rankings: dict[str, list[str]]) -> pd.DataFrame:
    """A run whose scores are n..1 down each ranked list (ties impossible)."""
    rows = [
        (qid, docid, rank, float(len(docids) - rank + 1))
        for qid, docids in rankings.items()
        for rank, docid in enumerate(docids, start=1)
    ]
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def write_run(run: pd.DataFrame, path: str | Path, tag: str) -> None:
    """Write a TREC run; ranks are recomputed from scores so the file is self-consistent.

    Scores are written in full (shortest round-trip form): rounding them would tie scores that
    differ, and trec_eval would then order those documents by id instead."""
    tag = tag.replace(" ", "_")
    ordered = _in_rank_order(run)
    ordered = ordered[ordered["query_id"].notna()]  # as a groupby: a line without a query id is not written
    ranks = ordered.groupby("query_id", sort=False).cumcount() + 1  # queries are contiguous once sorted
    columns = (ordered["query_id"].tolist(), ordered["doc_id"].tolist(), ranks.tolist(), ordered["score"].tolist())
    with atomic_write(path) as fh:
        fh.writelines(f"{qid} Q0 {doc} {rank} {float(score)!r} {tag}\n" for qid, doc, rank, score in zip(*columns))


# ----------------------------------------------------------------------------- topics


TOPIC_ID_KEYS = ("id", "qid", "query_id", "topic_id")
TOPIC_TEXT_KEYS = ("narrative", "query", "title", "text")
"""A JSON-lines topics file's keys, tried in order: TREC RAG 2025's ``trec_rag_2025_queries.jsonl``
holds ``id`` and ``narrative`` (docs/trec-rag.md)."""


def _json_topic(number: int, line: str, path: Path) -> tuple[str, str]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON at column {exc.colno} ({exc.msg})", path=path, line=number) from None
    qid = next((record[k] for k in TOPIC_ID_KEYS if isinstance(record, dict) and record.get(k) is not None), None)
    text = next((record[k] for k in TOPIC_TEXT_KEYS if isinstance(record, dict) and isinstance(record.get(k), str)), "")
    if qid is None or not str(qid).strip() or not text.strip():
        raise InputError(
            f"a JSON topic needs an id ({', '.join(TOPIC_ID_KEYS)}) and a text ({', '.join(TOPIC_TEXT_KEYS)})",
            path=path,
            line=number,
        )
    return str(qid).strip(), " ".join(text.split())


def read_topics(path: str | Path) -> dict[str, str]:
    """Read ``qid<TAB>text`` lines (text may contain spaces), or JSON lines (one object a topic:
    :data:`TOPIC_ID_KEYS`, :data:`TOPIC_TEXT_KEYS`)."""
    path = _require_file(path)
    topics: dict[str, str] = {}
    for number, line in text_lines(path):
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            qid, text = _json_topic(number, line, path)
            if qid in topics:
                raise InputError(f"query {qid} is defined twice", path=path, line=number)
            topics[qid] = text
            continue
        qid, sep, text = line.partition("\t")
        if not sep or not qid.strip() or not text.strip():
            raise InputError("topics line must be 'qid<TAB>query text'", path=path, line=number)
        if qid.strip() in topics:
            raise InputError(f"query {qid.strip()} is defined twice", path=path, line=number)
        topics[qid.strip()] = text.strip()
    if not topics:
        raise InputError("topics file has no queries", path=path)
    return topics


def write_topics(topics: dict[str, str], path: str | Path) -> None:
    with atomic_write(path) as fh:
        for qid, text in topics.items():
            fh.write(f"{qid}\t{' '.join(text.split())}\n")


# ----------------------------------------------------------------------------- corpus


def jsonl_lines(path: str | Path) -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed value) of a JSON-lines file, skipping blank lines; a line that
    is not JSON is an error naming the file:line and column."""
    for number, line in text_lines(path):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON at column {exc.colno} ({exc.msg})", path=path, line=number) from None


def read_corpus(path: str | Path) -> Iterator[tuple[str, str]]:
    """Yield (docid, text) from JSONL with ``id``/``docid`` and ``contents``/``text`` keys."""
    path = _require_file(path)
    count = 0
    seen: set[str] = set()
    for number, record in jsonl_lines(path):
        docid = record.get("id", record.get("docid")) if isinstance(record, dict) else None
        text = record.get("contents", record.get("text")) if isinstance(record, dict) else None
        if docid is None or not isinstance(text, str):
            raise InputError("corpus record needs an 'id' and a string 'contents'", path=path, line=number)
        docid = str(docid)
        if docid in seen:
            raise InputError(f"document id {docid} is repeated", path=path, line=number)
        seen.add(docid)
        count += 1
        yield docid, text
    if count == 0:
        raise InputError("corpus is empty", path=path)


def read_passages(path: str | Path) -> dict[str, str]:
    """docid -> text of the pooled passages (the BM25 stage's ``passages.parquet``)."""
    passages = pd.read_parquet(_require_file(path))
    return dict(zip(passages["doc_id"], passages["text"], strict=True))


PAIR_COLUMNS = ["query_id", "doc_id"]


def read_pairs(path: str | Path) -> pd.DataFrame:
    """The (query, passage) pairs a judge must label (the ``needed_pairs`` stage's TSV).

    Ids stay strings as written: no type guessing, and no id such as ``NA`` read as missing.
    """
    pairs = pd.read_csv(_require_file(path), sep="\t", dtype=str, keep_default_na=False, encoding="utf-8-sig")
    if list(pairs.columns[:2]) != PAIR_COLUMNS:
        raise InputError(f"expected the header {' '.join(PAIR_COLUMNS)}, got {list(pairs.columns)}", path=path, line=1)
    return pairs


# ----------------------------------------------------------------------------- RankGPT JSON


def read_rankgpt(path: str | Path) -> tuple[dict[str, str], pd.DataFrame, dict[str, str]]:
    """Read RankGPT / rank_llm ``retrieve_results`` JSON.

    Format: ``[{"query": str, "hits": [{"content", "qid", "docid", "rank", "score"}]}]``.
    Returns (topics, run, passage texts). The run keeps the file's ranks and scores: it is
    the first-stage (BM25) run the file was made from.
    """
    path = _require_file(path)
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON at column {exc.colno} ({exc.msg})", path=path, line=exc.lineno) from None
    if not isinstance(data, list) or not data:
        raise InputError("expected a non-empty JSON list of {query, hits}", path=path)
    topics: dict[str, str] = {}
    texts: dict[str, str] = {}
    rows = []
    for index, entry in enumerate(data):
        where = f"entry {index}"
        if not isinstance(entry, dict) or "query" not in entry or "hits" not in entry:
            raise InputError(f"{where} lacks 'query' or 'hits'", path=path)
        seen: set[str] = set()
        for position, hit in enumerate(entry["hits"], start=1):
            try:
                qid, docid = str(hit["qid"]), str(hit["docid"])
                rank = int(hit.get("rank", position))
                score = float(hit["score"])
                content = hit["content"]
            except (KeyError, TypeError, ValueError) as exc:
                raise InputError(
                    f"{where}, hit {position}: needs qid, docid, score, content ({exc})", path=path
                ) from None
            if topics.setdefault(qid, entry["query"]) != entry["query"]:
                raise InputError(f"{where}: query {qid} has two different texts", path=path)
            if docid in seen:
                raise InputError(f"{where}: document {docid} appears twice for query {qid}", path=path)
            seen.add(docid)
            texts.setdefault(docid, content)
            rows.append((qid, docid, rank, score))
    if not rows:
        raise InputError("no hits in any entry", path=path)
    return topics, pd.DataFrame(rows, columns=RUN_COLUMNS), texts
