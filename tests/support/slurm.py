"""The single-node Slurm of the tests: started for the tests that ask for it, shared, stopped once.

``../shared/tools/slurm-single-node.sh`` starts one Slurm per machine (slurmctld, slurmd and munge
on 127.0.0.1; root; it installs slurm-wlm from the Debian registry the first time). Two pytest-xdist
workers, or two pytest sessions on one machine, must neither start it twice nor stop it under each
other's feet, so every process that uses it registers under a file lock (:func:`hold`):

- the first one starts it, unless one already answers, and marks it as the tests' own;
- each one holds it until its session ends (:func:`release`);
- the last one out stops it, if the tests started it (a Slurm someone else runs is left alone).

A process that died while holding it (``kill -9``) is dropped the next time the lock is taken.

**A machine with Slurm's tools but no controller.** The Slurm executor plugin runs ``scontrol show
config`` whenever ``snakemake`` starts, and with no controller that waits 9 s (docs/clusters.md).
The tests that do not use Slurm therefore run with ``SLURM_CONF`` set to an empty file
(:func:`mask`), with which ``scontrol`` fails at once; :func:`hold` puts the real one back for
the rest of the session of the process that uses Slurm.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path

TOOL = Path(__file__).resolve().parents[3] / "shared" / "tools" / "slurm-single-node.sh"

STATE = Path(tempfile.gettempdir()) / "voirdire-tests-slurm"
"""Who holds the Slurm of the tests (``holders/<pid>``), whether the tests started it
(``started``), and the lock around both (``lock``): one per machine, like the Slurm itself."""

REAL_CONF = "VOIRDIRE_TESTS_SLURM_CONF"
"""The environment variable keeping the session's own ``SLURM_CONF`` ('' for none) while it is
masked; set by the first pytest process, inherited by its xdist workers."""


def mask() -> None:
    """Point ``SLURM_CONF`` at an empty file (see the module), keeping the session's own in
    :data:`REAL_CONF`. Unconditional: Slurm's tools may be installed later in the session."""
    os.environ.setdefault(REAL_CONF, os.environ.get("SLURM_CONF", ""))
    os.environ["SLURM_CONF"] = os.devnull


def unmask() -> None:
    """The session's own ``SLURM_CONF`` back, for this process and what it starts."""
    real = os.environ.get(REAL_CONF)
    if real is None:
        return
    if real:
        os.environ["SLURM_CONF"] = real
    else:
        os.environ.pop("SLURM_CONF", None)


def slurm_env() -> dict[str, str]:
    """This process's environment with the session's own ``SLURM_CONF``."""
    env = dict(os.environ)
    real = env.get(REAL_CONF)
    if real is not None:
        env.pop("SLURM_CONF", None)
        if real:
            env["SLURM_CONF"] = real
    return env


def answers() -> bool:
    """A Slurm controller answers ``sinfo`` here (under the session's own ``SLURM_CONF``)."""
    if shutil.which("sinfo") is None:
        return False
    done = subprocess.run(["sinfo"], capture_output=True, timeout=60, check=False, env=slurm_env())
    return done.returncode == 0


def start() -> subprocess.CompletedProcess:
    """``slurm-single-node.sh start`` (installs slurm-wlm from the Debian registry if needed).

    The tool sizes the node with ``nproc``, which honours OMP_NUM_THREADS (1 in xdist workers):
    without it removed here the node had 1 CPU on a 2-core machine.
    """
    env = {key: value for key, value in slurm_env().items() if not key.startswith("OMP_")}
    return subprocess.run(
        ["bash", str(TOOL), "start"], capture_output=True, text=True, timeout=900, check=False, env=env
    )


def stop() -> None:
    subprocess.run(["bash", str(TOOL), "stop"], capture_output=True, timeout=60, check=False, env=slurm_env())


@contextmanager
def _locked():
    (STATE / "holders").mkdir(parents=True, exist_ok=True)
    with open(STATE / "lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def holders() -> list[int]:
    """The processes holding the tests' Slurm now (dead ones dropped; call under the lock)."""
    alive = []
    for path in (STATE / "holders").iterdir():
        if path.name.isdigit() and _alive(int(path.name)):
            alive.append(int(path.name))
        else:
            path.unlink(missing_ok=True)
    return sorted(alive)


def hold() -> subprocess.CompletedProcess | None:
    """Make sure a Slurm answers and register this process as using it.

    Returns None when one answers (started by this call or not) and this process now holds it,
    or the tool's failed ``start`` (nothing held). The caller checks first that starting one is
    possible here (root, the tool, slurm-wlm or apt-get).
    """
    with _locked():
        holders()
        if not answers():
            (STATE / "started").unlink(missing_ok=True)  # whatever was started is gone
            started = start()
            if started.returncode != 0:
                return started
            (STATE / "started").touch()
        (STATE / "holders" / str(os.getpid())).touch()
    unmask()
    return None


def release() -> bool:
    """This process no longer uses Slurm; the last holder stops it if the tests started it.

    Returns whether this call stopped it.
    """
    with _locked():
        (STATE / "holders" / str(os.getpid())).unlink(missing_ok=True)
        stopped = not holders() and (STATE / "started").exists()
        if stopped:
            stop()
            (STATE / "started").unlink(missing_ok=True)
    mask()
    return stopped
