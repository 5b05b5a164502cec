"""Shared fixtures: paths to the repository and to the real TREC DL 2019 data in ../shared."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import slurm as single_node

ROOT = Path(__file__).resolve().parents[1]
SHARED_DL19 = ROOT.parent / "shared" / "data" / "trec-dl-2019"
LOOPBACK_KEY = "sk-loopback-test"
"""The API key of the loopback judges (servers on 127.0.0.1 that speak the OpenAI protocol), one
value for every test that does not plant its own secret."""


def pytest_configure(config):
    os.environ.setdefault("TQDM_DISABLE", "1")
    # litellm fetches a price list from GitHub at import time unless told not to
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # Slurm starts only for the tests that ask for it (the `slurm` fixture below); the others
    # run with SLURM_CONF masked, or with Slurm's tools installed and no controller every
    # `snakemake` start would wait 9 s for the Slurm executor plugin's probe (tests/support/slurm.py)
    single_node.mask()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        # three workers on two cores: torch in a test process takes one, or their OpenMP threads
        # spin-wait on each other (a 20 s model test took 105 s); workflow jobs still set their own
        os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="session")
def slurm():
    """A running single-node Slurm, for the tests that request it: one that answers is reused,
    else ``../shared/tools/slurm-single-node.sh`` starts one (once per machine, whichever xdist
    worker or pytest session asks first). Held until this session ends; the last holder stops it
    if the tests started it (tests/support/slurm.py)."""
    if not single_node.TOOL.is_file():
        cannot_start = f"{single_node.TOOL} is absent (../shared missing)"
    elif os.geteuid() != 0:
        cannot_start = "starting one (slurmctld, slurmd, munge) needs root"
    elif shutil.which("slurmctld") is None and shutil.which("apt-get") is None:
        cannot_start = "slurm-wlm is not installed and there is no apt-get to install it"
    else:
        cannot_start = None
    if cannot_start and not single_node.answers():
        pytest.skip(f"no Slurm answers here, and {cannot_start}")
    failed = single_node.hold()
    if failed is not None:
        if shutil.which("slurmctld") is None:  # apt could not install it
            last = (failed.stderr.strip().splitlines() or ["no output"])[-1]
            pytest.skip(f"slurm-wlm could not be installed from the Debian registry: {last}")
        pytest.fail(f"{single_node.TOOL} start failed:\n{failed.stdout}\n{failed.stderr}")
    try:
        yield
    finally:
        single_node.release()


SHARED_RUNS = ("dl19_results", "dl19_runs_results", "dl19_report", "slurm")
"""Session fixtures that run a workflow (or start Slurm): their tests share one xdist worker."""


def pytest_itemcollected(item):
    """Keep what a fixture computes once computed once under ``pytest -n 3 --dist loadgroup``.

    Tests that use a session-wide workflow run (the DL19 runs, the single-node Slurm) form one
    group, run by one worker; the tests of a module with a module-scoped fixture form another.
    Every other test goes to whichever worker is free. (Marked as each test is collected, so the
    marks are there before any ``pytest_collection_modifyitems``, xdist's included.)
    """
    definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    scopes = {defs[-1].scope for defs in definitions.values() if defs}
    if any(name in getattr(item, "fixturenames", ()) for name in SHARED_RUNS):
        item.add_marker(pytest.mark.xdist_group("shared-runs"))
    elif "module" in scopes:
        item.add_marker(pytest.mark.xdist_group(item.module.__name__))


FIRST = "test_demo_end_to_end_then_nothing_to_do"
"""The longest test (the whole demo: minutes, most of them SmolLM2's)."""


def pytest_collection_modifyitems(config, items):
    """The longest work first: the demo end to end, then the other tests marked ``slow`` (and the
    groups they belong to), then the rest in collection order. With ``--no-loadscope-reorder``
    (pyproject.toml) xdist hands the work out in this order, so the demo starts at once on one
    worker while the other works through everything else; left where the tests tree puts it,
    it started last and the suite waited for it alone."""
    items.sort(key=lambda item: (item.name != FIRST, item.get_closest_marker("slow") is None))


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
def dl19_report(dl19_results, tmp_path_factory) -> Path:
    """The Snakemake report of ``dl19_results``, built once per session (test_report reads its
    HTML, test_report_browser shows it in Chromium)."""
    report = tmp_path_factory.mktemp("dl19-report") / "report.html"
    snakemake("--configfile", ".test/config.yaml", "--config", f"results={dl19_results}", "--report", str(report))
    return report


@pytest.fixture(scope="session")
def dl19_runs_results(tmp_path_factory) -> Path:
    """The DL19 config with two public reranker runs as recorded systems (.test/runs.yaml), once."""
    return _dl19_run(tmp_path_factory, "run.monot5-3b.txt", ".test/runs.yaml", "dl19-runs")


def load_bench(name: str):
    """A script of ``bench/`` as a module (registered under its name: dataclasses look their
    module up by it)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


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


LAUNCH_SNAKEMAKE = Path(__file__).parent / "support" / "launch_snakemake.py"


def keep_judges(config: dict, keep) -> dict:
    """``config``'s judges, only those ``keep(judge)`` is true of (in place; the demo's without its model
    judges, say): a jury keeps the members left, and goes too when fewer than two are."""
    judges = [j for j in config["judges"] if keep(j)]
    names = {j["name"] for j in judges}
    for jury in (j for j in judges if j["kind"] == "jury"):
        jury["members"] = [m for m in jury["members"] if m in names]
    config["judges"] = [j for j in judges if j["kind"] != "jury" or len(j["members"]) >= 2]
    return config


def snakemake_env() -> dict[str, str]:
    """The environment a test's Snakemake runs in: this process's, less pytest's own variables
    (the current test's name, the xdist worker's), which nothing the workflow runs reads."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}


def snakemake(*args: str, cwd: Path = ROOT, check: bool = True) -> subprocess.CompletedProcess:
    """Run the workflow's Snakemake in a subprocess (the way a user runs it: ``support/launch_snakemake.py``;
    the tests that signal Snakemake start it themselves, as ``python -m snakemake``).

    ``--nolock``: the workflow tests run side by side in one working directory (each with its own
    results folder), and Snakemake's directory lock there is one set of numbered files they would
    race for (``.snakemake/locks/0.input.lock`` vanishing under another run).
    """
    result = subprocess.run(
        [sys.executable, str(LAUNCH_SNAKEMAKE), "--nolock", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=1800,
        env=snakemake_env(),
    )
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result
