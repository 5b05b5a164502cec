"""The model host: one process on the machine keeps the local models loaded for the workflow's jobs.

A workflow job that asks SmolLM2 or all-MiniLM-L6-v2 in its own process first starts torch,
transformers (and sentence-transformers) and loads the weights: 7 to 10 CPU-seconds on a 2-core
CPU, more than the work of most of the demo's sixteen such jobs. With the host, the first job
that needs a local model starts it, and every later job hands its batches to it over a Unix
socket and receives the answers; the job itself imports neither torch nor the models. (The same
machinery, started with ``--kind call``, is the call host of :mod:`voirdire.llm.callhost`.)

What the host computes is what the job would have computed: the same functions
(:func:`voirdire.llm.local.inference.generate`, :func:`~voirdire.llm.local.inference.next_token_logprobs`,
:func:`voirdire.rankers.dense.embed`'s encoder) with the same arguments, on one torch thread each,
as a one-thread job runs them. So only one-thread jobs use it (a job given more threads runs its
models itself, on its threads), and the host is keyed by everything that could change a number:
the Python, the model code's files, and the environment variables that choose the number format and
the CPU kernels (:data:`KEY_ENV`). Requests of two jobs run side by side, each on its own thread.

When it runs. :func:`voirdire.jobscript.start` turns it on for workflow jobs (``$VOIRDIRE_MODEL_HOST``
``=1``); tests and library calls compute in their own process. ``VOIRDIRE_MODEL_HOST=0`` turns it off.
Never under Slurm (``$SLURM_JOB_ID``): a host started by one Slurm job ends with it. The host leaves
:data:`IDLE_S` seconds after its last job closed its connection; killed, it leaves nothing behind but
its socket file, which the next host replaces (it holds a lock for its lifetime). Where the host
cannot be reached, started, or dies during a request, the job computes in its own process, and
says so in its log: the host saves time, it never changes an answer.

Its files (socket, lock, log) are in ``$XDG_RUNTIME_DIR/voirdire`` or ``/tmp/voirdire-UID``, a
directory only its user can enter.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import logging
import os
import pickle
import resource
import sys
import threading
import time
from multiprocessing.connection import Client, Connection, Listener
from pathlib import Path
from typing import Any

from ...hostdir import ANOTHER, await_host, hold_lock, private_directory, start_host
from .inference import ATEN_ISA_ENV, DTYPE_ENV, ONEDNN_ISA_ENV

ENV = "VOIRDIRE_MODEL_HOST"
MODELS, CALLS = "model", "call"
"""The two kinds of host: the local models' (this module) and the API calls' (:mod:`voirdire.llm.callhost`)."""
IDLE_S = 60.0
"""The host leaves after this many seconds without a connected job (``$VOIRDIRE_MODEL_HOST_IDLE_S``)."""
IDLE_ENV = "VOIRDIRE_MODEL_HOST_IDLE_S"
START_TIMEOUT_S = 120.0
"""How long a job waits for a host it started (importing torch and transformers takes seconds)."""
KEY_ENV = (
    DTYPE_ENV,
    "VOIRDIRE_CACHE",
    ATEN_ISA_ENV,
    ONEDNN_ISA_ENV,
    "MKL_ENABLE_INSTRUCTIONS",
    "MKL_CBWR",
)
"""Environment variables that choose the model files, the number format or the CPU kernels. (The
host reads the bundled models from local files only, whatever a job says of the hub.)"""

log = logging.getLogger(__name__)


class Unavailable(Exception):
    """No host answered: compute in this process."""


def enabled() -> bool:
    """Whether this process hands its local-model work to the host: a workflow job (``$VOIRDIRE_MODEL_HOST=1``)
    on one thread, outside Slurm."""
    from .inference import job_threads

    return os.environ.get(ENV) == "1" and job_threads() == 1 and not os.environ.get("SLURM_JOB_ID")


def key() -> str:
    """What the host's answers depend on, hashed: jobs that differ in any of it get their own host."""
    here = Path(__file__).resolve().parent
    sources = sorted(here.glob("*.py")) + [here.parents[1] / "rankers" / "dense.py"]
    digest = hashlib.sha256(sys.executable.encode())
    for path in sources:
        digest.update(path.read_bytes())
    for name in KEY_ENV:
        digest.update(f"\0{name}={os.environ.get(name, '')}".encode())
    return digest.hexdigest()[:16]


def directory() -> Path:
    """The host's folder, private to this user (:func:`voirdire.hostdir.private_directory`)."""
    try:
        return private_directory()
    except OSError as error:
        raise Unavailable(f"no host folder: {error}") from error


def _paths(host_key: str) -> tuple[str, Path, Path]:
    base = directory()
    return str(base / f"{host_key}.sock"), base / f"{host_key}.lock", base / f"{host_key}.log"


def address(host_key: str) -> str:
    """The Unix socket of the host ``host_key``."""
    return _paths(host_key)[0]


# ----------------------------------------------------------------------------- the job's side

_connection: Connection | None = None
_connection_lock = threading.Lock()
_started: set[str] = set()  # the keys of the hosts this process started


def _connect(address: str) -> Connection | None:
    """A connection to the host at ``address``; None when none listens there."""
    try:
        return Client(address, family="AF_UNIX")
    except (FileNotFoundError, ConnectionRefusedError):
        return None
    except OSError as error:  # e.g. a path longer than a Unix socket's 107 bytes
        raise Unavailable(f"cannot reach a host at {address}: {error}") from error


def open_connection(host_key: str, kind: str = MODELS) -> Connection:
    """A new connection to the host ``host_key`` (of ``kind``: :data:`MODELS` or :data:`CALLS`),
    starting one when none answers; :class:`Unavailable` when none can be reached or started."""
    address, lock_path, log_path = _paths(host_key)
    found = _connect(address)
    if found is not None:
        return found
    if host_key in _started:
        raise Unavailable(f"the {kind} host this job started is gone")
    _started.add(host_key)
    # not `-m voirdire.llm.local.host`: importing voirdire.llm imports this module before runpy ran it
    entry = "import sys; from voirdire.llm.local.host import main; sys.exit(main())"
    args = ["--key", host_key, "--kind", kind]
    env = {**os.environ, ENV: "0"}
    return await_host(lambda: start_host(entry, args, IDLE_ENV, log_path, env=env), lambda: _connect(address),
                      lock_path=lock_path, what=f"{kind} host", log_path=log_path, timeout_s=START_TIMEOUT_S,
                      poll_s=0.05, error=Unavailable)  # fmt: skip


def connection() -> Connection:
    """This process's connection to the model host, starting one when none runs (raises :class:`Unavailable`)."""
    global _connection
    if _connection is None:
        _connection = open_connection(key(), MODELS)
    return _connection


def request(method: str, /, *args: Any, **kwargs: Any) -> Any:
    """``method(*args, **kwargs)`` computed by the host (one request at a time per process);
    :class:`Unavailable` when no host can answer. An error the function raised is raised here."""
    global _connection
    with _connection_lock:
        try:
            conn = connection()
            conn.send((method, args, kwargs))
            status, value = conn.recv()
        except Unavailable:
            raise
        except (EOFError, OSError) as error:
            _connection = None
            raise Unavailable(f"the model host went away during a request ({error!r})") from error
    if status == "error":
        raise value
    return value


def answer(method: str, compute, /, *args: Any, **kwargs: Any) -> Any:
    """The host's answer when this process uses the host and one answers, else ``compute(*args, **kwargs)``."""
    if enabled():
        try:
            return request(method, *args, **kwargs)
        except Unavailable as why:
            log.warning("local models computed in this job: %s", why)
            os.environ[ENV] = "0"  # the rest of this job too, without trying again
    return compute(*args, **kwargs)


# ----------------------------------------------------------------------------- the host's side


_warm_lock = threading.Lock()


def _methods() -> dict[str, Any]:
    """What the host computes, by name. Each first loads its model under one lock: two jobs'
    first requests would otherwise import transformers in two threads at once, which its lazy
    modules do not survive (``cannot import name 'AutoModelForCausalLM'``, seen here)."""
    from ...rankers import dense
    from . import inference

    def warmed(load, compute):
        def run(*args: Any, **kwargs: Any) -> Any:
            with _warm_lock:
                load(*args, **kwargs)  # once per model: the loaders are cached
            return compute(*args, **kwargs)

        return run

    def load_llm(*_: Any, cache_dir: Any = None, **__: Any) -> None:
        inference.load(cache_dir)

    def load_encoder(model: str, *_: Any, **__: Any) -> None:
        dense._encoder(model)

    return {
        "generate": warmed(load_llm, inference.generate_here),
        "next_token_logprobs": warmed(load_llm, inference.next_token_logprobs_here),
        "embed": warmed(load_encoder, dense.encode),
    }


def serve(host_key: str, idle_s: float = IDLE_S, kind: str = MODELS) -> int:
    """Run the host until it has had no job for ``idle_s`` seconds; 0, or :data:`ANOTHER` when another
    host holds the key."""
    address, lock_path, _ = _paths(host_key)
    lock = hold_lock(lock_path)
    if lock is None:
        return ANOTHER
    with contextlib.suppress(FileNotFoundError):
        os.unlink(address)  # a killed host's socket
    if kind == CALLS:
        from .. import callhost

        methods = callhost.methods()
    else:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the models are local files
        # the jobs it serves run on one thread each; it runs their requests side by side
        from . import inference

        os.environ[inference.TORCH_THREADS_ENV] = "1"
        inference.allow_concurrent_forward_passes(os.cpu_count() or 1)
        methods = _methods()
    listener = Listener(address, family="AF_UNIX", backlog=128)  # a job opens a connection per call in flight
    state = {"open": 0, "last": time.monotonic()}
    guard = threading.Lock()

    def handle(conn: Connection) -> None:
        try:
            while True:
                try:
                    method, args, kwargs = conn.recv()
                except (EOFError, OSError):
                    return
                if kind == CALLS:  # an API call stops when its job hangs up (a job sends nothing else meanwhile)
                    kwargs = {**kwargs, "hung_up": conn.poll}
                try:
                    reply = ("ok", methods[method](*args, **kwargs))
                except Exception as error:  # the job raises it as its own
                    reply = ("error", error)
                try:
                    conn.send(reply)
                except (TypeError, AttributeError, ValueError, pickle.PicklingError) as error:  # pickle cannot carry it
                    conn.send(("error", RuntimeError(f"the {kind} host failed: {reply[1]!r} ({error})")))
                except OSError:  # the job left (or gave up on this request)
                    return
        finally:
            conn.close()
            with guard:
                state["open"] -= 1
                state["last"] = time.monotonic()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            with guard:
                idle = state["open"] == 0 and time.monotonic() - state["last"] > idle_s
            if idle:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(address)
                used = resource.getrusage(resource.RUSAGE_SELF)
                logging.getLogger(__name__).info(
                    "no job for %.0f s: leaving after %.1f s of user CPU and %.1f s of system CPU",
                    idle_s, used.ru_utime, used.ru_stime,
                )  # fmt: skip
                logging.shutdown()
                os._exit(0)

    threading.Thread(target=watch, daemon=True, name="voirdire-host-idle").start()
    logging.getLogger(__name__).info("%s host %s listening (pid %d)", kind, host_key, os.getpid())
    while True:
        conn = listener.accept()
        with guard:
            state["open"] += 1
            state["last"] = time.monotonic()
        threading.Thread(target=handle, args=(conn,), daemon=True, name="voirdire-host-job").start()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key", required=True)
    parser.add_argument("--idle-s", type=float, default=IDLE_S)
    parser.add_argument("--kind", choices=(MODELS, CALLS), default=MODELS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return serve(args.key, args.idle_s, args.kind)


if __name__ == "__main__":
    sys.exit(main())
