"""The voirdire-slurm executor subclasses upstream's Slurm executor (snakemake-executor-plugin-slurm)
and overrides some of its methods, private ones included. pyproject.toml pins the tested minor
release; these tests say what broke when that pin moves, in a unit test instead of mid-run:

- every upstream method the plugin overrides still exists, is still the same kind of function
  (plain, coroutine, async generator, property) and takes the same parameters;
- every upstream name the plugin calls or reads (``super().x``, ``self.x`` it does not define
  itself: a method, a property or an attribute upstream's ``__init__``/``__post_init__`` sets)
  still exists, and each call's arguments still bind to the method's signature;
- none of the plugin's own helpers or attributes has become an upstream name (a silent override).

The names are read from the plugin's source (``ast``), so a new override or call is checked
without editing this test; the plugin's intended overrides are listed here, so that an
accidental one fails.
"""

from __future__ import annotations

import ast
import inspect
import math
import re
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "src/snakemake_executor_plugin_voirdire_slurm/__init__.py"
DISTRIBUTION = "snakemake-executor-plugin-slurm"

OVERRIDES = {
    "__post_init__",
    "format_job_exec",
    "cores",
    "run_job",
    "_report_job_submission_threadsafe",
    "_report_job_error_threadsafe",
    "check_active_jobs",
    "run_jobs",
    "cancel",
    "cancel_jobs",
    "sleep",
}
"""The upstream methods the plugin means to override (its module docstring says why)."""

SHARED_ATTRIBUTES = {"next_seconds_between_status_checks"}
"""Upstream attributes the plugin means to set (the wait before the next status check)."""


@dataclass
class Uses:
    """What the plugin's ``Executor`` class body defines and uses, read from its source."""

    methods: set[str] = field(default_factory=set)  # def / async def, properties included
    assigned: set[str] = field(default_factory=set)  # self.x = ...
    read: set[str] = field(default_factory=set)  # self.x (any use) and super().x
    calls: list[tuple[str, int, ast.Call]] = field(default_factory=list)  # (name, line, call)


def _target(node: ast.AST) -> str | None:
    """``x`` of ``self.x`` or ``super().x``, else None."""
    if not isinstance(node, ast.Attribute):
        return None
    owner = node.value
    if isinstance(owner, ast.Name) and owner.id == "self":
        return node.attr
    if isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id == "super":
        return node.attr
    return None


def plugin_uses() -> Uses:
    tree = ast.parse(PLUGIN.read_text(encoding="utf-8"))
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Executor"]
    uses = Uses(methods={n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))})
    for node in ast.walk(cls):
        name = _target(node)
        if name is not None:
            uses.read.add(name)
            if isinstance(node.ctx, ast.Store):
                uses.assigned.add(name)
        if isinstance(node, ast.Call) and (name := _target(node.func)) is not None:
            uses.calls.append((name, node.lineno, node))
    return uses


def upstream():
    from snakemake_executor_plugin_slurm import Executor as Upstream

    return Upstream


def upstream_instance_attributes() -> set[str]:
    """Attributes upstream's classes set on ``self`` (in ``__init__``, ``__post_init__``, ...)."""
    names: set[str] = set()
    for cls in upstream().__mro__[:-1]:
        try:
            source = inspect.getsource(cls)
        except (OSError, TypeError):
            continue
        names |= set(re.findall(r"\bself\.(\w+)\s*(?::[^=\n]+)?=(?!=)", source))
    return names


def upstream_has(name: str) -> bool:
    return hasattr(upstream(), name) or name in upstream_instance_attributes()


def kind(obj) -> str:
    """plain / coroutine / async generator / property / attribute: how callers use it."""
    if isinstance(obj, property):
        return "property"
    if inspect.isasyncgenfunction(obj):
        return "async generator"
    if inspect.iscoroutinefunction(obj):
        return "coroutine"
    return "plain" if callable(obj) else "attribute"


def parameters(function) -> list[tuple[str, str, bool]]:
    """(name, kind, has a default) of each parameter."""
    return [(p.name, p.kind.name, p.default is not p.empty) for p in inspect.signature(function).parameters.values()]


# -- the pin --------------------------------------------------------------------------------------


def test_the_pin_is_one_minor_release_and_the_installed_and_locked_ones_are_in_it():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    (low_major, low_minor, high_major, high_minor) = re.search(
        rf'"{DISTRIBUTION}>=(\d+)\.(\d+),<(\d+)\.(\d+)"', pyproject
    ).groups()
    assert (high_major, int(high_minor)) == (low_major, int(low_minor) + 1)
    installed = version(DISTRIBUTION).split(".")[:2]
    assert installed == [low_major, low_minor], installed
    locked = re.search(rf"^{DISTRIBUTION}==(\d+)\.(\d+)\.", (ROOT / "requirements.lock").read_text(), re.M)
    assert locked and list(locked.groups()) == [low_major, low_minor], "requirements.lock is outside the pin"


# -- what the plugin overrides ---------------------------------------------------------------------


def test_the_plugin_overrides_exactly_the_upstream_methods_it_means_to():
    uses = plugin_uses()
    overridden = {name for name in uses.methods if hasattr(upstream(), name)}
    lost = sorted((OVERRIDES & uses.methods) - overridden)
    assert not lost, f"upstream's Slurm executor lost {lost}: update the voirdire-slurm plugin"
    assert OVERRIDES <= uses.methods, (
        f"the plugin no longer defines {sorted(OVERRIDES - uses.methods)}: update OVERRIDES"
    )
    accidental = overridden - OVERRIDES
    assert not accidental, f"upstream now defines {sorted(accidental)}, which the plugin defines for itself"


@pytest.mark.parametrize("name", sorted(OVERRIDES))
def test_an_override_is_the_same_kind_with_the_same_parameters(name):
    from snakemake_executor_plugin_voirdire_slurm import Executor

    assert hasattr(upstream(), name), f"upstream's Slurm executor lost {name}: update the voirdire-slurm plugin"
    ours, theirs = inspect.getattr_static(Executor, name), inspect.getattr_static(upstream(), name)
    assert kind(ours) == kind(theirs), f"{name}: upstream's is a {kind(theirs)}, the plugin's a {kind(ours)}"
    if kind(theirs) != "property":
        assert parameters(ours) == parameters(theirs), f"{name}: upstream takes {parameters(theirs)}"


# -- what the plugin calls or reads ----------------------------------------------------------------


def test_every_upstream_name_the_plugin_calls_or_reads_exists():
    uses = plugin_uses()
    assert {
        "get_partition_arg",
        "additional_general_args",
        "report_job_error",
        "run_uuid",
        "logger",
        "_job_submission_executor",
        "wait",
    } <= uses.read - uses.methods
    own = (uses.assigned - SHARED_ATTRIBUTES) | (uses.methods - OVERRIDES)
    missing = sorted(name for name in uses.read - own if not upstream_has(name))
    assert not missing, f"upstream's Slurm executor lost {missing}: update the voirdire-slurm plugin"


def test_the_plugin_sets_no_upstream_attribute_but_the_shared_ones():
    uses = plugin_uses()
    assert SHARED_ATTRIBUTES <= uses.assigned
    clashes = sorted(name for name in uses.assigned - SHARED_ATTRIBUTES if upstream_has(name))
    assert not clashes, f"upstream now uses {clashes}, which the plugin sets for itself: rename them"


def test_every_call_of_an_upstream_method_binds_to_its_signature():
    uses = plugin_uses()
    own = uses.methods - OVERRIDES
    checked = set()
    for name, line, call in uses.calls:
        if name in own or not callable(theirs := getattr(upstream(), name, None)):
            continue  # the plugin's own helper, or an attribute holding a callable (checked above)
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            continue  # *args / **kwargs: nothing to bind
        arguments = [object()] * len(call.args)
        keywords = {k.arg: object() for k in call.keywords}
        try:
            inspect.signature(theirs).bind(object(), *arguments, **keywords)
        except TypeError as error:
            pytest.fail(
                f"line {line}: {ast.unparse(call)} no longer fits upstream's {name}{inspect.signature(theirs)}: {error}"
            )
        checked.add(name)
    assert {"format_job_exec", "run_job", "get_partition_arg", "report_job_error", "cancel_jobs"} <= checked


# -- 5. the wait before the next status check ------------------------------------------------------


def seen_done(duration_s: float, first_wait_s: float, capped: bool) -> tuple[float, int]:
    """(when a job of ``duration_s`` submitted at 0 is seen done, status checks until then) under
    upstream's schedule (the first check after ``first_wait_s``, then 10 s longer after each check
    that finds it running, up to 180 s), with or without the plugin's cap."""
    from snakemake_executor_plugin_voirdire_slurm import next_check_s

    now, wait, checks = 0.0, first_wait_s, 0
    while True:
        now += wait
        checks += 1
        if now >= duration_s:
            return now, checks
        wait = min(wait + 10, 180)
        if capped:
            wait = next_check_s(wait, first_wait_s, [now])


def test_the_next_check_is_within_a_share_of_the_youngest_jobs_age():
    from snakemake_executor_plugin_voirdire_slurm import YOUNGEST_SHARE, ExecutorSettings, next_check_s

    assert "init_seconds_before_status_checks" in ExecutorSettings.__dataclass_fields__  # the plugin reads it
    assert next_check_s(32, 2, []) == 32  # nothing running: upstream's wait
    assert next_check_s(32, 2, [400, 20]) == YOUNGEST_SHARE * 20  # the youngest job decides
    assert next_check_s(32, 2, [1]) == 2  # never below the first wait
    assert next_check_s(12, 2, [400]) == 12  # never longer than upstream's
    for duration in (3, 10, 22, 60, 300, 3600):
        seen, checks = seen_done(duration, 2, capped=True)
        assert seen <= duration * (1 + YOUNGEST_SHARE) + 2, duration
        # a few more checks than upstream's: the waits grow by a factor, not by 10 s
        more = checks - seen_done(duration, 2, capped=False)[1]
        assert 0 <= more <= 4 + math.log(duration / 2) / math.log(1 + YOUNGEST_SHARE), duration
    # upstream's schedule alone sees the profile's 22 s group job 14 s late
    assert seen_done(22, 2, capped=False)[0] - 22 > 10 > seen_done(22, 2, capped=True)[0] - 22
