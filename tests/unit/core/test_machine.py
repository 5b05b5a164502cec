"""voirdire.machine (the CPU in every fingerprint) on planted /proc/cpuinfo files, and
bench/machine_speed.py (the line `make test` prints first) run as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import ROOT

from voirdire import machine, timing
from voirdire.llm.local import inference

ZEN3 = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model name\t: AMD EPYC 7B13
flags\t\t: fpu sse2 avx fma avx2 sha_ni

processor\t: 1
vendor_id\t: AuthenticAMD
cpu family\t: 25
model name\t: AMD EPYC 7B13
flags\t\t: fpu sse2 avx fma avx2 sha_ni avx512f
"""
SAPPHIRE_RAPIDS = """processor\t: 0
vendor_id\t: GenuineIntel
cpu family\t: 6
model name\t: Intel(R) Xeon(R) Platinum 8481C
flags\t\t: fpu avx2 fma avx512f avx512_bf16 amx_bf16 amx_tile
"""
GRAVITON = """processor\t: 0
BogoMIPS\t: 243.75
Features\t: fp asimd evtstrm aes sve
CPU implementer\t: 0x41
"""


def test_the_cpu_is_read_from_the_first_processor(tmp_path):
    path = tmp_path / "cpuinfo"
    path.write_text(ZEN3)
    info = machine.cpu(str(path))
    # the second processor's avx512f is not the first's: a VM's cores are read as the first
    assert info["isa"] == ["avx2", "fma"] and info["model"] == "AMD EPYC 7B13"
    assert info["vendor"] == "AuthenticAMD" and info["family"] == "25"
    assert info["cores"] == len(os.sched_getaffinity(0))
    assert machine.describe(info) == f"AMD EPYC 7B13 (family 25), {info['cores']} cores, avx2 fma, no AVX-512"
    path.write_text(SAPPHIRE_RAPIDS)
    info = machine.cpu(str(path))
    assert info["isa"] == ["avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16"]
    assert "AVX-512" not in machine.describe(info)  # it has it: nothing to say
    assert inference.cpu_bf16_flags.__wrapped__(str(path)) == ("avx512_bf16", "amx_bf16")
    path.write_text(GRAVITON)
    info = machine.cpu(str(path))
    assert info["isa"] == ["asimd", "sve"] and info["vendor"] == "0x41"
    assert "AVX-512" not in machine.describe(info)  # an Arm CPU: AVX-512 is not its question


def test_a_machine_without_cpuinfo_still_has_a_name_and_cores(tmp_path):
    info = machine.cpu(str(tmp_path / "absent"))
    assert info["isa"] == [] and info["cores"] >= 1 and isinstance(info["model"], str)
    assert machine.cpu_flags(str(tmp_path / "absent")) == frozenset()
    assert "no vector flags known" in machine.describe(info)


def test_the_speed_line_names_the_machine_and_its_rates(tmp_path):
    out = tmp_path / "speed.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "machine_speed.py"), "--seconds", "0.01", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    figures = json.loads(out.read_text())
    assert figures["cpu"] == machine.cpu()
    assert all(figures[k] > 0 for k in ("matmul_gflops", "memory_gbs", "python_msteps", "matmul_all_gflops"))
    (line,) = done.stdout.splitlines()
    assert line.startswith(f"machine: {machine.describe(figures['cpu'])}; at {figures['at']}")
    assert f"{figures['matmul_gflops']:.0f} GFLOP/s" in line and f"{figures['memory_gbs']:.1f} GB/s" in line
    assert f"all {figures['cpu']['cores']} cores at once: {figures['matmul_all_gflops']:.0f} GFLOP/s" in line


def test_the_timings_table_says_which_machine_its_times_are_of():
    assert timing.measured_on({}) == f"measured on {machine.describe(machine.cpu())}"
    assert "cluster's nodes" in timing.measured_on({"SLURM_JOB_ID": "7"})  # a job of many nodes' jobs
