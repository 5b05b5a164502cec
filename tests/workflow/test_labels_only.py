"""Label sets alone (the LLMJudge shape: many recorded label sets, human qrels and topics, no runs):
a config without ``systems:`` checks, ``voirdire init`` without ``--runs`` writes one, and the
workflow audits the labels (agreement with intervals, leave one judge out on labels, drift) while
every question about systems is n/a with the reason."""

from __future__ import annotations

import copy
import hashlib
import math

import numpy as np
import pandas as pd
import pytest
import yaml

from voirdire.audits.labels import confusion_matrices
from voirdire.audits.panel import leave_one_judge_out_labels
from voirdire.audits.run import DatasetInputs, audit_tables
from voirdire.cli import main
from voirdire.config import check, validate_schema
from voirdire.errors import ConfigError
from voirdire.init import init_config, judge_folder, write_config
from voirdire.judges import HUMAN, Scale
from voirdire.verdict import NA, NO_SYSTEMS, QUESTIONS, DatasetTables, verdict

SYSTEM_QUESTIONS = ("leaderboard", "decisions", "oracles", "own_family", "circular_use")
"""The verdict's questions that rank or score systems: n/a without them."""

TOPICS = "q1\tone\nq2\ttwo\nq3\tthree\n"
QRELS = "q1 0 a 3\nq1 0 b 0\nq2 0 c 2\nq2 0 d 1\nq3 0 e 0\nq3 0 f 2\n"


@pytest.fixture
def labels_only(write):
    """A labels-only config with two recorded judges and no systems."""
    return {
        "datasets": {
            "d": {"source": "local", "topics": str(write("t.tsv", TOPICS)), "qrels": str(write("q.txt", QRELS))}
        },
        "judges": [
            {"name": "copy", "kind": "recorded", "qrels": str(write("copy.txt", QRELS))},
            {
                "name": "bin",
                "kind": "recorded",
                "qrels": str(write("bin.txt", QRELS.replace(" 3\n", " 1\n").replace(" 2\n", " 1\n"))),
                "scale": {"max": 1},
                "binary_threshold": 1,
            },
        ],
    }


def test_a_config_without_systems_checks_and_plans_no_system(labels_only):
    plan = check(validate_schema(copy.deepcopy(labels_only)))
    assert plan.systems == () and not plan.has_systems and plan.oracles == [] and plan.recorded == []
    assert plan.judge_names("d") == [HUMAN, "copy", "bin"] and plan.labels_only("d")
    plan = check(validate_schema({**copy.deepcopy(labels_only), "systems": []}))  # an empty list says the same
    assert not plan.has_systems


@pytest.mark.parametrize(
    ("changes", "key", "message"),
    [
        ({"systems": ["Perfect"]}, "systems", "one system cannot be ranked"),
        ({"variants": {"g": {"baseline": "copy", "variants": ["bin"]}}}, "variants", "no systems are listed"),
    ],
)
def test_what_compares_systems_is_a_config_error_without_them(labels_only, changes, key, message):
    with pytest.raises(ConfigError, match=message) as error:
        check(validate_schema({**copy.deepcopy(labels_only), **changes}))
    assert f"'{key}'" in str(error.value)


def test_init_without_runs_writes_a_config_without_systems(tmp_path, write, labels_only):
    write("sets/team-a.txt", QRELS)
    write("sets/team b.run", QRELS.replace(" 3\n", " 2\n"))  # a space: not in a judge's name
    assert sorted(judge_folder(tmp_path / "sets")) == ["team-a", "team_b"]
    spec = labels_only["datasets"]["d"]
    config, notes = init_config(
        qrels=spec["qrels"],
        topics=spec["topics"],
        judge_folders=[str(tmp_path / "sets")],
        judges=[f"bin={labels_only['judges'][1]['qrels']}"],
        dataset="d",
    )
    assert "systems" not in config and "runs" not in config and "oracles" not in config
    assert sorted(j["name"] for j in config["judges"]) == ["bin", "team-a", "team_b"]
    assert any("audited alone" in note for note in notes)
    path = tmp_path / "mine.yaml"
    write_config(config, notes, path)
    plan = check(validate_schema(yaml.safe_load(path.read_text())))
    assert not plan.has_systems and plan.judge("d", "team_b").scale.high == 3  # the release's scale, never its own
    with pytest.raises(ConfigError, match="give runs"):
        init_config(qrels=spec["qrels"], topics=spec["topics"])


def test_the_verdict_says_no_systems_for_every_question_about_them():
    table2 = pd.DataFrame(
        [
            {
                "dataset": "d",
                "judge": "j",
                "kappa_binary": 0.6,
                "kappa_binary_ci_low": 0.5,
                "kappa_binary_ci_high": 0.7,
                "coverage": 1.0,
            }
        ]
    )
    data = DatasetTables(judges=["j"], tables={"table2": table2}, unavailable={"runs": NO_SYSTEMS})
    long = verdict({"d": data}).set_index("question")
    assert long.loc["labels", "status"] == "pass" and long.loc["labels", "effect"] == pytest.approx(0.6)
    for name in SYSTEM_QUESTIONS:
        assert long.loc[name, "status"] == NA and long.loc[name, "reason"] == NO_SYSTEMS, name
    assert all("runs" in QUESTIONS[name].needs for name in SYSTEM_QUESTIONS)


def _labels(grades: dict[tuple[str, str], int]) -> pd.DataFrame:
    return pd.DataFrame([{"query_id": q, "doc_id": d, "relevance": g} for (q, d), g in grades.items()])


def test_leave_one_judge_out_on_labels_finds_the_judge_that_pulls_the_panel_away():
    rng = np.random.default_rng(3)
    human = {(f"q{q}", f"d{d}"): int(rng.integers(0, 4)) for q in range(30) for d in range(20)}
    good = {k: g if rng.random() > 0.1 else 3 - g for k, g in human.items()}
    also = {k: g if rng.random() > 0.1 else 3 - g for k, g in human.items()}
    contrary = {k: 3 - g for k, g in human.items()}
    labels = {HUMAN: _labels(human), "good": _labels(good), "also": _labels(also), "contrary": _labels(contrary)}
    scales = dict.fromkeys(labels, Scale())
    table = leave_one_judge_out_labels(labels, scales, ["good", "also", "contrary"], HUMAN, resamples=300)
    table = table.set_index("left_out")
    assert table.loc["contrary", "without_it"] == "better" and table.loc["contrary", "kappa_change"] > 0.1
    assert table.loc["contrary", "kappa_judge"] < 0 and (table["pairs"] == len(human)).all()
    low, high = table.loc["contrary", ["kappa_change_ci_low", "kappa_change_ci_high"]]
    assert 0 < low <= table.loc["contrary", "kappa_change"] <= high
    assert leave_one_judge_out_labels(labels, scales, ["good"], HUMAN).empty  # a panel of one: no row


def test_the_audits_of_labels_run_without_systems():
    rng = np.random.default_rng(5)
    human = {(f"q{q}", f"d{d}"): int(rng.integers(0, 4)) for q in range(12) for d in range(10)}
    first = {k: g if rng.random() > 0.2 else int(rng.integers(0, 4)) for k, g in human.items()}
    again = {k: g if rng.random() > 0.2 else int(rng.integers(0, 4)) for k, g in first.items()}
    labels = {HUMAN: _labels(human), "a": _labels(first), "b": _labels(human)}
    meta = {"min": 0, "max": 3, "binary_threshold": 2, "kind": "recorded", "family": None}
    data = DatasetInputs(
        judges={HUMAN: {**meta, "kind": "human"}, "a": meta, "b": meta},
        pairs=_labels(human)[["query_id", "doc_id"]],
        labels=labels,
        runs={},
        base=None,
        topics={f"q{q}": "text" for q in range(12)},
        per_query=pd.DataFrame(columns=["dataset", "judge", "query_id", "system", "ndcg"]),
        label_sets={"a": {"qrels": _labels(first), "rerun-1": _labels(again)}},
    )
    tables = audit_tables({"d": data}, system_families={})
    assert list(tables["label_test"]["judge"]) == ["a", "b"]
    assert list(confusion_matrices(tables["confusion"])) == [("d", "a"), ("d", "b")]
    assert list(tables["lojo_labels"]["left_out"]) == ["a", "b"]
    assert list(tables["drift"]["judge"]) == ["a"] and "tau_systems" not in tables["drift"]
    assert list(tables["control_chart"]["judge"]) == ["a"]
    for name in ("lojo", "self_preference", "length_systems", "circularity", "calibration"):
        assert tables[name].empty, name


def _perturbed(qrels: pd.DataFrame, salt: str, share: float) -> pd.DataFrame:
    """The human grades with a deterministic share of them moved to another grade (by a hash of
    the pair and ``salt``: the same labels on every machine)."""

    def grade(row) -> int:
        digest = hashlib.sha256(f"{salt}:{row.query_id}:{row.doc_id}".encode()).digest()
        if digest[0] / 256 >= share:
            return int(row.relevance)
        return (int(row.relevance) + 1 + digest[1] % 3) % 4

    return qrels.assign(relevance=[grade(r) for r in qrels.itertuples()])


def _some(qrels: pd.DataFrame, salt: str, share: float) -> pd.DataFrame:
    """A deterministic share of the pairs (a submission that skipped the rest)."""
    keep = [
        hashlib.sha256(f"{salt}:{r.query_id}:{r.doc_id}".encode()).digest()[0] / 256 < share for r in qrels.itertuples()
    ]
    return qrels[keep]


def _write_qrels(frame: pd.DataFrame, path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{r.query_id} 0 {r.doc_id} {r.relevance}\n" for r in frame.itertuples()))
    return str(path)


@pytest.mark.workflow
@pytest.mark.slow  # 35 to 50 s on 2 cores: the jobs' imports (audits, tables), not the audits themselves
def test_label_sets_alone_end_to_end(tmp_path, dl19, capsys):
    """An LLMJudge-shaped case from TREC DL 2019: 15 topics, their NIST qrels, a folder of four
    label sets (a copy of the humans, a noisy copy, the humans turned upside down on 80% of the
    pairs, monoT5-3B's recorded labels) and a rerun of the noisy one; `voirdire init` without
    --runs, then the workflow."""
    from conftest import snakemake

    topics = dl19.joinpath("topics.tsv").read_text().splitlines()[:15]
    kept = {line.split("\t")[0] for line in topics}
    (tmp_path / "topics.tsv").write_text("\n".join(topics) + "\n")
    columns = ["query_id", "iteration", "doc_id", "relevance"]
    nist = pd.read_csv(dl19 / "qrels.nist.txt", sep=r"\s+", header=None, names=columns, dtype=str)
    nist = nist[nist["query_id"].isin(kept)].astype({"relevance": int})
    qrels = _write_qrels(nist, tmp_path / "qrels.txt")
    sets = tmp_path / "submissions"
    _write_qrels(nist, sets / "copier.txt")
    _write_qrels(_perturbed(nist, "noisy", 0.3), sets / "noisy.txt")
    _write_qrels(_some(nist.assign(relevance=3 - nist["relevance"]), "skipped", 0.8), sets / "contrarian.txt")
    monot5 = pd.read_csv(dl19 / "qrels.monot5-3b.txt", sep=r"\s+", header=None, names=columns, dtype=str)
    _write_qrels(monot5[monot5["query_id"].isin(kept)], sets / "monot5-3b.txt")
    rerun = _write_qrels(_perturbed(nist, "noisy-again", 0.3), tmp_path / "noisy-again.txt")

    config = tmp_path / "llmjudge.yaml"
    assert (
        main(
            [
                "init",
                "--qrels",
                qrels,
                "--topics",
                str(tmp_path / "topics.tsv"),
                "--judges",
                str(sets),
                "--dataset",
                "dl19",
                "-o",
                str(config),
            ]
        )
        == 0
    )
    assert "no runs (the label sets audited alone), 4 judges" in capsys.readouterr().out
    written = yaml.safe_load(config.read_text())
    assert "systems" not in written and "runs" not in written
    for judge in written["judges"]:
        if judge["name"] == "noisy":
            judge["reruns"] = [rerun]  # the drift audit's second label set
    out = tmp_path / "results"
    written["results"] = str(out)
    config.write_text(yaml.safe_dump(written))
    snakemake("--cores", "2", "--configfile", str(config))

    judges = {"contrarian", "copier", "monot5-3b", "noisy"}
    long = pd.read_csv(out / "verdict.csv", keep_default_na=False, na_values=[""])
    assert set(long["judge"]) == judges and len(long) == len(judges) * len(QUESTIONS)
    cells = long.set_index(["judge", "question"])
    for judge in judges:
        labels = cells.loc[(judge, "labels")]
        assert labels["status"] in ("pass", "flag", "inconclusive")
        assert labels["ci_low"] <= labels["effect"] <= labels["ci_high"]
        for name in SYSTEM_QUESTIONS:
            assert cells.loc[(judge, name), "status"] == NA and "systems" in cells.loc[(judge, name), "reason"]
        assert "no passage texts" in cells.loc[(judge, "length"), "reason"]
    assert cells.loc[("copier", "labels"), "effect"] == pytest.approx(1.0)
    assert cells.loc[("contrarian", "labels"), "status"] == "flag" and cells.loc[("contrarian", "labels"), "effect"] < 0
    drift = cells.loc[("noisy", "drift")]
    assert drift["status"] in ("pass", "flag", "inconclusive") and math.isfinite(drift["effect"])
    assert drift["detail"] == "the largest of 1 rerun(s)" and drift["tests"] == 1
    assert cells.loc[("copier", "drift"), "status"] == NA
    # Table 2: one row per judge, on every human-judged pair of the 15 topics
    table2 = pd.read_csv(out / "tables/original/table2.csv").set_index("judge")
    assert set(table2.index) == judges and (table2["pairs_needed"] == len(nist)).all()
    assert (table2.drop(index="contrarian")["coverage"] == 1).all() and "tau_all" not in table2
    assert 0.7 < table2.loc["contrarian", "coverage"] < 0.9 and table2.loc["contrarian", "low_coverage"]
    assert "contrarian on dl19 labelled" in (out / "verdict.md").read_text()  # the note on what it rests on
    for name in ("table1", "significance"):
        assert NO_SYSTEMS in (out / f"tables/original/{name}.md").read_text()
    assert not (out / "figures").exists()  # no Figure 3
    lojo = pd.read_csv(out / "audits/original/lojo_labels.csv").set_index("left_out")
    assert set(lojo.index) == judges and lojo.loc["contrarian", "without_it"] == "better"
    from support.captions import undocumented

    assert undocumented(out) == {}  # every column of every table is in its caption
