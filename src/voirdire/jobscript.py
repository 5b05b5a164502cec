"""Helpers for the thin scripts under ``workflow/scripts/`` (run by Snakemake's ``script:``)."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import logging
import os
import sys
import traceback

from .errors import InputError

TORCH_THREADS_ENV = "VOIRDIRE_TORCH_THREADS"
"""torch's thread count in a job: :data:`voirdire.llm.local.inference.TORCH_THREADS_ENV`, named
again here because importing :mod:`voirdire.llm` would add 60 ms to every job's start."""


def start(snakemake) -> logging.Logger:
    """Send stderr and logging to the rule's log file, as every script's first act, and give
    torch the job's threads (``$VOIRDIRE_TORCH_THREADS``, unless already set).

    An uncaught error then leaves its full traceback in the log and one line on the
    terminal: ``voirdire: <file:line or config key>: <message>`` for bad input (a line for
    each error it stands for), or the error's type and message with the log's path for
    anything else.
    """
    log_path = snakemake.log[0] if snakemake.log else None
    if log_path:
        sys.stderr = open(log_path, "w", buffering=1, encoding="utf-8")  # noqa: SIM115
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        force=True,
    )

    def one_line(kind, error, tb) -> None:
        traceback.print_exception(kind, error, tb, file=sys.stderr)
        sys.stderr.flush()
        if isinstance(error, InputError):  # one line per error (a job may find several)
            line = "\n".join(f"voirdire: {single}" for single in error.lines)
        else:
            first = str(error).splitlines()[0] if str(error) else ""
            line = f"voirdire: rule {snakemake.rule}: {kind.__name__}: {first}"
            if log_path:
                line += f" (traceback in {log_path})"
        print(line, file=sys.__stderr__, flush=True)

    sys.excepthook = one_line
    # Local models (torch) use exactly the cores Snakemake gave this job: oversubscribed torch
    # threads slow a model 5-20x when another job shares the cores.
    os.environ.setdefault(TORCH_THREADS_ENV, str(snakemake.threads))
    log = logging.getLogger(f"voirdire.{snakemake.rule}")
    # The script's imports live as long as the job: out of the collector's sight. A full
    # collection otherwise walks all of them, and some libraries ask for one on every call
    # (statsmodels' Holm correction: 40 of 61 s of Table 2 at 100 runs x 20 judges)
    gc.freeze()
    return log


@contextlib.contextmanager
def serving(snakemake, owner):
    """A judge or ranker ready to call: at its served model's URL when the job has a ``served``
    input (the service job's record), else as configured. Yields ``(owner, served)``: what the
    results keep of the server (engine, version, model; :func:`~voirdire.llm.serve.served_record`),
    or None.

    A job whose server dies while it runs fails with one message saying so (its answered calls
    stay in the store) instead of with the call path's connection errors.
    """
    served = list(snakemake.input.get("served") or [])
    if not served:
        yield owner, None
        return
    from .llm.serve import ServeError, attach, died, served_record

    endpoint = owner.endpoint
    record = attach(served[0], endpoint.serve.startup_timeout_s)
    logging.getLogger("voirdire.serve").info("calling %s at %s", record.get("served_as"), record["url"])
    try:
        yield dataclasses.replace(owner, endpoint=endpoint.at(record["url"])), served_record(record)
    except Exception as error:
        reason = died(served[0])
        if reason is None:
            raise
        raise ServeError(reason) from error


LIST_ITEM = "#"
"""Marks a list position in a flattened input name (``runs/dl19/Perfect/#0``)."""


def named(**groups) -> dict[str, str]:
    """Name-keyed rule inputs from nested structures, declared once: every path of
    ``{group: {dataset: {judge: path}}}`` (any depth; lists allowed) becomes the input
    ``group/dataset/judge`` (a list item ``.../#i``). A rule takes ``unpack(...)`` of it, so
    Snakemake knows every file, and the script gets the structure back with :func:`grouped`."""
    flat: dict[str, str] = {}

    def walk(prefix: str, value) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if "/" in str(key) or str(key).startswith(LIST_ITEM):
                    raise ValueError(f"a name in a rule input cannot hold '/' or start with '#': {key!r}")
                walk(f"{prefix}/{key}", item)
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                walk(f"{prefix}/{LIST_ITEM}{index}", item)
        else:
            flat[prefix] = str(value)

    for name, value in groups.items():
        walk(name, value)
    return flat


def grouped(inputs) -> dict:
    """The structures :func:`named` flattened, from a job's ``snakemake.input`` (or any
    mapping of names to paths); names without '/' come back as they are."""
    result: dict = {}
    for name, path in inputs.items():
        parts = str(name).split("/")
        node = result
        for part, following in zip(parts[:-1], parts[1:], strict=True):
            node = node.setdefault(part, [] if following.startswith(LIST_ITEM) else {})
        last = parts[-1]
        if last.startswith(LIST_ITEM):
            node.append(path)
        else:
            node[last] = path
    return result
