"""``voirdire init`` names systems short: run files whose tags clash are named by their file names,
which ran to 50 characters in every verdict cell that names systems; init gives each run a short,
unique, readable name (at most 20 characters), keeps the full name, file and run tag in the
entry's ``description``, and writes a config that checks."""

from __future__ import annotations

import re

import pytest
import yaml

from voirdire.config import check, validate_schema
from voirdire.init import SHORT_NAME, init_config, short_names, write_config

TOPICS = "q1\tone\nq2\ttwo\n"
QRELS = "q1 0 d1 0\nq1 0 d2 2\nq1 0 d3 3\nq2 0 d1 1\nq2 0 d9 2\n"
SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


def run(tag: str, shift: float = 0.0) -> str:
    return "".join(
        f"{q} Q0 {d} {r} {s + shift} {tag}\n"
        for q, d, r, s in [("q1", "d1", 1, 3.0), ("q1", "d2", 2, 2.0), ("q1", "d3", 3, 1.0), ("q2", "d1", 1, 1.5)]
    )


# a challenge's submissions: every team's files share the challenge's prefix and suffix, and the
# tag the submission template set (so the tags clash and the files are named by their stems)
CHALLENGE = [
    "llmjudge-2024-submission-team-alpha-bm25-monot5-rerank-run1",
    "llmjudge-2024-submission-team-alpha-bm25-monot5-rerank-run2",
    "llmjudge-2024-submission-team-alpha-bm25-monoelectra-rerank-run1",
    "llmjudge-2024-submission-team-beta-splade-pp-ed-run1",
    "llmjudge-2024-submission-team-gamma-colbertv2-plaid-run1",
]


def test_short_names_are_short_unique_and_keep_what_tells_the_runs_apart():
    found = short_names(CHALLENGE)
    assert list(found) == CHALLENGE
    names = list(found.values())
    assert len(set(names)) == len(names) and all(len(n) <= SHORT_NAME and SAFE.match(n) for n in names)
    assert not any(n.startswith("llmjudge") for n in names)  # the shared prefix carries nothing
    assert all(full.endswith(short.rsplit("-", 1)[-1]) for full, short in found.items())  # the run number stays
    # the words that tell alpha's three runs apart (the reranker, whole or cut) stay; bm25, which all three share, goes
    assert [found[n].split("-")[1] for n in CHALLENGE[:3]] == ["monot5", "monot5", "monoelect"]
    assert {"alpha", "beta", "gamma"} <= {part for n in names for part in n.split("-")}


def test_short_names_leave_short_names_alone_and_never_take_the_workflows_own():
    assert short_names(["monot5", "rank1"]) == {"monot5": "monot5", "rank1": "rank1"}
    found = short_names(["bm25", "x" * 30 + "-bm25", "Perfect"])
    assert len(set(found.values())) == 3
    assert not {n.lower() for n in found.values()} & {"bm25", "perfect"}
    # names alike but for a middle word and a last coincidence are told apart, never reused
    many = short_names([f"team-{'a' * 25}-run{i % 3}" for i in range(7)] + ["team-aaaaaaaa-run0-2"])
    assert len(set(many.values())) == len(many) and all(len(n) <= SHORT_NAME for n in many.values())


@pytest.fixture
def challenge(tmp_path):
    folder = tmp_path / "submissions"
    folder.mkdir()
    for index, stem in enumerate(CHALLENGE):
        (folder / f"{stem}.txt").write_text(run("llmjudge_submission_template", shift=index))
    (tmp_path / "topics.tsv").write_text(TOPICS)
    (tmp_path / "qrels.txt").write_text(QRELS)
    return tmp_path


def test_init_names_runs_with_clashing_long_tags_short_and_keeps_the_full_name(challenge):
    config, notes = init_config(
        qrels=str(challenge / "qrels.txt"),
        topics=str(challenge / "topics.tsv"),
        runs=[str(challenge / "submissions")],
        families=["*team-alpha*=t5"],
        oracle_base_run=CHALLENGE[3],
    )
    runs = config["runs"]
    assert len(runs) == len(CHALLENGE)  # one entry a run: each its own short name
    assert all(len(name) <= SHORT_NAME for name in runs) and config["systems"] == ["Perfect", *runs]
    for name, entry in runs.items():
        full = next(stem for stem in CHALLENGE if entry["path"].endswith(f"{stem}.txt"))
        assert full in entry["description"] and entry["path"] in entry["description"]
        assert "run tag llmjudge_submission_template" in entry["description"]
        assert entry.get("family") == ("t5" if "team-alpha" in full else None), name
    base = config["oracles"]["base"]
    assert base in runs and runs[base]["path"].endswith(f"{CHALLENGE[3]}.txt")  # --oracle-base by its full name
    assert any("shortened" in note and "recorded_runs.csv" in note for note in notes)
    path = challenge / "mine.yaml"
    write_config(config, notes, path)
    plan = check(validate_schema(yaml.safe_load(path.read_text())))
    assert sorted(s.name for s in plan.recorded) == sorted(runs)


def test_init_keeps_a_folder_entry_when_the_names_are_short(challenge):
    folder = challenge / "short"
    folder.mkdir()
    for tag in ("monot5", "rank1"):
        (folder / f"{tag}.txt").write_text(run(tag))
    config, _ = init_config(
        qrels=str(challenge / "qrels.txt"),
        topics=str(challenge / "topics.tsv"),
        runs=[str(folder)],
        oracle_base_run="monot5",
    )
    assert config["runs"] == {"short": {"path": str(folder)}} and config["systems"] == ["Perfect", "short"]
