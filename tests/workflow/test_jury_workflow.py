"""A jury through the workflow (docs/juries.md): on eight DL19 queries, a jury of the two recorded
rerankers (0/1) and the overlap baseline (0-3, so binarize) gets its labels from the jury rule, a
row in Table 2 and in the verdict like any judge, and its two tables. Its labels are recomputed
here from the members' qrels files, by the definition."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from conftest import SHARED_DL19, read_trec_qrels, snakemake

from voirdire.formats import read_pairs, read_qrels
from voirdire.judges import JuryJudge, Scale
from voirdire.jury import jury_tables, jury_verdicts

pytestmark = pytest.mark.workflow

QUERIES = ["156493", "1110199", "1063750", "130510", "489204", "1133167", "527433", "104861"]
MEMBERS = ("monot5-3b", "rank1-7b", "overlap")


@pytest.fixture(scope="module")
def jury_run(tmp_path_factory):
    dl19 = SHARED_DL19
    if not (dl19 / "qrels.rank1-7b.txt").is_file():
        pytest.skip(f"real TREC DL 2019 data not found at {dl19} (../shared absent)")
    out = tmp_path_factory.mktemp("jury")
    recorded = {"scale": {"min": 0, "max": 1}, "binary_threshold": 1, "kind": "recorded"}
    config = {
        "results": str(out / "results"),
        "datasets": {
            "dl19": {
                "source": "rankgpt",
                "candidates": str(dl19 / "bm25-top100.rankgpt.json"),
                "qrels": str(dl19 / "qrels.nist.txt"),
                "topics": str(dl19 / "topics.tsv"),
                "queries": QUERIES,
            }
        },
        "systems": ["BM25", "Perfect", "Swap[1]"],
        "evaluation": {"resamples": 100},
        "judges": [
            {"name": "monot5-3b", "family": "t5", "qrels": str(dl19 / "qrels.monot5-3b.txt"), **recorded},
            {"name": "rank1-7b", "family": "rank1", "qrels": str(dl19 / "qrels.rank1-7b.txt"), **recorded},
            {"name": "overlap", "kind": "baseline", "method": "overlap"},
            {"name": "panel", "kind": "jury", "members": list(MEMBERS), "aggregate": "majority", "binarize": True},
        ],
    }
    path = out / "jury.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    snakemake("--cores", "2", "--configfile", str(path))
    return out / "results"


def test_the_jury_is_a_judge_of_table2_and_the_verdict(jury_run):
    table2 = pd.read_csv(jury_run / "tables/original/table2.csv")
    row = table2[table2["judge"] == "panel"]
    assert len(row) >= 1 and row["coverage"].notna().all() and row["kappa_binary"].notna().all()
    verdict = pd.read_csv(jury_run / "verdict.csv")
    assert "panel" in set(verdict["judge"]) and set(verdict["judge"]) >= set(MEMBERS)


def test_the_jury_labels_are_the_strict_majority_of_its_members_binary_votes(jury_run):
    root = jury_run / "dl19"
    labels = read_trec_qrels(root / "qrels/original/panel.txt")
    members = {m: read_trec_qrels(root / f"qrels/original/{m}.txt") for m in MEMBERS}
    thresholds = {"monot5-3b": 1, "rank1-7b": 1, "overlap": 2}
    pairs = pd.read_csv(root / "pairs/original.tsv", sep="\t", dtype=str)
    expected, unlabelled = {}, 0
    for q, d in pairs[["query_id", "doc_id"]].itertuples(index=False):
        votes = [int(members[m][q][d] >= thresholds[m]) for m in MEMBERS if d in members[m].get(q, {})]
        top = max((votes.count(v), v) for v in set(votes)) if votes else (0, None)
        if len(votes) >= 2 and 2 * top[0] > len(votes):
            expected.setdefault(q, {})[d] = top[1]
        else:
            unlabelled += 1
    assert labels == expected
    table = pd.read_csv(root / "judgments/original/panel.jury.csv")
    assert table.loc[0, "labelled"] == sum(map(len, expected.values()))
    assert table.loc[0, "no_verdict"] + table.loc[0, "short_of_quorum"] == unlabelled
    assert table.loc[0, "members"] == ", ".join(MEMBERS) and table.loc[0, "votes"] == "binary"


def test_the_jury_tables_are_the_library_s_on_the_same_files(jury_run):
    """The job's tables equal voirdire.jury's on the files it read (the rule adds nothing)."""
    root = jury_run / "dl19"
    scales = {"monot5-3b": Scale(0, 1, 1), "rank1-7b": Scale(0, 1, 1), "overlap": Scale()}
    labels = {m: read_qrels(root / f"qrels/original/{m}.txt", (scales[m].low, scales[m].high)) for m in MEMBERS}
    jury = JuryJudge("panel", MEMBERS, "majority", 2, Scale(0, 1, 1), binarize=True)
    verdicts = jury_verdicts(jury, read_pairs(root / "pairs/original.tsv"), labels, scales)
    row, correlation = jury_tables("dl19", jury, verdicts, read_qrels(root / "data/qrels.human.txt"), resamples=100)
    written = pd.read_csv(root / "judgments/original/panel.jury.csv")
    assert written.loc[0, "n_eff"] == pytest.approx(row.loc[0, "n_eff"])
    assert written.loc[0, "n_eff_ci_low"] == pytest.approx(row.loc[0, "n_eff_ci_low"])
    pairs = pd.read_csv(root / "judgments/original/panel.jury_correlation.csv")
    assert list(zip(pairs["member_a"], pairs["member_b"])) == list(
        zip(correlation["member_a"], correlation["member_b"])
    )
    assert pairs["correlation"].to_numpy() == pytest.approx(correlation["correlation"].to_numpy())
