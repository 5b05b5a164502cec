"""Models the workflow serves itself: ``vllm serve`` in a Snakemake service job, beside its callers.

A judge or ranker may say ``serve: {engine: vllm, model: NAME, gpus: 1, port: auto}`` instead
of ``api_base``. The rule ``serve`` (``workflow/rules/serve.smk``) then runs
:func:`run_service` as a Snakemake *service* job: Snakemake starts it together with every job
that calls the model (one group job, on one node: the GPU node under Slurm), and terminates it
when the last of them is done. The service

1. starts ``command MODEL --host 127.0.0.1 --port PORT --tensor-parallel-size GPUS ARGS``
   (``command`` is ``vllm serve``; tests put the loopback server there) in its own process
   group, its output in the service's log;
2. waits until ``GET /v1/models`` lists the model (the server's own name for it), or fails at
   once, with the last lines of the server's log, when the server exits first or
   ``startup_timeout_s`` passes;
3. writes the service file: a JSON with the URL, the model's own name and the engine's version
   (``GET /version``), which the callers read (:func:`attach`) and put in their summaries, and
   so in the fingerprint;
4. watches the server: when it dies, it writes why into the service file (``"died"``), so a
   caller's connection errors end in one clear error (:func:`explain`); every call answered
   before stays in the caller's store;
5. on SIGTERM (Snakemake, once the callers are done) stops the server: SIGTERM to its process
   group, SIGKILL after ``stop_timeout_s``.

Nothing here enters a cache key: the URL and port change from run to run, the stored answers
do not.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, InputError

ENGINES = {"vllm": "vllm serve"}
"""Serving engines and the command that starts each (``serve.command`` overrides it)."""

HOST = "127.0.0.1"
"""The server listens on the node's loopback: its callers run in the same group job."""

KEYS = ("engine", "model", "gpus", "port", "args", "command", "startup_timeout_s", "mem_mb")


@dataclass(frozen=True)
class ServeSpec:
    """How to start one model server: ``command model --host --port --tensor-parallel-size args``."""

    model: str
    engine: str = "vllm"
    gpus: int = 1
    port: int | None = None
    """A fixed port, or None for a free one picked at start (``port: auto``)."""
    args: tuple[str, ...] = ()
    command: str = ENGINES["vllm"]
    startup_timeout_s: float = 1800.0
    mem_mb: int = 32000
    stop_timeout_s: float = 30.0

    @classmethod
    def from_config(cls, entry: Mapping[str, Any], *, key: str) -> ServeSpec:
        """A ``serve:`` block (``key`` names it in errors)."""
        unknown = sorted(set(entry) - set(KEYS))
        if unknown:
            raise ConfigError(f"unknown keys {unknown}; expected some of {list(KEYS)}", key=key)
        engine = entry.get("engine", "vllm")
        if engine not in ENGINES:
            raise ConfigError(f"unknown engine {engine!r}; expected one of {sorted(ENGINES)}", key=f"{key}.engine")
        if not entry.get("model"):
            raise ConfigError("needs 'model' (what the engine loads: a Hugging Face id or a path)", key=f"{key}.model")
        port = entry.get("port", "auto")
        if port != "auto" and not (isinstance(port, int) and 0 < port < 65536):
            raise ConfigError(f"port must be 'auto' or 1..65535, got {port!r}", key=f"{key}.port")
        command = entry.get("command") or ENGINES[engine]
        if not shlex.split(command):
            raise ConfigError("command is empty", key=f"{key}.command")
        return cls(
            model=str(entry["model"]),
            engine=engine,
            gpus=int(entry.get("gpus", 1)),
            port=None if port == "auto" else port,
            args=tuple(str(a) for a in entry.get("args", ())),
            command=command,
            startup_timeout_s=float(entry.get("startup_timeout_s", 1800)),
            mem_mb=int(entry.get("mem_mb", 32000)),
        )

    @property
    def name(self) -> str:
        """The server's name in paths: the model's last path part and a hash of how it is served."""
        how = json.dumps([self.engine, self.model, self.gpus, list(self.args), self.command])
        slug = re.sub(r"[^a-z0-9.-]+", "-", self.model.rsplit("/", 1)[-1].lower()).strip("-") or "model"
        return f"{slug}-{hashlib.sha256(how.encode()).hexdigest()[:8]}"

    def argv(self, port: int) -> list[str]:
        """The command line that starts the server on ``port``."""
        return [
            *shlex.split(self.command),
            self.model,
            "--host",
            HOST,
            "--port",
            str(port),
            "--tensor-parallel-size",
            str(self.gpus),
            *self.args,
        ]


def free_port() -> int:
    """A TCP port on the loopback that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


def _get_json(url: str, timeout: float = 5.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as reply:
        return json.loads(reply.read().decode("utf-8"))


def served_models(base: str) -> list[str]:
    """The model ids ``GET {base}/models`` lists (``base`` ends in ``/v1``)."""
    return [m["id"] for m in _get_json(f"{base}/models").get("data", [])]


def engine_version(root: str) -> str | None:
    """The engine's own version (vLLM answers ``GET /version``), or None where it does not say."""
    try:
        return _get_json(f"{root}/version").get("version")
    except (OSError, ValueError, AttributeError):
        return None


def tail(path: str | Path, lines: int = 20) -> str:
    """The last lines of a log file ('' when there is none)."""
    try:
        return "\n".join(Path(path).read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


class ServeError(RuntimeError):
    """A served model could not be started, or died: what happened and the server's last words."""


def wait_ready(
    spec: ServeSpec, root: str, process: subprocess.Popen, server_log: str | Path, *, poll_s: float = 0.5
) -> str:
    """Wait until the server lists a model; its own name for it. Fails if it exits or times out."""
    deadline = time.monotonic() + spec.startup_timeout_s
    while True:
        code = process.poll()
        if code is not None:
            raise ServeError(
                f"{spec.command} {spec.model} exited with code {code} before it was ready; "
                f"its log ({server_log}) ends:\n{tail(server_log)}"
            )
        try:
            models = served_models(f"{root}/v1")
            if models:
                return spec.model if spec.model in models else models[0]
        except (OSError, ValueError):
            pass  # not listening yet
        if time.monotonic() > deadline:
            raise ServeError(
                f"{spec.command} {spec.model} did not answer {root}/v1/models within "
                f"{spec.startup_timeout_s:.0f} s (serve.startup_timeout_s); its log ({server_log}) ends:\n"
                f"{tail(server_log)}"
            )
        time.sleep(poll_s)


def _write_json(path: Path, record: Mapping[str, Any]) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(record, indent=2), encoding="utf-8")
    os.replace(partial, path)  # a caller never reads half a record


def _die_with_parent() -> None:
    """In the server's process: SIGTERM it when the service job dies, even by SIGKILL (Linux).

    Snakemake kills a failed group's jobs with SIGKILL, which no handler sees; without this the
    server (in its own process group) would outlive its service job and hold the GPU.
    """
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass  # not Linux: the SIGTERM path below still stops it


def stop(process: subprocess.Popen, timeout_s: float) -> int | None:
    """SIGTERM to the server's process group, SIGKILL after ``timeout_s``; its exit code."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout_s)
        except ProcessLookupError:
            pass
    return process.returncode


def run_service(spec: ServeSpec, service_file: str | Path, server_log: str | Path, logger=None) -> int:
    """The body of the service job: start, wait until ready, publish, watch, stop on SIGTERM."""
    service_file, server_log = Path(service_file), Path(server_log)
    check_command(spec, key="serve")
    port = spec.port or free_port()
    root = f"http://{HOST}:{port}"
    argv = spec.argv(port)
    server_log.parent.mkdir(parents=True, exist_ok=True)
    with open(server_log, "ab") as out:
        process = subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - one thread
        )
    stopping = False

    def on_term(signum, frame) -> None:
        nonlocal stopping
        stopping = True
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    try:
        if logger:
            logger.info("started %s (pid %d), waiting for %s/v1/models", shlex.join(argv), process.pid, root)
        started = time.monotonic()
        served_as = wait_ready(spec, root, process, server_log)
        record = {
            "url": f"{root}/v1",
            "engine": spec.engine,
            "model": spec.model,
            "served_as": served_as,
            "engine_version": engine_version(root),
            "command": shlex.join(argv),
            "pid": process.pid,
            "ready_after_s": round(time.monotonic() - started, 1),
            "log": str(server_log),
        }
        _write_json(service_file, record)
        if logger:
            logger.info("ready after %.1f s: %s", record["ready_after_s"], record)
        code = process.wait()  # until SIGTERM from Snakemake, or the server dies
        _write_json(service_file, {**record, "died": f"exited with code {code}", "log_tail": tail(server_log)})
        if logger:
            logger.error("the server exited with code %s while its callers ran; log ends:\n%s", code, tail(server_log))
        return 1
    finally:
        code = stop(process, spec.stop_timeout_s)
        if logger and stopping:
            logger.info("stopped the server (exit code %s)", code)


def attach(service_file: str | Path, timeout_s: float, *, poll_s: float = 0.5) -> dict[str, Any]:
    """A caller's side: wait for the service file (the server is ready then), and read it.

    The service job and its callers start together, so a caller waits up to ``timeout_s`` for
    the record; a server that died before it was ready leaves none, and its caller fails here.
    """
    path = Path(service_file)
    deadline = time.monotonic() + timeout_s
    while not path.is_file():
        if time.monotonic() > deadline:
            raise ServeError(
                f"the model server did not become ready within {timeout_s:.0f} s (no {path}); see the serve job's log"
            )
        time.sleep(poll_s)
    record = _read(path)
    if record is None or "died" in record:
        raise ServeError(explain(record or {"died": f"left an unreadable record {path}"}))
    return record


def explain(record: Mapping[str, Any]) -> str:
    """One message for a caller whose server is gone: a first line that says it all, then the log."""
    return (
        f"the served model {record.get('model')} ({record.get('url')}) {record.get('died')} while "
        f"its callers ran; the calls answered before are kept in the store and a rerun asks only "
        f"the rest (server log: {record.get('log')})\n{record.get('log_tail', '')}"
    )


def _read(service_file: str | Path) -> dict[str, Any] | None:
    try:
        return json.loads(Path(service_file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def died(service_file: str | Path) -> str | None:
    """Why the server behind ``service_file`` is gone, or None while it runs (or no record)."""
    record = _read(service_file)
    return explain(record) if record is not None and "died" in record else None


def served_record(record: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What a result keeps of a server's record (for the fingerprint): engine, version, model."""
    if record is None:
        return None
    return {k: record.get(k) for k in ("engine", "engine_version", "model", "served_as")}


def check_command(spec: ServeSpec, *, key: str) -> None:
    """The serve command's program exists (``pip install voirdire[vllm]``), checked as the service starts."""
    import shutil

    program = shlex.split(spec.command)[0]
    if shutil.which(program) is None and not Path(program).is_file():
        hint = " (pip install 'voirdire[vllm]' on the GPU node)" if spec.engine == "vllm" else ""
        raise InputError(f"{program!r} not found on PATH{hint}", key=f"{key}.command")


__all__ = [
    "ENGINES",
    "HOST",
    "ServeError",
    "ServeSpec",
    "attach",
    "check_command",
    "died",
    "engine_version",
    "explain",
    "free_port",
    "run_service",
    "served_models",
    "served_record",
    "stop",
    "wait_ready",
]
