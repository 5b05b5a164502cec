"""`voirdire check` says, as a warning and never as an error, how many human-judged pairs the
recorded runs retrieve whose passage has no text in the RankGPT candidates file (the probes, the
gamed system, the length audit and the judges that read texts leave them out)."""

from __future__ import annotations

import json
import logging

from voirdire.config import check, validate_schema


def write_dataset(tmp_path):
    """Two queries, BM25 candidates a..c with texts; the run also retrieves x (judged) and y
    (not judged), neither of which has a text."""
    entries = [
        {
            "query": f"query {q}",
            "hits": [
                {"content": f"text of {d}", "qid": q, "docid": d, "rank": r, "score": 10.0 - r}
                for r, d in enumerate("abc", start=1)
            ],
        }
        for q in ("1", "2")
    ]
    (tmp_path / "cands.json").write_text(json.dumps(entries))
    (tmp_path / "topics.tsv").write_text("1\tquery 1\n2\tquery 2\n")
    qrels = [f"{q} 0 {d} {g}" for q in ("1", "2") for d, g in (("a", 1), ("b", 0), ("c", 2), ("x", 3))]
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    run = [f"{q} Q0 {d} {r} {9 - r} rr" for q in ("1", "2") for r, d in enumerate("xyab", start=1)]
    (tmp_path / "run.txt").write_text("\n".join(run) + "\n")


def config(tmp_path, depth=10, **more) -> dict:
    return validate_schema(
        {
            "results": str(tmp_path / "results"),
            "datasets": {
                "d": {
                    "source": "rankgpt",
                    "candidates": str(tmp_path / "cands.json"),
                    "qrels": str(tmp_path / "qrels.txt"),
                    "topics": str(tmp_path / "topics.tsv"),
                }
            },
            "bm25": {"depth": depth},
            "runs": {"rr": {"path": str(tmp_path / "run.txt")}},
            "systems": ["BM25", "rr"],
            "judges": [{"name": "overlap", "kind": "baseline", "method": "overlap"}],
            **more,
        }
    )


def test_the_check_warns_of_the_recorded_runs_passages_without_a_text(tmp_path, caplog):
    write_dataset(tmp_path)
    with caplog.at_level(logging.WARNING, logger="voirdire.config.checks"):
        plan = check(config(tmp_path))
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    # x is judged and has no text, on both queries; y has no text but no human judged it
    assert len(warned) == 1 and "2 of the 6 human-judged pairs" in warned[0] and "rr: 2" in warned[0]
    assert warned[0].startswith("voirdire: warning: dataset d:") and "overlap" in warned[0]
    assert "the length audit" in warned[0] and "the probes" not in warned[0]
    assert any("2 of the 6" in note for note in plan.notes)


def test_no_warning_when_the_run_stays_within_the_texts(tmp_path, caplog):
    write_dataset(tmp_path)
    (tmp_path / "run.txt").write_text(
        "".join(f"{q} Q0 {d} {r} {9 - r} rr\n" for q in "12" for r, d in enumerate("cab"))
    )
    with caplog.at_level(logging.WARNING, logger="voirdire.config.checks"):
        plan = check(config(tmp_path))
    assert not [r for r in caplog.records if r.name == "voirdire.config.checks"] and not plan.notes
