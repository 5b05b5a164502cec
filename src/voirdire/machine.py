"""The CPU a run's figures came from: its name, its vector instructions, the cores it may use.

A time means little without its machine: SmolLM2 runs in bfloat16 on a CPU with bfloat16
instructions and in float32 (several times slower) elsewhere, and the same 2-core VM can be 15-50 %
slower in one hour than in another. The fingerprint next to every table records :func:`cpu`;
``bench/machine_speed.py`` measures how fast the machine is at that moment.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

CPUINFO = "/proc/cpuinfo"

ISA_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "amx_bf16", "asimd", "sve")
"""The instruction sets that decide which kernels torch and the BLAS run (x86 and Arm)."""


def _fields(cpuinfo: str) -> dict[str, str]:
    """The first processor's ``key: value`` lines of ``/proc/cpuinfo`` ({} where it is absent)."""
    try:
        text = Path(cpuinfo).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if fields:
                break  # the first processor is enough: a VM's cores are alike
            continue
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields


def _flags(fields: dict[str, str]) -> frozenset[str]:
    return frozenset((fields.get("flags") or fields.get("Features") or "").split())


def cpu_flags(cpuinfo: str = CPUINFO) -> frozenset[str]:
    """Every flag the CPU reports (x86 ``flags``, Arm ``Features``); empty where unknown."""
    return _flags(_fields(cpuinfo))


def usable_cores() -> int:
    """The cores this process may run on (its affinity: a Slurm job's or a container's share)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def cpu(cpuinfo: str = CPUINFO) -> dict:
    """The CPU, as the fingerprint records it: name, vendor and family, which of
    :data:`ISA_FLAGS` it has, and the cores this process may use."""
    fields = _fields(cpuinfo)
    flags = _flags(fields)
    return {
        "model": fields.get("model name") or platform.processor() or platform.machine(),
        "vendor": fields.get("vendor_id") or fields.get("CPU implementer"),
        "family": fields.get("cpu family"),
        "isa": [flag for flag in ISA_FLAGS if flag in flags],
        "cores": usable_cores(),
    }


def describe(info: dict) -> str:
    """One line for a log: ``AMD EPYC (family 25), 2 cores, avx2 fma, no AVX-512``."""
    family = f" (family {info['family']})" if info.get("family") else ""
    isa = " ".join(info["isa"]) or "no vector flags known"
    x86 = info.get("vendor") in ("GenuineIntel", "AuthenticAMD")
    no512 = ", no AVX-512" if x86 and "avx512f" not in info["isa"] else ""
    return f"{info['model']}{family}, {info['cores']} cores, {isa}{no512}"
