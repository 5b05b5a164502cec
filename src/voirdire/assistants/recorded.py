"""Recorded rewrites: precomputed rewrites read from a file (a BEIR-style JSONL corpus such as the
Cocktail benchmark's ``llama-2-7b-chat`` corpora, or ``id<TAB>text``), matched to the sample."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

from ..errors import InputError
from ..formats import jsonl_lines, text_lines


def _first_content_line(path: Path) -> str:
    for _, line in text_lines(path):
        if line.strip():
            return line.strip()
    return ""


def _jsonl_records(path: Path) -> Iterator[tuple[int, str, str]]:
    for number, record in jsonl_lines(path):
        if not isinstance(record, dict) or "_id" not in record or "text" not in record:
            raise InputError(
                "a rewrite record needs '_id' and 'text' (BEIR corpus format)",
                path=path,
                line=number,
            )
        if not isinstance(record["text"], str):
            raise InputError("'text' must be a string", path=path, line=number)
        yield number, str(record["_id"]).strip(), record["text"]


_TSV_HEADERS = {("id", "text"), ("_id", "text"), ("doc_id", "text")}


def _tsv_records(path: Path) -> Iterator[tuple[int, str, str]]:
    first = True
    for number, line in text_lines(path):
        if not line.strip():
            continue
        doc_id, sep, text = line.partition("\t")
        if not sep or not doc_id.strip():
            raise InputError("a rewrite line must be 'id<TAB>text'", path=path, line=number)
        if first and (doc_id.strip().lower(), text.strip().lower()) in _TSV_HEADERS:
            first = False
            continue  # a header line
        first = False
        yield number, doc_id.strip(), text


def read_recorded_rewrites(path: str | Path) -> dict[str, str]:
    """Passage id -> rewritten text from a recorded rewrite corpus.

    A BEIR-style JSONL corpus (``{"_id", "text"}`` per line; ``title`` is ignored) or a TSV
    of ``id<TAB>text`` (an ``id<TAB>text`` header line is skipped). The format follows the
    suffix (.jsonl/.json, .tsv/.txt), else the first non-empty line (``{`` opens JSONL).
    Empty lines are skipped; the same id twice is tolerated with the same text and an error
    naming both lines with two different texts.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json"):
        records = _jsonl_records(path)
    elif suffix in (".tsv", ".txt"):
        records = _tsv_records(path)
    else:
        records = _jsonl_records(path) if _first_content_line(path).startswith("{") else _tsv_records(path)
    rewrites: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, doc_id, text in records:
        if doc_id in rewrites and rewrites[doc_id] != text:
            raise InputError(
                f"passage {doc_id!r} has two different rewrites (first on line {lines[doc_id]})",
                path=path,
                line=number,
            )
        rewrites.setdefault(doc_id, text)
        lines.setdefault(doc_id, number)
    if not rewrites:
        raise InputError("no rewrites in the file", path=path)
    return rewrites


def match_rewrites(
    rewrites: Mapping[str, str],
    needed: Collection[str],
    known: Collection[str] | None,
    path: str,
) -> tuple[dict[str, str], list[str]]:
    """The rewrites of the ``needed`` passages, and the needed passages without one.

    An id of the file that is no passage of the dataset (not in ``known``, when given) is an
    error: the file was made for another corpus or another id scheme, and matching it
    silently would leave the sample without rewrites.
    """
    if known is not None:
        known_set = set(known)
        unknown = [d for d in rewrites if d not in known_set]
        if unknown:
            raise InputError(
                f"{len(unknown)} id(s) are not passages of the dataset, first: {unknown[0]!r}",
                path=path,
            )
    needed_sorted = sorted(set(needed))
    found = {d: rewrites[d] for d in needed_sorted if d in rewrites}
    return found, [d for d in needed_sorted if d not in rewrites]
