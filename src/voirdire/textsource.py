"""The texts of the passages an audit reads, fetched from a collection too big to read whole.

TREC RAG 2024 and 2025 judge segments of MS MARCO v2.1 (113,520,750 of them). A dataset with
``texts:`` reads the texts of exactly the passages its needed pairs name (the human-judged pairs
in the top depth of any system: what the judges, the length audit, the probes and the gamed
system read) from one of three sources (docs/trec-rag.md):

* ``prebuilt: NAME``: a Pyserini prebuilt Lucene index that stores the raw documents, such as
  ``msmarco-v2.1-doc-segmented`` (downloaded by Pyserini on first use; the ``-slim`` variants
  store no text and cannot be read);
* ``index: PATH``: a local Lucene index with stored raw documents (Anserini's
  ``MsMarcoV2DocCollection`` over the official shards, or a ``JsonCollection`` index);
* ``segments: PATH``: the official JSONL shards themselves (``msmarco_v2.1_doc_segmented_XX.json.gz``,
  a folder of them, one file or a glob), streamed line by line: a shard is opened only if a
  needed segment id names its number (``msmarco_v2.1_doc_XX_...``), and read only until every
  needed segment of it is found.

A segment's text is its ``fields`` joined by a newline (default: the document's title, then the
segment), the same from the index (its stored raw JSON) and from the shards. A needed passage
that is in neither is counted and said in the log by the job; it is never given an empty text.

Pyserini (and Java) are imported lazily, by :func:`index_texts` only.
"""

from __future__ import annotations

import glob
import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path

from .errors import InputError
from .formats import text_lines

SOURCES = ("prebuilt", "index", "segments")
DEFAULT_FIELDS = ("title", "segment")
"""What a segment's text is made of, in order: its document's title (a segment rarely names its
subject) and the segment itself. ``headings`` (every subheading of the whole document) is left out."""

SHARD_SUFFIXES = (".json", ".json.gz", ".jsonl", ".jsonl.gz")
_DOCID = re.compile(r'"docid"\s*:\s*"((?:[^"\\]|\\.)*)"')
_SHARD_OF_ID = re.compile(r"^msmarco_v2\.1_doc_(\d+)_")
_SHARD_OF_FILE = re.compile(r"msmarco_v2\.1_doc_segmented_(\d+)\.json")


def source_of(spec: Mapping) -> tuple[str, str]:
    """``(kind, where)`` of a dataset's ``texts:`` entry: exactly one of :data:`SOURCES`."""
    given = [kind for kind in SOURCES if kind in spec]
    if len(given) != 1:
        raise InputError(f"give exactly one of {', '.join(SOURCES)} (got {', '.join(given) or 'none'})")
    return given[0], str(spec[given[0]])


def record_text(record: Mapping, fields: Sequence[str] = DEFAULT_FIELDS) -> str | None:
    """The text of one stored record: an MS MARCO v2.1 segment's ``fields`` that are not empty,
    joined by a newline; a ``JsonCollection`` document's ``contents`` (or ``text``) when it has none
    of them; None when it has neither."""
    parts = [record[f].strip() for f in fields if isinstance(record.get(f), str) and record[f].strip()]
    if parts:
        return "\n".join(parts)
    for key in ("contents", "text"):
        if isinstance(record.get(key), str) and record[key].strip():
            return record[key]
    return None


# ----------------------------------------------------------------------------- the JSONL shards


def shard_files(where: str | Path) -> list[Path]:
    """The shard files ``where`` names: a file, a folder (its ``.json``/``.jsonl`` files, gzipped
    or not) or a glob; none is an error naming it."""
    path = Path(where)
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(SHARD_SUFFIXES))
    else:
        files = sorted(Path(p) for p in glob.glob(str(where)) if Path(p).is_file())
    if not files:
        raise InputError("no segment files (.json, .json.gz, .jsonl, .jsonl.gz) there", path=where)
    return files


def _shard_number(name: str, pattern: re.Pattern) -> int | None:
    found = pattern.search(name)
    return int(found.group(1)) if found else None


def segment_texts(
    where: str | Path | Iterable[str | Path], docids: Collection[str], fields: Sequence[str] = DEFAULT_FIELDS
) -> dict[str, str]:
    """The texts of ``docids`` from the official JSONL segment files, streamed.

    Only lines whose ``docid`` is wanted are parsed. A file named like an official shard
    (``msmarco_v2.1_doc_segmented_XX.json.gz``) is opened only when a wanted id names shard ``XX``,
    and read only until its wanted ids are found; other files are read whole. A line without a
    ``docid``, or a wanted segment that is not valid JSON or has no text, is an error naming the
    file:line. Ids not found are simply absent from the result (the caller counts them)."""
    files = shard_files(where) if isinstance(where, (str, Path)) else [p for w in where for p in shard_files(w)]
    remaining = set(docids)
    by_shard: dict[int, set[str]] = {}
    for docid in remaining:
        number = _shard_number(docid, _SHARD_OF_ID)
        if number is not None:
            by_shard.setdefault(number, set()).add(docid)
    texts: dict[str, str] = {}
    for path in files:
        if not remaining:
            break
        number = _shard_number(path.name, _SHARD_OF_FILE)
        wanted = remaining if number is None else by_shard.get(number, set()) & remaining
        if not wanted:
            continue
        for line_number, line in text_lines(path):
            if not line.strip():
                continue
            found = _DOCID.search(line)
            if found is None:
                raise InputError("a segment line needs a 'docid'", path=path, line=line_number)
            docid = json.loads(f'"{found.group(1)}"')
            if docid not in wanted:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"not valid JSON at column {exc.colno} ({exc.msg})", path=path, line=line_number
                ) from None
            text = record_text(record, fields) if isinstance(record, dict) else None
            if text is None:
                raise InputError(f"segment {docid} has none of the fields {list(fields)}", path=path, line=line_number)
            texts[docid] = text
            wanted.discard(docid)
            remaining.discard(docid)
            if not wanted:
                break
    return texts


# ----------------------------------------------------------------------------- a Lucene index


def open_index(where: str, *, prebuilt: bool):
    """Anserini's searcher (:class:`voirdire.bm25.AnseriniSearcher`) on a local index folder or a
    Pyserini prebuilt index name (Pyserini downloads a prebuilt index on its first use)."""
    from .bm25 import AnseriniSearcher, prepare_jvm

    prepare_jvm()
    if prebuilt:
        from pyserini.search.lucene import LuceneSearcher

        try:
            searcher = LuceneSearcher.from_prebuilt_index(where)
        except ValueError as error:  # an unknown name
            raise InputError(f"Pyserini has no prebuilt index {where!r} ({error})") from None
        if searcher is None:
            raise InputError(f"Pyserini could not open the prebuilt index {where!r}")
        return AnseriniSearcher(searcher.object)
    if not any(Path(where).glob("segments_*")):
        raise InputError("not a Lucene index folder (no segments_* file)", path=where)
    from pyserini.pyclass import autoclass

    return AnseriniSearcher(autoclass("io.anserini.search.SimpleSearcher")(str(where)))


def stored_texts(searcher, docids: Iterable[str], fields: Sequence[str] = DEFAULT_FIELDS) -> dict[str, str]:
    """The texts of ``docids`` from an index's stored raw documents (a ``JsonCollection`` index's
    ``contents`` field when it stores no raw JSON). An id the index lacks is absent from the result;
    a document it holds without a text (a ``-slim`` index stores none) is an error."""
    texts = {}
    for docid in docids:
        fields_found = searcher.stored(docid)
        if fields_found is None:
            continue
        raw, contents = fields_found
        text = None
        if raw:
            try:
                record = json.loads(raw)
            except json.JSONDecodeError:
                record = None
            text = record_text(record, fields) if isinstance(record, dict) else raw
        if text is None and contents:
            text = contents
        if text is None:
            raise InputError(
                f"the index holds {docid} but stores no text for it (an index built without -storeRaw, "
                "or a '-slim' prebuilt one): use the full prebuilt index or the segment files"
            )
        texts[docid] = text
    return texts


def index_texts(
    where: str, docids: Iterable[str], *, prebuilt: bool, fields: Sequence[str] = DEFAULT_FIELDS
) -> dict[str, str]:
    """The texts of ``docids`` from a Lucene index (a folder, or a prebuilt name)."""
    return stored_texts(open_index(where, prebuilt=prebuilt), docids, fields)


def fetch_texts(spec: Mapping, docids: Collection[str]) -> dict[str, str]:
    """The texts of ``docids`` from a dataset's ``texts:`` entry (:func:`source_of`)."""
    kind, where = source_of(spec)
    fields = tuple(spec.get("fields") or DEFAULT_FIELDS)
    if kind == "segments":
        return segment_texts(where, docids, fields)
    return index_texts(where, sorted(docids), prebuilt=kind == "prebuilt", fields=fields)


def needed_texts(spec: Mapping, docids: Iterable[str]) -> tuple[dict[str, str], dict]:
    """The texts of the needed passages ``docids`` from a ``texts:`` entry, and what was found:
    the passages asked, found and missing (the first ten missing ids), for the job's summary and
    log. A missing passage has no text: the judges leave its pairs uncovered (Table 2's coverage),
    the length audit, the probes and the gamed system leave it out and count it."""
    wanted = sorted(set(docids))
    texts = fetch_texts(spec, wanted)
    missing = [docid for docid in wanted if docid not in texts]
    kind, where = source_of(spec)
    summary = {
        "source": kind,
        "where": where,
        "fields": list(spec.get("fields") or DEFAULT_FIELDS),
        "passages": len(wanted),
        "found": len(texts),
        "missing": len(missing),
        "first_missing": missing[:10],
    }
    return texts, summary
