"""`voirdire init` on a release's real material, without silent guesses: the label sets share one
scale (each exception a warning naming its file and grades), a strict judge is a finding and not
a config error, the oracles' base run is chosen by a stated rule, a release folder's topics.tsv is
skipped, and family patterns that match nothing or nearly match are said."""

from __future__ import annotations

import hashlib
import logging

import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.metrics import cohen_kappa_score

from voirdire.audits.labels import label_agreement
from voirdire.cli import main
from voirdire.config import check, load_plan, validate_schema
from voirdire.errors import ConfigError
from voirdire.formats import read_qrels
from voirdire.init import STRAY_SHARE, WARNING, init_config, judge_folder, oracle_base, write_config
from voirdire.judges import HUMAN, needed_pairs, recorded_labels
from voirdire.preflight import preflight, unused_grade_notes

COLUMNS = ["query_id", "iteration", "doc_id", "relevance"]
TOPICS_KEPT = 10  # the first topics of DL19: about 2,000 human labels, enough for every grade


def _read(path) -> pd.DataFrame:
    """A qrels file read with pandas alone (not the project's reader)."""
    frame = pd.read_csv(path, sep=r"\s+", header=None, names=COLUMNS, dtype=str)
    return frame.astype({"relevance": int})


def _write(frame: pd.DataFrame, path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{r.query_id} 0 {r.doc_id} {r.relevance}\n" for r in frame.itertuples()))
    return str(path)


def _perturbed(qrels: pd.DataFrame, salt: str, share: float = 0.3) -> pd.DataFrame:
    """The human grades with a deterministic share moved to another grade of 0-3."""

    def grade(row) -> int:
        digest = hashlib.sha256(f"{salt}:{row.query_id}:{row.doc_id}".encode()).digest()
        return int(row.relevance) if digest[0] / 256 >= share else (int(row.relevance) + 1 + digest[1] % 3) % 4

    return qrels.assign(relevance=[grade(r) for r in qrels.itertuples()])


@pytest.fixture
def release(tmp_path, dl19):
    """A challenge's release: human qrels and topics beside five label sets in one folder: a noisy
    copy, the same with one stray grade 10, a strict judge that never gives 3, a prompt variant
    that grades 0 and 2 only, and monoT5-3B's binary labels."""
    topics = dl19.joinpath("topics.tsv").read_text().splitlines()[:TOPICS_KEPT]
    kept = {line.split("\t")[0] for line in topics}
    nist = _read(dl19 / "qrels.nist.txt")
    nist = nist[nist["query_id"].isin(kept)].reset_index(drop=True)
    folder = tmp_path / "release"
    folder.mkdir()
    (folder / "topics.tsv").write_text("\n".join(topics) + "\n")
    _write(nist, folder / "human.qrels")
    noisy = _perturbed(nist, "noisy")
    _write(noisy, folder / "noisy.txt")
    stray = noisy.copy()
    stray.loc[len(stray) // 2, "relevance"] = 10
    _write(stray, folder / "stray.txt")
    _write(_perturbed(nist, "strict").assign(relevance=lambda f: f["relevance"].clip(upper=2)), folder / "strict.txt")
    _write(nist.assign(relevance=(nist["relevance"] >= 2) * 2), folder / "variant.txt")
    monot5 = _read(dl19 / "qrels.monot5-3b.txt")
    _write(monot5[monot5["query_id"].isin(kept)], folder / "monot5.txt")
    return folder


def _init(release, tmp_path, capsys, *extra: str) -> tuple[int, dict, str, str]:
    out = tmp_path / "release.yaml"
    code = main(
        [
            "init",
            "--qrels",
            str(release / "human.qrels"),
            "--topics",
            str(release / "topics.tsv"),
            "--judges",
            str(release),
            "--dataset",
            "dl23",
            "-o",
            str(out),
            *extra,
        ]
    )
    printed = capsys.readouterr()
    config = yaml.safe_load(out.read_text()) if out.is_file() else {}
    return code, config, printed.out, printed.err


def test_every_label_set_gets_the_releases_scale_and_its_kappa_is_sklearns(release, tmp_path, capsys, caplog):
    code, config, out, err = _init(release, tmp_path, capsys)
    assert code == 0, err
    judges = {j["name"]: j for j in config["judges"]}
    # the folder's topics.tsv and the human qrels given as --qrels are not label sets
    assert sorted(judges) == ["monot5", "noisy", "stray", "strict", "variant"]
    assert f"{release / 'topics.tsv'}: skipped, not a label set" in out
    assert f"{release / 'human.qrels'}: skipped, the human qrels (--qrels)" in out
    for name in ("noisy", "stray", "strict", "variant"):
        assert (judges[name]["scale"], judges[name]["binary_threshold"]) == ({"min": 0, "max": 3}, 2), name
    assert "label sets: the release's scale is 0-3, relevant from 2" in out
    labels = {name: _read(release / f"{name}.txt") for name in judges}
    warnings = [line for line in err.splitlines() if line.startswith(WARNING)]
    # the stray grade: left out and counted, never mapped onto the scale
    assert judges["stray"]["invalid_labels"] == "drop" and "invalid_labels" not in judges["noisy"]
    total = len(labels["stray"])
    assert any(
        f"{release / 'stray.txt'}: grade 10 on 1 of {total:,} labels, outside the release's 0-3" in w for w in warnings
    )
    assert any(f"{release / 'strict.txt'}: grades 0, 1 and 2" in w and "never 3" in w for w in warnings)
    assert any(f"{release / 'variant.txt'}: grades 0 and 2" in w and "never 1 and 3" in w for w in warnings)
    # a binary label set is the one exception with a scale of its own, and said so
    assert (judges["monot5"]["scale"], judges["monot5"]["binary_threshold"]) == ({"min": 0, "max": 1}, 1)
    assert any(f"{release / 'monot5.txt'}: only grades 0 and 1" in w for w in warnings)
    assert not any("noisy.txt" in w for w in warnings) and len(warnings) == 4

    # `voirdire check` passes: the strict judge and the variant are warnings (and verdict notes), not errors
    caplog.set_level(logging.WARNING, logger="voirdire.preflight")
    assert main(["check", "--configfile", str(tmp_path / "release.yaml")]) == 0, capsys.readouterr().err
    logged = [r.getMessage() for r in caplog.records if r.name == "voirdire.preflight"]
    assert any("strict uses only the grades 0, 1 and 2 of its scale 0..3" in m for m in logged)
    assert any("variant uses only the grades 0 and 2" in m for m in logged)

    # the run's binary kappa, as the workflow reads the labels, equals sklearn's on the files
    plan = load_plan(tmp_path / "release.yaml")
    human = read_qrels(release / "human.qrels")
    pairs = needed_pairs(human)
    read = {HUMAN: human}
    for name, judge in judges.items():
        scale = {**judge["scale"], "binary_threshold": judge["binary_threshold"]}
        read[name] = recorded_labels(name, judge["qrels"], pairs, scale, judge.get("invalid_labels", "error"))[0]
    scales = {name: plan.judge("dl23", name).scale for name in read}
    rows = label_agreement(read, scales, pairs, resamples=20)
    nist = _read(release / "human.qrels")
    for name in judges:
        mine = labels[name][labels[name]["relevance"].between(0, 3)]  # off the TREC scale: not a label
        both = nist.merge(mine, on=["query_id", "doc_id"], suffixes=("_human", "_judge"))
        relevant_from = 1 if set(mine["relevance"]) == {0, 1} else 2  # a binary set's 1, else TREC's 2
        expected = cohen_kappa_score(both["relevance_human"] >= 2, both["relevance_judge"] >= relevant_from)
        assert rows[name]["kappa_binary"] == pytest.approx(expected, abs=1e-12), name


def test_a_label_set_mostly_off_the_releases_scale_keeps_its_own_and_says_so(tmp_path, dl19):
    nist = _read(dl19 / "qrels.nist.txt").head(400)
    human = _write(nist, tmp_path / "human.qrels")
    (tmp_path / "topics.tsv").write_text(dl19.joinpath("topics.tsv").read_text())
    sets = tmp_path / "sets"
    _write(nist, sets / "a.txt")
    _write(_perturbed(nist, "b"), sets / "b.txt")
    _write(nist.assign(relevance=nist["relevance"] * 3 + 1), sets / "ten.txt")  # 1..10: most labels off 0-3
    config, notes = init_config(qrels=human, topics=str(tmp_path / "topics.tsv"), judge_folders=[str(sets)])
    judges = {j["name"]: j for j in config["judges"]}
    assert judges["ten"]["scale"] == {"min": 1, "max": 10} and judges["ten"]["binary_threshold"] == 6
    assert judges["a"]["scale"] == judges["b"]["scale"] == {"min": 0, "max": 3}
    off = int((nist["relevance"] * 3 + 1 > 3).sum())
    assert any(n.startswith(WARNING) and f"ten.txt: grades 4, 7 and 10 on {off:,} of {len(nist):,}" in n for n in notes)
    assert off > STRAY_SHARE * len(nist)


def test_a_release_whose_label_sets_share_another_scale_gets_that_scale(tmp_path, write):
    human = write("human.qrels", "".join(f"q1 0 d{i} {i % 4}\n" for i in range(40)))
    topics = write("topics.tsv", "q1\tone\n")
    for name in ("a", "b", "c"):
        write(f"sets/{name}.txt", "".join(f"q1 0 d{i} {(i * 7 + ord(name)) % 5}\n" for i in range(40)))
    config, notes = init_config(qrels=str(human), topics=str(topics), judge_folders=[str(tmp_path / "sets")])
    assert {(j["scale"]["min"], j["scale"]["max"], j["binary_threshold"]) for j in config["judges"]} == {(0, 4, 2)}
    assert any("the release's scale is 0-4" in n and "the human qrels' 0-3 fits only 0 of them" in n for n in notes)


def _labels_only(tmp_path, dl19, grades: dict[str, pd.Series], **keys) -> dict:
    nist = _read(dl19 / "qrels.nist.txt")
    nist = nist[nist["query_id"].isin(sorted(set(nist["query_id"]))[:5])]
    judges = [
        {"name": name, "kind": "recorded", "qrels": _write(nist.assign(relevance=g(nist)), tmp_path / name), **keys}
        for name, g in grades.items()
    ]
    return {
        "results": str(tmp_path / "results"),
        "datasets": {
            "d": {
                "source": "local",
                "qrels": _write(nist, tmp_path / "human.qrels"),
                "topics": str(dl19 / "topics.tsv"),
                "unjudged_topics": "drop",
            }
        },
        "judges": judges,
    }


def test_a_strict_judge_is_a_warning_and_a_verdict_note_not_an_error(tmp_path, dl19, caplog):
    config = _labels_only(
        tmp_path,
        dl19,
        {
            "strict": lambda f: f["relevance"].clip(upper=2),  # never the top grade
            "variant": lambda f: (f["relevance"] >= 2) * 2,  # 0 and 2 only
            "full": lambda f: f["relevance"],
        },
    )
    plan = check(validate_schema(config))
    caplog.set_level(logging.WARNING, logger="voirdire.preflight")
    notes = preflight(plan, keys=False, write=False)
    assert notes == unused_grade_notes(plan) and len(notes) == 2
    assert "recorded judge strict uses only the grades 0, 1 and 2 of its scale 0..3 (never 3)" in notes[0]
    assert "recorded judge variant uses only the grades 0 and 2 of its scale 0..3 (never 1 and 3)" in notes[1]
    assert [r.getMessage() for r in caplog.records if r.name == "voirdire.preflight"] == notes


def test_only_the_two_lowest_grades_stop_the_run_unless_allowed(tmp_path, dl19, caplog):
    binary = {"binary": lambda f: (f["relevance"] >= 2).astype(int)}
    with pytest.raises(ConfigError, match="never uses its top grade 3") as error:
        preflight(check(validate_schema(_labels_only(tmp_path, dl19, binary))), keys=False, write=False)
    assert "judges[binary].scale" in str(error.value) and "unused_grades: allow" in str(error.value)
    plan = check(validate_schema(_labels_only(tmp_path, dl19, binary, unused_grades="allow")))
    caplog.set_level(logging.WARNING, logger="voirdire.preflight")
    assert preflight(plan, keys=False, write=False) == unused_grade_notes(plan)
    assert "binary uses only the grades 0 and 1 of its scale 0..3" in unused_grade_notes(plan)[0]
    assert any("binary uses only" in r.getMessage() for r in caplog.records)


# ----------------------------------------------------------------------------- the oracles' base


def _run(path, tag: str, rankings: dict[str, list[str]]) -> str:
    lines = [
        f"{q} Q0 {d} {rank} {100 - rank} {tag}\n" for q, docs in rankings.items() for rank, d in enumerate(docs, 1)
    ]
    path.write_text("".join(lines))
    return str(path)


@pytest.fixture
def first_stage(tmp_path):
    """Topics, qrels and a first-stage run of 30 documents per query."""
    rng = np.random.default_rng(7)
    rankings = {f"q{q}": [f"d{q}-{i}" for i in rng.permutation(40)[:30]] for q in range(1, 4)}
    (tmp_path / "topics.tsv").write_text("".join(f"{q}\ttext {q}\n" for q in rankings))
    (tmp_path / "qrels.txt").write_text(
        "".join(f"{q} 0 {docs[i]} {i % 4}\n" for q, docs in rankings.items() for i in range(12))
    )
    return rankings


def test_the_oracles_base_is_the_run_the_others_rerank_not_the_first_given(tmp_path, first_stage):
    rerank = _run(tmp_path / "a.run", "rerankA", {q: docs[:10][::-1] for q, docs in first_stage.items()})
    base = _run(tmp_path / "b.run", "stage1", first_stage)
    other = _run(tmp_path / "c.run", "rerankB", {q: sorted(docs[:20]) for q, docs in first_stage.items()})
    config, notes = init_config(
        qrels=str(tmp_path / "qrels.txt"), topics=str(tmp_path / "topics.tsv"), runs=[rerank, base, other]
    )
    assert config["oracles"] == {"base": "stage1"}
    assert any("reorder the top depth of 'stage1'" in n and "the run the others rerank" in n for n in notes)


def test_the_oracles_base_falls_back_to_bm25_by_name_then_asks(tmp_path, first_stage, capsys):
    same = {q: docs[::-1] for q, docs in first_stage.items()}
    runs = [_run(tmp_path / "mono.run", "mono", same), _run(tmp_path / "bm.run", "BM25-default", first_stage)]
    config, notes = init_config(qrels=str(tmp_path / "qrels.txt"), topics=str(tmp_path / "topics.tsv"), runs=runs)
    assert config["oracles"] == {"base": "BM25-default"} and any("the run named BM25" in n for n in notes)
    assert oracle_base(dict(zip(["mono", "BM25-default"], runs, strict=True)), "mono") == ("mono", "--oracle-base")

    runs[1] = _run(tmp_path / "bm.run", "rank1", first_stage)
    with pytest.raises(ConfigError, match="give --oracle-base RUN") as error:
        init_config(qrels=str(tmp_path / "qrels.txt"), topics=str(tmp_path / "topics.tsv"), runs=runs)
    assert "'--oracle-base'" in str(error.value)
    args = [
        "init",
        "--qrels",
        str(tmp_path / "qrels.txt"),
        "--topics",
        str(tmp_path / "topics.tsv"),
        "--runs",
        *runs,
        "-o",
        str(tmp_path / "mine.yaml"),
    ]
    assert main(args) == 2 and "--oracle-base" in capsys.readouterr().err
    assert main([*args, "--oracle-base", "rank"]) == 2 and "did you mean 'rank1'" in capsys.readouterr().err
    assert main([*args, "--oracle-base", "rank1"]) == 0
    assert yaml.safe_load((tmp_path / "mine.yaml").read_text())["oracles"] == {"base": "rank1"}
    assert "'rank1' by the human labels: --oracle-base" in capsys.readouterr().out


# ----------------------------------------------------------------------------- folders and families


def test_a_release_folder_or_glob_skips_what_is_not_a_label_set(tmp_path, write):
    write("rel/topics.tsv", "q1\ta query of five words\n")
    write("rel/README.md", "# The release\n")
    write("rel/team-a.txt", "q1 0 d1 2\n")
    write("rel/team-b.qrels", "q1 0 d1 1\n")
    notes: list[str] = []
    assert judge_folder(tmp_path / "rel", notes=notes) == {
        "team-a": str(tmp_path / "rel/team-a.txt"),
        "team-b": str(tmp_path / "rel/team-b.qrels"),
    }
    assert notes == [
        f"{tmp_path / 'rel/README.md'}: skipped, not a label set (line 1 has 3 fields, not a qrels "
        "line (qid iter docid grade))",
        f"{tmp_path / 'rel/topics.tsv'}: skipped, not a label set (line 1 has 6 fields, not a qrels "
        "line (qid iter docid grade))",
    ]
    assert list(judge_folder(f"{tmp_path}/rel/*.txt")) == ["team-a"]
    with pytest.raises(ConfigError, match="holds no label sets"):
        judge_folder(f"{tmp_path}/rel/*.md")


def test_family_patterns_that_match_nothing_and_near_families_are_warnings(tmp_path, first_stage, capsys, caplog):
    run = _run(tmp_path / "mono.run", "monot5", first_stage)
    judge = tmp_path / "judge.txt"
    judge.write_text("".join(f"{q} 0 {docs[i]} {i % 4}\n" for q, docs in first_stage.items() for i in range(12)))
    args = [
        "init",
        "--qrels",
        str(tmp_path / "qrels.txt"),
        "--topics",
        str(tmp_path / "topics.tsv"),
        "--runs",
        run,
        "--judge",
        f"flan={judge}",
        "--family",
        "monot5=t5",
        "--family",
        "flan=flan-t5",
        "--family",
        "*MonoT5*=t5",
        "--family",
        "gpt*=gpt",
        "-o",
        str(tmp_path / "mine.yaml"),
    ]
    assert main(args) == 0
    err = capsys.readouterr().err.splitlines()
    assert "warning: --family gpt*=gpt matches no run or judge name (runs: monot5; judges: flan)" in err
    assert any(
        line.startswith("warning: --family *MonoT5*=t5 matches no") and "did you mean 'monot5'" in line for line in err
    )
    assert any(
        line.startswith("warning: judge flan's family 'flan-t5' is no run's family, but spelled near 't5'")
        and "own-family audit is n/a" in line
        for line in err
    )
    assert len(err) == 3, err
    # the check of a hand-written config says it too, in the log
    caplog.set_level(logging.WARNING, logger="voirdire.config.sections_systems")
    load_plan(tmp_path / "mine.yaml")
    assert any(
        "judges[flan].family: 'flan-t5' is no system's family, but spelled near 't5'" in r.getMessage()
        for r in caplog.records
    )


def test_write_config_puts_the_warnings_in_the_file(tmp_path, release):
    config, notes = init_config(
        qrels=str(release / "human.qrels"), topics=str(release / "topics.tsv"), judge_folders=[str(release)]
    )
    write_config(config, notes, tmp_path / "out.yaml")
    header = [line for line in (tmp_path / "out.yaml").read_text().splitlines() if line.startswith("# - warning:")]
    assert len(header) == sum(n.startswith(WARNING) for n in notes) == 4
