"""Where a command's CPU time goes, by process kind: the test suite, the demo, any workflow run.

    python bench/process_cpu.py [--acct] [--interval 0.5] [--json FILE] [--top 25] -- COMMAND...
    python bench/process_cpu.py --acct -- .venv/bin/python -m pytest      # the suite
    python bench/process_cpu.py --acct -- .venv/bin/snakemake --cores 2   # the demo

`time` counts a command and the children it waits for; detached processes (a server a service
job started) and the kernel's and the VM agent's threads escape it. This script prints the CPU
each kind of process spent *during the run*: Snakemake itself, each rule's jobs (by the job script's name), pytest's
workers, Java, kernel threads, everything else by name. It reads every process's command line
and CPU time (psutil) every ``--interval`` seconds. With ``--acct`` (root) it also turns
on the kernel's process accounting (``acct(2)``, to a temporary file, off again at the end),
whose record of each process that exits gives its exact CPU time, where sampling alone misses
a process's last interval (and a process shorter than one interval: accounted, it is named by
its executable). The kernel keeps one accounting file per machine: do not use ``--acct`` where
the machine's own process accounting runs (the ``acct`` package), it would be switched off.
A process alive before the command counts only what it spent since. Beside it the machine's own
counters (``/proc/stat``): busy, idle and stolen core-seconds, and what share of the busy time
the processes explain. Linux only. Prints figures; the command's own output goes to ``--log``
(default: a temporary file, named at the end).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

ACCT_HZ = 100
"""The unit of the accounting records' CPU times (AHZ on Linux)."""
ACCT_ENV = "PROCESS_CPU_ACCOUNTING"
"""Set in the command's environment while accounting is on: a nested run of this script (a test
of it inside a measured suite) samples only, and leaves the outer run's accounting alone (the
kernel keeps one accounting file for the whole machine)."""
ACCT_V3 = struct.Struct("<BBHIIIIIIfHHHHHHHH16s")
"""``struct acct_v3`` (linux/acct.h): 64 bytes a process."""


@dataclass
class Seen:
    pid: int
    ppid: int
    comm: str
    args: str
    started: float
    """Start time, seconds since the epoch."""
    first_s: float
    """CPU seconds at first sight; subtracted only for processes that ran before the command."""
    last_s: float
    before: bool

    @property
    def during_s(self) -> float:
        return self.last_s - (self.first_s if self.before else 0.0)


def machine_counters() -> dict[str, float]:
    """Core-seconds since boot: busy (user, nice, system, irq, softirq), idle (with iowait), steal."""
    t = psutil.cpu_times()
    return {"busy": t.user + t.nice + t.system + t.irq + t.softirq, "idle": t.idle + t.iowait, "steal": t.steal}


def _args(process: psutil.Process) -> str:
    try:
        return " ".join(process.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return ""


def sample(seen: dict[tuple[int, float], Seen], me: int, before: bool) -> None:
    for process in psutil.process_iter():
        if process.pid == me:
            continue
        try:
            with process.oneshot():
                times = process.cpu_times()
                cpu, key = times.user + times.system, (process.pid, process.create_time())
                entry = seen.get(key)
                if entry is None:
                    seen[key] = Seen(
                        process.pid, process.ppid(), process.name(), _args(process), key[1], cpu, cpu, before
                    )
                elif cpu != entry.last_s:
                    entry.last_s = cpu
                    # a child's command line changes at exec, and is empty once it has exited
                    entry.args = _args(process) or entry.args
                    entry.comm = process.name()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue


def _comp(value: int) -> float:
    """A ``comp_t`` (13-bit mantissa, 3-bit base-8 exponent) in seconds."""
    return ((value & 0x1FFF) << (3 * (value >> 13))) / ACCT_HZ


@contextlib.contextmanager
def accounting(path: Path, wanted: bool):
    """The kernel's process accounting into ``path`` while the block runs, if ``wanted``; yields
    whether it is on (it needs root, a kernel built with BSD process accounting, version 3
    records, and no outer run of this script: :data:`ACCT_ENV`)."""
    libc = ctypes.CDLL(None, use_errno=True)
    path.write_bytes(b"")
    on = wanted and not os.environ.get(ACCT_ENV) and libc.acct(str(path).encode()) == 0
    try:
        yield on
    finally:
        if on:
            libc.acct(None)


def exited(path: Path) -> list[tuple[int, int, str, float, float]]:
    """(pid, parent pid, name, start time since the epoch, CPU seconds) of each accounted process."""
    data = path.read_bytes()
    records = []
    for offset in range(0, len(data) - ACCT_V3.size + 1, ACCT_V3.size):
        fields = ACCT_V3.unpack_from(data, offset)
        if fields[1] != 3:  # not a version 3 record
            continue
        pid, ppid, btime, utime, stime = fields[6], fields[7], fields[8], fields[10], fields[11]
        name = fields[18].split(b"\0")[0].decode(errors="replace")
        records.append((pid, ppid, name, float(btime), _comp(utime) + _comp(stime)))
    return records


def merge(seen: dict[tuple[int, float], Seen], records: list[tuple[int, int, str, float, float]]) -> None:
    """Each accounted process's exact CPU time into ``seen``: matched by pid and start time (the
    record's is whole seconds), added when sampling never saw it."""
    by_pid: dict[int, list[Seen]] = {}
    for entry in seen.values():
        by_pid.setdefault(entry.pid, []).append(entry)
    for pid, ppid, name, started, cpu in records:
        match = [e for e in by_pid.get(pid, []) if abs(e.started - started) <= 1.5]
        if match:
            match[0].last_s = cpu
        else:
            seen[(pid, started)] = Seen(pid, ppid, name, "", started, 0.0, cpu, False)


LAUNCHER = "launch_snakemake"
"""The test suite's Snakemake command line (tests/support/launch_snakemake.py)."""
KINDS: list[tuple[str, re.Pattern[str]]] = [
    ("snakemake", re.compile(LAUNCHER + r"\.py")),
    ("job: {0}", re.compile(r"\.snakemake/scripts/tmp\w+\.(\w+)\.py")),
    ("pytest worker", re.compile(r"exec\(eval\(sys\.stdin\.readline\(\)\)\)")),
    ("snakemake", re.compile(r"(^|/|-m )snakemake( |$)")),
    ("pytest", re.compile(r"(^|/|-m )pytest( |$)")),
    ("java", re.compile(r"(^|/)java ")),
]


def kind(entry: Seen) -> str:
    """The process's kind: a named pattern of its command line, else its name (``kernel: name``
    for the kernel's threads, which have no command line)."""
    for label, pattern in KINDS:
        found = pattern.search(entry.args)
        if found:
            return label.format(*found.groups())
    if not entry.args:
        return f"kernel: {entry.comm}" if entry.ppid == 2 or entry.pid == 2 else entry.comm
    return entry.comm


def summarise(seen: dict[tuple[int, float], Seen], top: int) -> list[dict]:
    cpu: Counter[str] = Counter()
    count: Counter[str] = Counter()
    for entry in seen.values():
        if entry.during_s > 0:
            name = kind(entry)
            cpu[name] += entry.during_s
            count[name] += 1
    rows = [{"kind": k, "processes": count[k], "cpu_s": round(v, 1)} for k, v in cpu.most_common()]
    if len(rows) > top:
        rest = rows[top:]
        rows = rows[:top] + [
            {
                "kind": f"({len(rest)} other kinds)",
                "processes": sum(r["processes"] for r in rest),
                "cpu_s": round(sum(r["cpu_s"] for r in rest), 1),
            }
        ]
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--acct", action="store_true", help="the kernel's process accounting too (root)")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between two reads of /proc")
    parser.add_argument("--json", type=Path, help="write the figures and every process seen here")
    parser.add_argument("--log", type=Path, help="the command's output (default: a temporary file)")
    parser.add_argument("--top", type=int, default=25, help="kinds shown one by one; the rest summed")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="after --: the command to run")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --")
    log_path = args.log or Path(tempfile.mkstemp(prefix="process_cpu.", suffix=".log")[1])

    seen: dict[tuple[int, float], Seen] = {}
    me = os.getpid()
    sample(seen, me, before=True)
    with (
        tempfile.TemporaryDirectory(prefix="process_cpu.") as tmp,
        accounting(Path(tmp) / "acct", args.acct) as accounted,
    ):
        start, counters = time.monotonic(), machine_counters()
        with open(log_path, "wb") as log:
            env = {**os.environ, ACCT_ENV: "1"} if accounted else None
            process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
            while process.poll() is None:
                sample(seen, me, before=False)
                time.sleep(args.interval)
        sample(seen, me, before=False)
        wall = time.monotonic() - start
        if accounted:
            merge(seen, exited(Path(tmp) / "acct"))
    machine = {name: round(value - counters[name], 1) for name, value in machine_counters().items()}
    rows = summarise(seen, args.top)
    total = sum(entry.during_s for entry in seen.values() if entry.during_s > 0)

    print(f"command: {' '.join(command)}  (exit {process.returncode}; its output: {log_path})")
    print(
        f"wall {wall:.1f} s on {os.cpu_count()} cores: busy {machine['busy']:.1f} core-s, idle "
        f"{machine['idle']:.1f}, stolen by the hypervisor {machine['steal']:.1f}"
    )
    share = total / machine["busy"] if machine["busy"] else float("nan")
    how = "sampled, and accounted at exit" if accounted else "sampled only (--acct: accounted at exit, as root)"
    print(f"the processes ({how}): {total:.1f} CPU-s, {share:.0%} of the busy time\n")
    width = max(len(r["kind"]) for r in rows) if rows else 4
    print(f"{'kind':<{width}}  processes  CPU-s")
    for row in rows:
        print(f"{row['kind']:<{width}}  {row['processes']:>9}  {row['cpu_s']:>6.1f}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "command": command,
                    "returncode": process.returncode,
                    "wall_s": round(wall, 1),
                    "cores": os.cpu_count(),
                    "machine_core_s": machine,
                    "processes_cpu_s": round(total, 1),
                    "accounted": accounted,
                    "kinds": rows,
                    "processes": [
                        asdict(e) | {"kind": kind(e), "during_s": round(e.during_s, 2)}
                        for e in seen.values()
                        if e.during_s > 0
                    ],
                },
                indent=1,
            )
        )
    return process.returncode


if __name__ == "__main__":
    sys.exit(main())
