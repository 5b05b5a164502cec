"""The Assistants experiment (Balog, Metzler & Qin, SIGIR 2025, §4.3, Figures 4-5): do
judges favour passages an LLM has rewritten?

An *assistant* is an LLM that rewrites a passage ("make it read better"), keeping its
content. If a judge's relevance grade moves when only the wording changed, the judge rewards
the style of machine text rather than the information in it; a ranker whose score moves the
same way would then look better under that judge for reasons that have nothing to do with
relevance (the circularity the paper warns about).

* **Sample.** :func:`balanced_sample` draws the same number of (query, passage) pairs at
  every human grade, so a perfectly calibrated judge would give each grade equally often and
  a shift in either direction is visible at every grade.
* **Rewrites.** Rewrites come from an assistant run here or from a recorded corpus
  (:func:`read_recorded_rewrites`, e.g. the Cocktail benchmark's ``llama-2-7b-chat`` BEIR
  corpora). :func:`check_rewrite` flags rewrites that are not rewrites: empty, a refusal, a
  copy of the original, far shorter or longer, or wrapped in chat ("Sure! Here is ...").
  Flagged rewrites are reported, never silently dropped: the caller decides.
* **Experiment 1 (Figure 4).** The same judge labels each pair twice, original and
  rewritten passage. :func:`label_shift` compares the two label sets with
  :func:`voirdire.stats.paired_shift`, the paired test every label shift here uses (the two
  labels of a pair are not independent): the exact sign test of the pairs that rose against
  those that fell, and the Stuart-Maxwell test of marginal homogeneity for the label
  distributions (the figure's view). Within each human grade too: a judge may inflate only
  the non-relevant passages.
* **Experiment 2 (substitution).** Every passage a system retrieves is replaced by its
  rewrite and the judge's labels re-taken; :func:`substitution` pairs the per-query nDCG@10
  of each system before and after (paired t-test). A judge that favours rewrites makes every
  system look better, but not necessarily by the same amount.
* **Experiment 3 (Figure 5).** The rankers' own scores: does a ranker score the rewrite of a
  passage higher than the original? :func:`score_shift` summarises the differences with a
  sign test (differences within ``tolerance`` count as ties).

Pure functions on pandas tables; the figures draw with matplotlib's Agg backend.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from .audits.figures import _plt, _save, savefig
from .errors import InputError
from .formats import jsonl_lines, text_lines
from .stats import SHIFT_COLUMNS, paired_shift

# ----------------------------------------------------------------------------- the sample


def balanced_sample(
    qrels: pd.DataFrame,
    per_grade: int,
    seed: int,
    *,
    grades: Sequence[int] = (0, 1, 2, 3),
    has_text: Collection[str] | None = None,
) -> tuple[pd.DataFrame, dict]:
    """``per_grade`` (query, passage) pairs at each human grade of ``grades``, seeded.

    The draw does not depend on the row order of ``qrels`` (pairs are sorted by query and
    passage first) nor on the other grades: each grade draws from its own generator, seeded
    with ``(seed, position of the grade in grades)``, so a grade that comes up short leaves
    the others' samples unchanged. Pairs whose passage has no text (not in ``has_text``,
    when given) cannot be rewritten and are not eligible; a grade with fewer than
    ``per_grade`` eligible pairs gives all it has and is marked ``short``. Grades outside
    ``grades`` are ignored (counted as ``other_grades``; ``without_text`` counts only pairs
    of ``grades``).
    """
    if per_grade < 0:
        raise ValueError(f"per_grade must be >= 0, got {per_grade}")
    table = (
        qrels[["query_id", "doc_id", "relevance"]]
        .astype({"query_id": str, "doc_id": str, "relevance": int})
        .sort_values(["query_id", "doc_id"], kind="mergesort")
        .reset_index(drop=True)
    )
    wanted = table["relevance"].isin(list(grades))
    other_grades = int((~wanted).sum())
    table = table[wanted]
    without_text = 0
    if has_text is not None:
        texts = set(has_text)
        with_text = table["doc_id"].isin(texts)
        without_text = int((~with_text).sum())
        table = table[with_text]
    drawn, per = [], {}
    for position, grade in enumerate(grades):
        pool = table[table["relevance"] == grade]
        if len(pool) > per_grade:
            rng = np.random.default_rng([seed, position])
            pool = pool.iloc[
                np.sort(rng.choice(len(pool), size=per_grade, replace=False))
            ]
        drawn.append(pool)
        available = int((table["relevance"] == grade).sum())
        per[str(grade)] = {
            "available": available,
            "drawn": len(pool),
            "short": available < per_grade,
        }
    sample = pd.concat(drawn, ignore_index=True) if drawn else table.iloc[:0]
    sample = sample.rename(columns={"relevance": "human"}).astype({"human": int})
    sample = sample.sort_values(["human", "query_id", "doc_id"], kind="mergesort")
    summary = {
        "per_grade": per_grade,
        "seed": seed,
        "pairs": len(sample),
        "without_text": without_text,
        "other_grades": other_grades,
        "grades": per,
    }
    return sample[["query_id", "doc_id", "human"]].reset_index(drop=True), summary


# ----------------------------------------------------------------------------- rewrite checks

_APOSTROPHE = "['\u2019\u2018`]"
_REFUSAL = re.compile(
    r"(?:^|[.!?:]\s+|\n)[\s\"'*_>\u201c]*(?:"
    rf"I\s+can{_APOSTROPHE}?t|I\s+cannot|I\s+can\s+not|"
    rf"I{_APOSTROPHE}m\s+sorry|I\s+am\s+sorry|I\s+apologi[sz]e|"
    rf"I{_APOSTROPHE}m\s+(?:unable|not\s+able)|I\s+am\s+(?:unable|not\s+able)|"
    rf"I\s+won{_APOSTROPHE}t|I\s+will\s+not|As\s+an\s+AI)\b",
    re.IGNORECASE,
)
# characters: a refusal opens the answer, it is not deep in a passage
_REFUSAL_WINDOW = 200
_OPENING = re.compile(
    r"^[\s\"'*_]*(?:(?:sure|certainly|of\s+course|absolutely|okay|ok)\s*[!,.:]"
    rf"|here(?:\s+is|\s+are|{_APOSTROPHE}s)\b.*\b(?:rewrite|rewritten|version|text|"
    r"paraphrase|passage)\b.*:)",
    re.IGNORECASE,
)
_CLOSING = re.compile(
    r"^[\s\"'*_(]*(?:let\s+me\s+know\s+if|i\s+hope\s+this\s+helps|hope\s+this\s+helps|"
    r"feel\s+free\s+to|is\s+there\s+anything\s+else)\b",
    re.IGNORECASE,
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
CHECKS = ("empty", "refusal", "copy", "length_out_of_range", "preamble")


def _normalised(text: str) -> str:
    return " ".join(text.split()).lower()


def _is_missing(text: object) -> bool:
    return text is None or (isinstance(text, float) and math.isnan(text))


def _last_sentence(text: str) -> str:
    sentences = [s for s in _SENTENCES.split(text.strip()) if s.strip()]
    return sentences[-1] if sentences else ""


def check_rewrite(
    original: str,
    rewrite: str | None,
    *,
    min_ratio: float = 0.5,
    max_ratio: float = 2.0,
    copy_similarity: float = 0.95,
) -> dict:
    """Is ``rewrite`` a usable rewrite of ``original``? Each check, and ``flagged`` if any.

    * ``empty``: missing or whitespace only. The other checks are then not applied (all
      false, ``length_ratio`` NaN): an empty answer is one failure, not five.
    * ``refusal``: "I can't", "I'm sorry", "As an AI", ... opening a sentence within the
      first 200 characters (straight or curly apostrophes, any case).
    * ``copy``: the same text after whitespace and case normalisation, or near it
      (difflib's similarity ratio >= ``copy_similarity``): the assistant changed nothing.
    * ``length_out_of_range``: words of the rewrite / words of the original outside
      [``min_ratio``, ``max_ratio``] (never when the original is empty: the ratio is NaN).
    * ``preamble``: a chat opening on the first line ("Sure!", "Here is the rewritten
      text:") or a chat closing as the last sentence ("Let me know if ...").
    """
    original = "" if _is_missing(original) else str(original)
    row = dict.fromkeys(CHECKS, False)
    row["length_ratio"] = math.nan
    if _is_missing(rewrite) or not str(rewrite).strip():
        row["empty"] = True
    else:
        rewrite = str(rewrite)
        row["refusal"] = bool(_REFUSAL.search(rewrite.strip()[:_REFUSAL_WINDOW]))
        a, b = _normalised(original), _normalised(rewrite)
        row["copy"] = bool(a) and (
            a == b
            or difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
            >= copy_similarity
        )
        words = len(original.split())
        if words:
            row["length_ratio"] = len(rewrite.split()) / words
            row["length_out_of_range"] = (
                not min_ratio <= row["length_ratio"] <= max_ratio
            )
        first_line = rewrite.strip().split("\n", 1)[0]
        row["preamble"] = bool(
            _OPENING.search(first_line) or _CLOSING.search(_last_sentence(rewrite))
        )
    row["flagged"] = any(row[c] for c in CHECKS)
    return {
        "empty": row["empty"],
        "refusal": row["refusal"],
        "copy": row["copy"],
        "length_ratio": row["length_ratio"],
        "length_out_of_range": row["length_out_of_range"],
        "preamble": row["preamble"],
        "flagged": row["flagged"],
    }


def check_rewrites(frame: pd.DataFrame, **options) -> pd.DataFrame:
    """:func:`check_rewrite` on every row of ``frame`` (doc_id, original, text), in order;
    ``reasons`` names the failed checks, comma-joined ("" for a clean rewrite)."""
    rows = []
    for doc_id, original, text in zip(
        frame["doc_id"], frame["original"], frame["text"], strict=True
    ):
        row = {"doc_id": doc_id, **check_rewrite(original, text, **options)}
        row["reasons"] = ",".join(c for c in CHECKS if row[c])
        rows.append(row)
    columns = [
        "doc_id", "empty", "refusal", "copy", "length_ratio", "length_out_of_range",
        "preamble", "flagged", "reasons",
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def summarise_checks(checked: pd.DataFrame) -> dict:
    """Counts of flagged rewrites and of each failed check, and the median length ratio."""
    ratios = checked["length_ratio"].dropna()
    summary = {"rewrites": len(checked), "flagged": int(checked["flagged"].sum())}
    summary.update({c: int(checked[c].sum()) for c in CHECKS})
    summary["median_length_ratio"] = float(ratios.median()) if len(ratios) else math.nan
    return summary


# ----------------------------------------------------------------------------- recorded rewrites


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
            raise InputError(
                "a rewrite line must be 'id<TAB>text'", path=path, line=number
            )
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
        records = (
            _jsonl_records(path)
            if _first_content_line(path).startswith("{")
            else _tsv_records(path)
        )
    rewrites: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, doc_id, text in records:
        if doc_id in rewrites and rewrites[doc_id] != text:
            raise InputError(
                f"passage {doc_id!r} has two different rewrites "
                f"(first on line {lines[doc_id]})",
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


# ----------------------------------------------------------------------------- experiment 1

_GROUP = ["dataset", "assistant", "judge"]


def _strata(block: pd.DataFrame) -> Iterator[tuple[str, pd.DataFrame]]:
    """The stratum "all", then each human grade present, in grade order."""
    yield "all", block
    for grade in sorted(block["human"].dropna().unique()):
        yield f"human={int(grade)}", block[block["human"] == grade]


def _per_stratum(
    frame: pd.DataFrame, group: list[str], columns: list[str], row: Callable[[pd.DataFrame], dict]
) -> pd.DataFrame:
    """One row per group and stratum: the group's keys, the stratum, then ``row`` of its pairs."""
    rows = []
    for key, block in frame.groupby(group, sort=False):
        for stratum, rows_in in _strata(block):
            rows.append(dict(zip(group, key, strict=True)) | {"stratum": stratum} | row(rows_in))
    return pd.DataFrame(rows, columns=columns)


def _direction(significant: bool, shift: float) -> str:
    if not significant or math.isnan(shift) or shift == 0:
        return "none"
    return "up" if shift > 0 else "down"


def _shift_row(block: pd.DataFrame, grades: Sequence[int], alpha: float) -> dict:
    labelled = block.dropna(subset=["original", "rewritten"])
    before = labelled["original"].to_numpy(dtype=float)
    after = labelled["rewritten"].to_numpy(dtype=float)
    row: dict = {"pairs": len(block), "unlabelled": len(block) - len(labelled)}
    for side, values in (("original", before), ("rewritten", after)):
        for g in grades:
            row[f"{side}_{g}"] = int(np.sum(values == g))
    row |= paired_shift(before, after)
    row["significant"] = bool(row["sign_p"] < alpha)  # False for NaN
    row["direction"] = _direction(row["significant"], row["mean_shift"])
    return row


def label_shift(
    labels: pd.DataFrame, *, alpha: float = 0.05, grades: Sequence[int] = (0, 1, 2, 3)
) -> pd.DataFrame:
    """Experiment 1: the judge's labels of the original passages against its labels of the
    rewrites, per (dataset, assistant, judge) over all pairs and within each human grade.

    ``labels``: dataset, assistant, judge, query_id, doc_id, human, original, rewritten (NaN
    = no label or unparsed; such pairs count as ``unlabelled`` and are left out of the rest).
    ``original_g`` / ``rewritten_g``: label counts per grade; then the columns of
    :func:`voirdire.stats.paired_shift` (``SHIFT_COLUMNS``: n, up, down, same, their shares,
    the mean shift with its t interval, the sign test ``sign_p``, Stuart-Maxwell).
    ``significant``: ``sign_p`` < ``alpha``; ``direction`` the sign of the mean shift.
    """
    columns = [*_GROUP, "stratum", "pairs", "unlabelled"]
    columns += [f"{side}_{g}" for side in ("original", "rewritten") for g in grades]
    columns += [*SHIFT_COLUMNS, "significant", "direction"]
    return _per_stratum(labels, _GROUP, columns, lambda block: _shift_row(block, grades, alpha))


def _grid(count: int, width: float, height: float, cols: int = 3):
    """A figure of ``count`` panels (at least one), ``cols`` a row; unused panels hidden."""
    plt = _plt()
    count = max(1, count)
    cols = min(cols, count)
    rows = (count + cols - 1) // cols
    fig, axes = plt.subplots(
        rows, cols, figsize=(width * cols, height * rows), squeeze=False
    )
    for ax in axes.flat[count:]:
        ax.axis("off")
    return fig, list(axes.flat[:count])


def _panels(shifts: pd.DataFrame, height: float, empty: str):
    """A grid with one panel per row of stratum "all" (a single panel saying ``empty`` if none)."""
    overall = shifts[shifts["stratum"] == "all"] if len(shifts) else shifts
    fig, axes = _grid(len(overall), 4.2, height)
    if overall.empty:
        axes[0].text(0.5, 0.5, empty, ha="center", va="center")
        axes[0].axis("off")
    return fig, axes, overall


def _save_both(fig, png: str | Path, pdf: str | Path) -> None:
    if Path(pdf) == Path(png).with_suffix(".pdf"):
        _save(fig, png)
        return
    fig.tight_layout()
    savefig(fig, png, "png", 130)
    savefig(fig, pdf, "pdf", 130)
    _plt().close(fig)


def figure4(
    labels: pd.DataFrame,
    per_grade: int,
    png: str | Path,
    pdf: str | Path,
    *,
    grades: Sequence[int] = (0, 1, 2, 3),
) -> None:
    """Figure 4: label counts per grade, original vs rewritten passages, one panel per
    (dataset, assistant, judge); the dashed line is ``per_grade``, what a perfectly
    calibrated judge gives on the balanced sample."""
    fig, axes, overall = _panels(label_shift(labels, grades=grades), 3.4, "no labels")
    x = np.arange(len(grades))
    for ax, (_, row) in zip(axes, overall.iterrows(), strict=False):
        before = [row[f"original_{g}"] for g in grades]
        after = [row[f"rewritten_{g}"] for g in grades]
        ax.bar(x - 0.2, before, width=0.4, label="original passage", color="C0")
        ax.bar(x + 0.2, after, width=0.4, label="rewritten passage", color="C1")
        ax.axhline(per_grade, color="black", ls="--", lw=0.8, label="calibrated judge")
        ax.set_xticks(x, [str(g) for g in grades])
        ax.set_xlabel("judge grade")
        ax.set_ylabel("pairs")
        ax.set_title(
            f"{row['judge']} · {row['dataset']} · {row['assistant']}", fontsize=9
        )
        p = row["sign_p"]
        note = (
            f"shift {row['mean_shift']:+.2f}, sign test p = {p:.2g}"
            if row["n"]
            else "n = 0"
        )
        ax.text(0.02, 0.97, note, transform=ax.transAxes, va="top", fontsize=7)
        ax.legend(fontsize=7, loc="upper right")
    _save_both(fig, png, pdf)


# ----------------------------------------------------------------------------- experiment 2

_PAIRED = ["dataset", "judge", "system", "query_id"]


def _order(*columns: pd.Series) -> dict:
    """Each value's position of first appearance across ``columns``."""
    values = dict.fromkeys(v for column in columns for v in column)
    return {v: i for i, v in enumerate(values)}


def _paired_t(after: np.ndarray, before: np.ndarray) -> tuple[float, float]:
    diff = after - before
    if len(diff) < 2:
        return math.nan, math.nan
    if not np.any(diff != 0):
        return 0.0, 1.0
    if np.allclose(diff, diff[0], rtol=0, atol=1e-12):
        # the same shift on every query: no variance, a certain difference
        return math.copysign(math.inf, float(diff.mean())), 0.0
    test = stats.ttest_rel(after, before)
    return float(test.statistic), float(test.pvalue)


def substitution(
    original: pd.DataFrame, rewritten: pd.DataFrame, *, alpha: float = 0.05
) -> pd.DataFrame:
    """Experiments 2-3: each system's per-query nDCG@10 with its passages as retrieved and
    with them replaced by an assistant's rewrites, paired by (dataset, judge, system, query).

    Queries scored on one side only are left out (``queries_dropped``). Only the datasets an
    assistant rewrote are compared for it. ``delta`` = rewritten - original; ``t``, ``p``:
    paired t-test (all differences zero: t = 0, p = 1; one shift on every query: t = ±inf,
    p = 0; fewer than two queries: NaN). Rows follow the input order of datasets, assistants,
    judges and systems.
    """
    columns = [
        "dataset", "assistant", "judge", "system", "queries", "queries_dropped",
        "ndcg_original", "ndcg_rewritten", "delta", "t", "p", "significant",
    ]  # fmt: skip
    orders = {
        name: _order(original[name], rewritten[name])
        for name in ("dataset", "judge", "system")
    }
    orders["assistant"] = _order(rewritten["assistant"])
    rows = []
    for assistant, after in rewritten.groupby("assistant", sort=False):
        before = original[original["dataset"].isin(set(after["dataset"]))]
        merged = before[[*_PAIRED, "ndcg"]].merge(
            after[[*_PAIRED, "ndcg"]],
            on=_PAIRED,
            how="outer",
            suffixes=("_original", "_rewritten"),
        )
        for (dataset, judge, system), block in merged.groupby(_PAIRED[:3], sort=False):
            both = block.dropna(subset=["ndcg_original", "ndcg_rewritten"])
            x = both["ndcg_rewritten"].to_numpy(dtype=float)
            y = both["ndcg_original"].to_numpy(dtype=float)
            t, p = _paired_t(x, y)
            row = {
                "dataset": dataset,
                "assistant": assistant,
                "judge": judge,
                "system": system,
                "queries": len(both),
                "queries_dropped": len(block) - len(both),
                "ndcg_original": float(y.mean()) if len(y) else math.nan,
                "ndcg_rewritten": float(x.mean()) if len(x) else math.nan,
            }
            row["delta"] = row["ndcg_rewritten"] - row["ndcg_original"]
            row |= {"t": t, "p": p, "significant": bool(p < alpha)}
            rows.append(row)
    table = pd.DataFrame(rows, columns=columns)
    if table.empty:
        return table
    rank = pd.DataFrame(
        {name: table[name].map(order) for name, order in orders.items()}
    )
    keys = ["dataset", "assistant", "judge", "system"]
    return table.loc[rank.sort_values(keys, kind="mergesort").index].reset_index(
        drop=True
    )


# ----------------------------------------------------------------------------- experiment 3

_RANKER = ["dataset", "assistant", "ranker"]


def _within(diff: np.ndarray, tolerance: float) -> np.ndarray:
    """|diff| <= tolerance, with room for float rounding (0.51 - 0.50 is not above 0.01)."""
    return np.abs(diff) <= tolerance * (1 + 1e-9) + 1e-12


def _score_row(block: pd.DataFrame, tolerance: float, alpha: float) -> dict:
    scored = block.dropna(subset=["original", "rewritten"])
    diff = scored["rewritten"].to_numpy(dtype=float) - scored["original"].to_numpy(
        dtype=float
    )
    n = len(diff)
    within = _within(diff, tolerance)
    higher = int(np.sum(~within & (diff > 0)))
    lower = int(np.sum(~within & (diff < 0)))
    p = stats.binomtest(higher, higher + lower, 0.5).pvalue if higher + lower else 1.0
    significant = bool(p < alpha)
    return {
        "pairs": len(block),
        "unscored": len(block) - n,
        "n": n,
        "mean_diff": float(diff.mean()) if n else math.nan,
        "median_diff": float(np.median(diff)) if n else math.nan,
        "within_tolerance": float(within.mean()) if n else math.nan,
        "higher": higher,
        "lower": lower,
        "sign_p": float(p),
        "significant": significant,
        "direction": _direction(significant, higher - lower),
    }


def score_shift(
    scores: pd.DataFrame, *, tolerance: float = 0.01, alpha: float = 0.05
) -> pd.DataFrame:
    """Experiment 3: rewritten - original ranker score per pair, per (dataset, assistant,
    ranker) over all pairs and within each human grade.

    Differences within ±``tolerance`` are ties; the sign test (two-sided binomial) compares
    the pairs scored ``higher`` with those scored ``lower``, and ``direction`` is the side
    that wins when it is significant. Pairs with a missing score count as ``unscored``.
    """
    columns = [
        *_RANKER, "stratum", "pairs", "unscored", "n", "mean_diff", "median_diff",
        "within_tolerance", "higher", "lower", "sign_p", "significant", "direction",
    ]  # fmt: skip
    return _per_stratum(scores, _RANKER, columns, lambda block: _score_row(block, tolerance, alpha))


def figure5(
    scores: pd.DataFrame, png: str | Path, pdf: str | Path, *, tolerance: float = 0.01
) -> None:
    """Figure 5: histograms of rewritten - original ranker scores, one panel per (dataset,
    assistant, ranker), with the mean, median, share within ±tolerance and sign-test p."""
    fig, axes, overall = _panels(score_shift(scores, tolerance=tolerance), 3.2, "no scores")
    for ax, (_, row) in zip(axes, overall.iterrows(), strict=False):
        block = scores[
            (scores["dataset"] == row["dataset"])
            & (scores["assistant"] == row["assistant"])
            & (scores["ranker"] == row["ranker"])
        ].dropna(subset=["original", "rewritten"])
        diff = (block["rewritten"] - block["original"]).to_numpy(dtype=float)
        if len(diff):
            ax.hist(diff, bins=min(30, max(5, len(diff) // 5)), color="C0", alpha=0.8)
        ax.axvline(0, color="black", lw=0.8)
        ax.set_xlabel("score of rewrite − score of original")
        ax.set_ylabel("pairs")
        ax.set_title(
            f"{row['ranker']} · {row['dataset']} · {row['assistant']}", fontsize=9
        )
        note = (
            f"mean {row['mean_diff']:+.3g}\nmedian {row['median_diff']:+.3g}\n"
            f"within ±{tolerance:g}: {row['within_tolerance']:.0%}\n"
            f"sign test p = {row['sign_p']:.2g}"
        )
        ax.text(
            0.97, 0.97, note, transform=ax.transAxes, ha="right", va="top", fontsize=7,
            bbox={"boxstyle": "round", "facecolor": "white", "alpha": 0.8},
        )  # fmt: skip
    _save_both(fig, png, pdf)
