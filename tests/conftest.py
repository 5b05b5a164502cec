"""Shared fixtures: paths to the repository and to the real TREC DL 2019 data in ../shared."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DL19 = ROOT.parent / "shared" / "data" / "trec-dl-2019"


def pytest_configure(config):
    os.environ.setdefault("TQDM_DISABLE", "1")
    # litellm fetches a price list from GitHub at import time unless told not to
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def dl19() -> Path:
    if not (SHARED_DL19 / "qrels.nist.txt").is_file():
        pytest.skip(f"real TREC DL 2019 data not found at {SHARED_DL19} (../shared absent)")
    return SHARED_DL19


def _dl19_run(tmp_path_factory, needed: str, configfile: str, name: str) -> Path:
    """A DL19 test config run once per session into its own folder (skips without ../shared)."""
    if not (SHARED_DL19 / needed).is_file():
        pytest.skip(f"real TREC DL 2019 data ({needed}) not found at {SHARED_DL19} (../shared absent)")
    out = tmp_path_factory.mktemp(name)
    snakemake("--cores", "2", "--configfile", configfile, "--config", f"results={out}")
    return out


@pytest.fixture(scope="session")
def dl19_results(tmp_path_factory) -> Path:
    """The DL19 test config run locally once per session (test_dl19 reads it, test_slurm compares)."""
    return _dl19_run(tmp_path_factory, "qrels.nist.txt", ".test/config.yaml", "dl19")


@pytest.fixture(scope="session")
def dl19_runs_results(tmp_path_factory) -> Path:
    """The DL19 config with two public reranker runs as recorded systems (.test/runs.yaml), once."""
    return _dl19_run(tmp_path_factory, "run.monot5-3b.txt", ".test/runs.yaml", "dl19-runs")


def read_trec_qrels(path) -> dict[str, dict[str, int]]:
    """qid -> docid -> grade, read independently of the project's readers."""
    qrels: dict[str, dict[str, int]] = {}
    for line in open(path):
        qid, _, docid, grade = line.split()
        qrels.setdefault(qid, {})[docid] = int(grade)
    return qrels


@pytest.fixture
def write(tmp_path):
    """Write text to a file under tmp_path and return its path."""

    def _write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return _write


def prp_shown(conversation: list[dict[str, str]]) -> tuple[str, str]:
    """The two passages a PRP prompt shows, as (Passage A, Passage B)."""
    text = conversation[0]["content"]
    return text.split('Passage A: "')[1].split('"')[0], text.split('Passage B: "')[1].split('"')[0]


def snakemake(*args: str, cwd: Path = ROOT, check: bool = True) -> subprocess.CompletedProcess:
    """Run the workflow's Snakemake in a subprocess (the way a user runs it)."""
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result
