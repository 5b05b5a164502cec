"""The job host: the workflow's light jobs run in copies of one process that has already imported
their libraries, instead of each importing pandas, SciPy, statsmodels and matplotlib again.

Every job of the workflow is a new Python process, and most of them do less work than their
imports: pandas alone is half a CPU-second, an audits job spends two importing the statistics
stack. With the host, the first job that finds none starts it (``python -m voirdire.jobhost``,
detached, in its own session); the host imports what the workflow's scripts import (never torch,
litellm or Java: :data:`PRELOAD`) and waits on a Unix socket. A job's script calls
:func:`hand_over` first thing: it sends the host its command line, working directory,
environment and ``sys.path`` with its standard input, output and error, and the host forks a
copy of itself that becomes the job (it runs the same script file, on the job's own descriptors,
in its directory and environment) and sends back the exit status, which the job exits with.

What the copy computes is what the job would: the same script and Python, the libraries imported
under the same settings. The host is keyed by everything that is read while they import (the
Python, the installed packages, voirdire's sources, and the environment variables of
:data:`KEY_ENV_PREFIXES`: thread counts of the numerical libraries, locale, matplotlib's and
Python's own), so jobs that differ in any of it get a host of their own, and only one-thread jobs
hand over (Snakemake runs them with one BLAS thread; the host imports under that setting).

A job killed (by Snakemake, or by ``kill -9`` of its process group) ends its copy: the host
watches each job's connection and kills the copy the moment the job hangs up. The copy is not
the job's child, so Snakemake's benchmark files count the job's own process only (its wall time
is the copy's; the CPU and memory are in the host's log line for the copy).

It never changes an answer, only where the work runs: ``VOIRDIRE_JOB_HOST=0`` turns it off, it
is off under Slurm (``$SLURM_JOB_ID``: a host started by one Slurm job would end with it) and for
jobs given more than one thread; where no host can be reached or started, the job runs the
script itself and its log says why. The host leaves :data:`IDLE_S` seconds after its last job.
Its socket, lock and log are in the same private folder as the model host's.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import select
import signal
import socket
import struct
import sys
import time
from pathlib import Path

from .hostdir import ANOTHER, await_host, hold_lock, private_directory, start_host

ENV = "VOIRDIRE_JOB_HOST"
"""``0`` turns the job host off; anything else (or unset) leaves it on where it applies."""
WHY_ENV = "VOIRDIRE_JOB_HOST_WHY"
"""Set in a job that runs its script itself, to say why: :func:`voirdire.jobscript.start` logs it."""
IDLE_ENV = "VOIRDIRE_JOB_HOST_IDLE_S"
IDLE_S = 60.0
"""The host leaves after this many seconds without a job (``$VOIRDIRE_JOB_HOST_IDLE_S``)."""
START_TIMEOUT_S = 60.0
"""How long a job waits for a host it started (the host imports for a few seconds first)."""
TAKEN = b"T"
"""A copy's first word to its job: it runs the job (until then the job may still run itself)."""
PRELOAD_ENV = "VOIRDIRE_JOB_HOST_PRELOAD"
"""More modules to import before serving, comma-separated (part of the key): the test suite's
Snakemake runs in copies too, with ``snakemake.cli`` preloaded (``tests/support/launch_snakemake.py``)."""
KEY_ENV_PREFIXES = (
    "OMP_", "GOTO_", "OPENBLAS_", "MKL_", "VECLIB_", "NUMEXPR_", "BLIS_",  # thread counts, kernels
    "MPL", "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME",  # matplotlib's backend, config and font cache
    "PYTHON", "LANG", "LC_", "TZ",  # Python's path, flags and encoding (voirdire's modules read none on import)
    PRELOAD_ENV,  # what else the host imports
)  # fmt: skip
"""Environment variables read while the preloaded libraries import: the host's key. (Every other
variable is the job's own in its copy: an API key, ``$TMPDIR``, voirdire's settings.)"""
PRELOAD = (
    "pandas", "numpy", "pyarrow", "pyarrow.parquet", "scipy.stats", "statsmodels.api", "sklearn.metrics",
    "matplotlib.pyplot", "ir_measures", "ppi_py", "yaml", "snakemake.script",
    "voirdire.jobscript", "voirdire.formats", "voirdire.evaluation", "voirdire.systems", "voirdire.judges",
    "voirdire.output", "voirdire.texts", "voirdire.manifest", "voirdire.fingerprint", "voirdire.stats",
    "voirdire.config", "voirdire.plan", "voirdire.data", "voirdire.runs", "voirdire.baselines",
    "voirdire.paper", "voirdire.timing", "voirdire.verdict", "voirdire.audits.run", "voirdire.audits.figures",
    "voirdire.audits.drift", "voirdire.audits.labels", "voirdire.assistants.experiments",
    "voirdire.assistants.figures", "voirdire.assistants.job", "voirdire.assistants.sample",
    "voirdire.assistants.preference", "voirdire.probes", "voirdire.probes.job", "voirdire.probes.gaming",
    "voirdire.probes.shifts", "voirdire.probes.personas", "voirdire.probes.items", "voirdire.llm_judge.job",
    "voirdire.llm_judge.tasks", "voirdire.embedding_judge", "voirdire.rankers.rerank",
)  # fmt: skip
"""What the host imports before it serves: the workflow scripts' libraries, none that starts threads
(torch), a server (Java for Lucene) or a network client (litellm) a fork would not carry over."""
FORK_SAFE_THREADS = ("jemalloc_bg_thd",)
"""Threads the host may hold when it forks: pyarrow's jemalloc starts an idle purger on load, and
jemalloc takes its own locks around a fork (its ``pthread_atfork`` handlers)."""
NEVER = ("torch", "jnius", "litellm", "transformers")
"""Modules a forking host must not hold: the host refuses to serve if its imports pulled one in."""

_in_copy = False
"""True in a job's copy: its script calls :func:`hand_over` again, which then does nothing."""


class Unavailable(Exception):
    """No host can run the job: it runs its script itself."""


def in_copy() -> bool:
    """Whether this process is a job host's copy running a job."""
    return _in_copy


# ----------------------------------------------------------------------------- the key


def key(environ: dict[str, str] | None = None) -> str:
    """What a host's imports depend on, hashed: the Python, the installed packages, voirdire's
    sources (their sizes and times) and the environment variables of :data:`KEY_ENV_PREFIXES`."""
    import site

    environ = os.environ if environ is None else environ
    digest = hashlib.sha256(sys.executable.encode())
    for folder in site.getsitepackages():
        with contextlib.suppress(OSError):
            digest.update("\0".join(sorted(os.listdir(folder))).encode())  # names carry the versions
    package = Path(__file__).resolve().parent
    digest.update(f"\0{package}".encode())
    for path in sorted(package.rglob("*.py")):
        stat = path.stat()
        digest.update(f"\0{path.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    for name in sorted(environ):
        if name.startswith(KEY_ENV_PREFIXES):
            digest.update(f"\0{name}={environ[name]}".encode())
    return digest.hexdigest()[:16]


_NAME = "job-{key}{suffix}"
"""A host's socket, lock and log in the private folder: one name for each key."""


def _paths(host_key: str) -> tuple[str, Path, Path]:
    try:
        base = private_directory()
    except OSError as error:
        raise Unavailable(str(error)) from error
    socket_, lock, log = (base / _NAME.format(key=host_key, suffix=suffix) for suffix in (".sock", ".lock", ".log"))
    return str(socket_), lock, log


# ----------------------------------------------------------------------------- the job's side


def applies(threads: int) -> str | None:
    """Why a job of ``threads`` threads runs its script itself, or None when it hands over."""
    if os.environ.get(ENV) == "0":
        return f"${ENV}=0"
    if os.environ.get("SLURM_JOB_ID"):
        return "a Slurm job (a host would end with it)"
    if threads != 1:
        return f"{threads} threads (the host's libraries run on one)"
    return None


def _connect(address: str) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(address)
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    except OSError as error:  # e.g. a path longer than a socket's 107 bytes
        sock.close()
        raise Unavailable(f"cannot reach a job host at {address}: {error}") from error
    return sock


def connect(host_key: str) -> socket.socket:
    """A connection to the job host ``host_key``, starting one when none answers."""
    address, lock_path, log_path = _paths(host_key)
    sock = _connect(address)
    if sock is not None:
        return sock
    # not `-m voirdire.jobhost`: the copies' scripts import voirdire.jobhost, which must be this module
    entry = "import sys; from voirdire.jobhost import main; sys.exit(main())"
    package = str(Path(__file__).resolve().parent)  # the host must import the voirdire this job imports
    args = ["--key", host_key, "--package", package]
    return await_host(lambda: start_host(entry, args, IDLE_ENV, log_path, cwd="/"), lambda: _connect(address),
                      lock_path=lock_path, what="job host", log_path=log_path, timeout_s=START_TIMEOUT_S,
                      poll_s=0.02, error=Unavailable)  # fmt: skip


def _send(sock: socket.socket, payload: dict, fds: list[int]) -> None:
    body = json.dumps(payload).encode()
    message = struct.pack("!I", len(body)) + body
    sent = socket.send_fds(sock, [message], fds)  # the descriptors travel with the first bytes
    sock.sendall(message[sent:])  # a stream socket may take a long message in parts


def hand_over(snakemake) -> None:
    """Run this job's script in a copy of the job host and exit with its status; return (and run
    the script here) when the host does not apply or cannot be reached (``$VOIRDIRE_JOB_HOST_WHY``
    says why, for the job's log). Call it before the script's imports."""
    if _in_copy:
        return
    why = applies(int(getattr(snakemake, "threads", 1) or 1))
    if why is None:
        host_key = key()
        try:
            sock = connect(host_key)
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            try:
                _send(
                    sock, {"argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ), "path": sys.path}, [0, 1, 2]
                )
                taken = _read(sock, 1) == TAKEN
            except OSError:  # the host closed on the request (a broken pipe)
                taken = False
            if not taken:  # e.g. a host leaving idle with this job still in its queue
                raise Unavailable(f"the job host (pid {_peer_pid(sock)}) left before it took the job")
        except Exception as error:  # noqa: BLE001 - whatever stops the hand-over, the job runs here
            why = str(error) or type(error).__name__
        else:
            data = _read(sock, 4)
            status = struct.unpack("!i", data)[0] if len(data) == 4 else None
            if status is None:
                print(f"voirdire: rule {snakemake.rule}: the job host's copy of this job died before it "
                      f"finished (the host's log: {_paths(host_key)[2]})", file=sys.stderr, flush=True)  # fmt: skip
                os._exit(1)
            os._exit(status)
    os.environ[WHY_ENV] = why


def _peer_pid(sock: socket.socket) -> int | None:
    """The process at the other end: for a job, the one that made the host's listening socket."""
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return None
    return struct.unpack("3i", creds)[0]


def _read(sock: socket.socket, size: int) -> bytes:
    """``size`` bytes from ``sock``, or fewer when the connection ends first."""
    data = b""
    with contextlib.suppress(OSError):
        while len(data) < size:
            chunk = sock.recv(size - len(data))
            if not chunk:
                break
            data += chunk
    return data


# ----------------------------------------------------------------------------- the host's side


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    conn.settimeout(10.0)
    header, fds, _, _ = socket.recv_fds(conn, 4, 3)
    size = struct.unpack("!I", header)[0] if len(header) == 4 else 0
    body = _read(conn, size)  # a timeout ends it short, like a hang-up
    conn.settimeout(None)
    if len(fds) != 3 or len(body) != size or size == 0:
        for fd in fds:
            os.close(fd)
        raise ValueError("an incomplete request")
    return json.loads(body), fds


REAPED = re.compile(r": exit -?\d+ after [\d.]+ s, (?P<cpu>[\d.]+) CPU-s, ")
"""A host log's line of a copy reaped (its job's script, job and copy pid first): its CPU."""


def copies_cpu_s(log_text: str) -> float:
    """The CPU seconds (user and system) of the copies a host's log says it reaped: the jobs'
    work, which the jobs' own processes (waiting on their copies) do not show."""
    return sum(float(found["cpu"]) for found in REAPED.finditer(log_text))


def host_logs() -> list[Path]:
    """The logs of this user's job hosts (one per key)."""
    try:
        return sorted(private_directory().glob(_NAME.format(key="*", suffix=".log")))
    except OSError:
        return []


COPY_PREFIX = "j:"
"""A copy's process name (``comm``, 15 bytes): this and the start of its rule's name."""


def copy_name(script: str) -> str:
    """The process name of the copy running ``script`` (Snakemake's ``tmp<random>.<rule>.py``)."""
    parts = Path(script).name.split(".")
    rule = parts[-2] if len(parts) >= 3 else parts[0]
    return f"{COPY_PREFIX}{rule}"[:15]


def _exit_code(error: SystemExit) -> int:
    code = error.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _become_the_job(conn: socket.socket, request: dict, fds: list[int], finished: int) -> None:
    """In the forked copy: take the job's descriptors, directory, environment and path, run its
    script as ``__main__``, send the exit status (saying so to the host first, on ``finished``)
    and leave. Never returns."""
    import runpy
    import tempfile
    import threading

    global _in_copy
    _in_copy = True
    code = 1
    done = threading.Event()

    def watch() -> None:  # the host kills a copy whose job hung up; this, should the host be gone
        with contextlib.suppress(OSError):
            conn.recv(1)  # the job sends nothing more: this returns when it hangs up
        os._exit(code if done.is_set() else 1)

    try:
        conn.sendall(TAKEN)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        threading.Thread(target=watch, daemon=True, name="voirdire-job-watch").start()
        with contextlib.suppress(OSError):  # `ps`, `top` and bench/process_cpu.py tell the copies apart
            Path("/proc/self/comm").write_text(copy_name(request["argv"][0]))
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        tempfile.tempdir = None  # $TMPDIR is the job's
        sys.path[:] = request["path"]
        sys.argv[:] = request["argv"]
        try:
            runpy.run_path(request["argv"][0], run_name="__main__")
            code = 0
        except SystemExit as error:
            code = _exit_code(error)
        except BaseException:  # the script's own hook prints it as the job would (one line + its log)
            sys.excepthook(*sys.exc_info())
            code = 1
        with contextlib.suppress(Exception):
            threading._shutdown()  # non-daemon threads, as the interpreter's exit waits for them
        import atexit

        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            with contextlib.suppress(Exception):
                stream.flush()
        done.set()
        with contextlib.suppress(OSError):
            os.write(finished, b"1")
            conn.sendall(struct.pack("!i", code))
        os._exit(code)


def _preload(log) -> None:
    import importlib

    os.environ.setdefault("MPLBACKEND", "Agg")
    more = [name.strip() for name in os.environ.get(PRELOAD_ENV, "").split(",") if name.strip()]
    for name in [*PRELOAD, *more]:
        try:
            importlib.import_module(name)
        except Exception as error:  # noqa: BLE001 - a job then imports it itself, and fails there if it must
            log(f"not preloaded: {name}: {error!r}")
    held = [name for name in NEVER if name in sys.modules]
    if held:
        raise RuntimeError(f"the preloaded modules imported {', '.join(held)}: a fork would not carry them")
    for _ in range(20):  # a thread that ends soon (a cancelled timer) is waited for; a pool is not
        threads = [name for name in _thread_names() if name not in FORK_SAFE_THREADS]
        if not threads:
            break
        time.sleep(0.1)
    if threads:  # e.g. a BLAS pool: $OMP_NUM_THREADS was not 1 (Snakemake sets it to the job's threads)
        raise RuntimeError(f"the imports started threads a fork would copy mid-work: {', '.join(threads)}")


def _thread_names() -> list[str]:
    """The names of this process's threads but the main one."""
    names = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        if task.name != str(os.getpid()):
            with contextlib.suppress(OSError):
                names.append((task / "comm").read_text().strip())
    return names


def serve(host_key: str, idle_s: float = IDLE_S, package: str | None = None) -> int:
    """Serve jobs until none has come for ``idle_s`` seconds; 0, :data:`ANOTHER` when another
    host holds the key, 1 when it cannot serve (its imports, or a voirdire other than ``package``)."""

    def log(message: str) -> None:
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} job host {host_key} (pid {os.getpid()}): {message}", flush=True)

    address, lock_path, _ = _paths(host_key)
    lock = hold_lock(lock_path)
    if lock is None:
        return ANOTHER
    started = time.monotonic()
    try:
        _preload(log)
        here = str(Path(__file__).resolve().parent)
        if package is not None and here != package:
            raise RuntimeError(f"it imports voirdire from {here}, its jobs from {package}")
    except RuntimeError as error:
        log(f"not serving: {error}")
        return 1
    import gc

    gc.collect()
    gc.freeze()  # the copies' collections skip what the imports made (no copy-on-write of all of it)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(address)  # a killed host's socket
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(128)
    log(f"listening after {time.monotonic() - started:.1f} s of imports")
    # a copy's pid -> [its job's connection (None once it hung up), finished pipe, what (script, job, copy), start]
    copies: dict[int, list] = {}
    last = time.monotonic()

    def reaped(pid: int, status: int, usage) -> None:
        nonlocal last
        conn, finished, script, since = copies.pop(pid)
        if conn is not None:
            conn.close()
        os.close(finished)
        log(f"{script}: exit {os.waitstatus_to_exitcode(status)} after {time.monotonic() - since:.1f} s, "
            f"{usage.ru_utime + usage.ru_stime:.2f} CPU-s, {usage.ru_maxrss / 1024:.0f} MB")  # fmt: skip
        last = time.monotonic()

    while True:
        watched = {entry[0]: pid for pid, entry in copies.items() if entry[0] is not None}
        readable, _, _ = select.select([listener, *watched], [], [], 1.0)
        for item in readable:
            if item is listener:
                conn, _ = listener.accept()
                try:
                    request, fds = _receive(conn)
                except (OSError, ValueError) as error:
                    log(f"a request was refused: {error}")
                    conn.close()
                    continue
                for stream in (sys.stdout, sys.stderr):
                    stream.flush()
                finished_read, finished_write = os.pipe()
                try:
                    pid = os.fork()
                except OSError as error:  # the job, not told it was taken, runs itself
                    log(f"cannot fork for {request['argv'][0]}: {error}")
                    conn.close()
                    for fd in [*fds, finished_read, finished_write]:
                        os.close(fd)
                    continue
                if pid == 0:
                    listener.close()
                    lock.close()  # the lock is the host's, not its copies'
                    for other in [*watched, *(entry[1] for entry in copies.values())]:
                        other.close() if isinstance(other, socket.socket) else os.close(other)
                    os.close(finished_read)
                    _become_the_job(conn, request, fds, finished_write)
                os.close(finished_write)
                os.set_blocking(finished_read, False)
                for fd in fds:
                    os.close(fd)
                copies[pid] = [conn, finished_read, f"{Path(request['argv'][0]).name} (job {_peer_pid(conn)}, copy {pid})",
                               time.monotonic()]  # fmt: skip
            else:  # the job hung up: after its copy's status, or killed (and then so is its copy)
                pid = watched[item]
                item.close()
                copies[pid][0] = None
                try:
                    done = os.read(copies[pid][1], 1) == b"1"
                except BlockingIOError:
                    done = False
                if not done:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                    log(f"{copies[pid][2]}: the job hung up before its copy finished: the copy killed")
        while copies:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            reaped(pid, status, usage)
        if not copies and time.monotonic() - last > idle_s:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(address)
            log(f"no job for {idle_s:.0f} s: leaving")
            return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key", required=True)
    parser.add_argument("--idle-s", type=float, default=IDLE_S)
    parser.add_argument("--package", help="the voirdire package folder its jobs import")
    args = parser.parse_args(argv)
    return serve(args.key, args.idle_s, args.package)


if __name__ == "__main__":
    sys.exit(main())
