"""The voirdire-slurm executor overrides parts of upstream's Slurm executor: the upstream names it
overrides or calls must still exist, with the arguments it passes (pyproject.toml pins the
tested minor release; this test says what broke when that pin moves)."""

from __future__ import annotations

import inspect
import re
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "src/snakemake_executor_plugin_voirdire_slurm/__init__.py"


def overridden_names() -> set[str]:
    """Every method the plugin's ``Executor`` defines that upstream's executor also defines,
    read from the source, so that a new override is checked without editing this test."""
    from snakemake_executor_plugin_slurm import Executor as Upstream

    source = PLUGIN.read_text(encoding="utf-8")
    body = source.split("class Executor(SlurmExecutor):", 1)[1]
    defined = set(re.findall(r"^    (?:async )?def (\w+)\(", body, flags=re.MULTILINE))
    called = set(re.findall(r"super\(\)\.(\w+)", body))
    assert called <= defined | {"__post_init__"}, called - defined
    return {name for name in defined | called if hasattr(Upstream, name)} | called


def test_the_pin_is_one_minor_release_and_the_installed_one_is_in_it():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (low_major, low_minor, high_major, high_minor) = re.search(
        r'"snakemake-executor-plugin-slurm>=(\d+)\.(\d+),<(\d+)\.(\d+)"', pyproject
    ).groups()
    assert (high_major, int(high_minor)) == (low_major, int(low_minor) + 1)
    installed = version("snakemake-executor-plugin-slurm").split(".")[:2]
    assert installed == [low_major, low_minor], installed


def test_every_upstream_name_the_plugin_overrides_or_calls_exists_with_its_arguments():
    from snakemake_executor_plugin_slurm import Executor as Upstream

    from snakemake_executor_plugin_voirdire_slurm import Executor

    names = overridden_names()
    assert {"format_job_exec", "run_job", "check_active_jobs", "__post_init__", "_report_job_error_threadsafe"} <= names
    missing = [name for name in names if not hasattr(Upstream, name)]
    assert not missing, f"upstream's Slurm executor lost {missing}: update the voirdire-slurm plugin"
    for name in names:
        ours, theirs = getattr(Executor, name), getattr(Upstream, name)
        if isinstance(theirs, property) or not callable(theirs):
            assert isinstance(ours, property) == isinstance(theirs, property), name
            continue
        expected = list(inspect.signature(ours).parameters)
        actual = list(inspect.signature(theirs).parameters)
        assert actual == expected, f"{name}: upstream takes {actual}, the plugin {expected}"
