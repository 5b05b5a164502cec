"""Ordinary mistakes speak up at `voirdire check`, before any job, one line each: a family typo,
a 0/1 judge declared 0-3; and `invalid_labels: drop` holds at check time too."""

from __future__ import annotations

import shutil

import yaml
from conftest import ROOT

from voirdire.cli import main as voirdire_cli

DL19 = ROOT.parent / "shared" / "data" / "trec-dl-2019"


def runs_config(tmp_path, mutate) -> str:
    config = yaml.safe_load((ROOT / ".test" / "runs.yaml").read_text())
    config["results"] = str(tmp_path / "results")
    for entry in config["datasets"].values():
        for key in ("candidates", "qrels", "topics"):
            entry[key] = str((ROOT / entry[key]).resolve())
    for run in config["runs"].values():
        run["path"] = str((ROOT / run["path"]).resolve())
    for judge in config["judges"]:
        if "qrels" in judge:
            judge["qrels"] = str((ROOT / judge["qrels"]).resolve())
    mutate(config, tmp_path)
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def check(path, capsys) -> tuple[int, str]:
    code = voirdire_cli(["check", "--configfile", path])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def judge(config, name):
    return next(j for j in config["judges"] if j["name"] == name)


def test_a_family_typo_is_one_line_that_names_the_family_it_meant(tmp_path, capsys):
    def typo(config, _):
        judge(config, "rank1-7b")["family"] = "rnak1"

    code, out = check(runs_config(tmp_path, typo), capsys)
    assert code == 2
    lines = [line for line in out.splitlines() if line.startswith("voirdire: ")]
    assert len(lines) == 1 and "judges[rank1-7b].family" in lines[0]
    assert "did you mean 'rank1'" in lines[0] and "system rank1" in lines[0]


def test_two_close_families_pass_when_the_user_says_so(tmp_path, capsys):
    def allowed(config, _):
        judge(config, "rank1-7b")["family"] = "rnak1"
        config["audits"] = {"self_preference": {"similar_families": "allow"}}

    code, out = check(runs_config(tmp_path, allowed), capsys)
    assert code == 0, out


def test_a_binary_judge_declared_on_zero_to_three_is_caught_at_check(tmp_path, capsys):
    def wrong_scale(config, _):
        entry = judge(config, "monot5-3b")
        entry["scale"], entry["binary_threshold"] = {"min": 0, "max": 3}, 2

    code, out = check(runs_config(tmp_path, wrong_scale), capsys)
    assert code == 2
    assert "monot5-3b" in out and "never uses its top grade 3" in out and "judges[monot5-3b].scale" in out

    def allowed(config, tmp):
        wrong_scale(config, tmp)
        judge(config, "monot5-3b")["unused_grades"] = "allow"

    assert check(runs_config(tmp_path, allowed), capsys)[0] == 0


def test_invalid_labels_drop_holds_at_check(tmp_path, capsys):
    def one_bad_line(config, tmp):
        source = DL19 / "qrels.rank1-7b.txt"
        copy = tmp / "qrels.rank1-7b.txt"
        shutil.copy(source, copy)
        with copy.open("a") as fh:
            fh.write("19335 0 extra-doc 5\n")  # off the 0..1 scale
        entry = judge(config, "rank1-7b")
        entry["qrels"] = str(copy)

    code, out = check(runs_config(tmp_path, one_bad_line), capsys)
    assert code == 2 and "grade 5" in out  # the default: an error naming the line

    def dropped(config, tmp):
        one_bad_line(config, tmp)
        judge(config, "rank1-7b")["invalid_labels"] = "drop"

    code, out = check(runs_config(tmp_path, dropped), capsys)
    assert code == 0, out


def test_init_takes_family_globs_names_what_it_found_and_prints_a_command_that_runs_anywhere(tmp_path, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("run.monot5-3b.txt", "run.rank1-7b.txt"):
        shutil.copy(DL19 / name, runs / name)
    out = tmp_path / "mine.yaml"
    code = voirdire_cli(
        [
            "init",
            "--qrels",
            str(DL19 / "qrels.nist.txt"),
            "--topics",
            str(DL19 / "topics.tsv"),
            "--runs",
            str(runs),
            "--judge",
            f"mono={DL19 / 'qrels.monot5-3b.txt'}",
            "--family",
            "*monot5*=t5",
            "--family",
            "mono*=t5",
            "--family",
            "*rank1*=rank1",
            "--oracle-base",
            "monot5",
            "-o",
            str(out),
        ]
    )
    printed = capsys.readouterr().out
    assert code == 0, printed
    config = yaml.safe_load(out.read_text())
    assert config["runs"]["runs"]["families"] == {"monot5": "t5", "rank1": "rank1"}
    assert config["judges"][0]["family"] == "t5"
    assert "monot5  family: t5" in printed and "rank1  family: rank1" in printed
    assert "reorder the top depth of 'monot5'" in printed
    assert f"snakemake -s {ROOT / 'Snakefile'} --cores 2 --configfile {out}" in printed
