"""The serve rule's entry point: ``python -m voirdire.llm.serve_job --spec JSON ...``.

A ``shell:`` command rather than a ``script:``: Snakemake terminates only shell jobs, and the
rule ``exec``s this so the SIGTERM reaches it (:func:`voirdire.llm.serve.run_service`).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from ..errors import InputError
from .serve import ServeError, ServeSpec, run_service


def main(argv: list[str] | None = None) -> int:
    """Serve one model until SIGTERM; 1 when it cannot start or dies, with one line saying why."""
    parser = argparse.ArgumentParser(description="Serve a model for the workflow's callers.")
    parser.add_argument("--spec", required=True, help="the ServeSpec as JSON")
    parser.add_argument("--service-file", required=True)
    parser.add_argument("--server-log", required=True)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    fields = json.loads(args.spec)
    spec = ServeSpec(**{**fields, "args": tuple(fields.get("args", ()))})
    try:
        return run_service(spec, args.service_file, args.server_log, logging.getLogger("voirdire.serve"))
    except (ServeError, InputError) as error:
        logging.getLogger("voirdire.serve").error("%s", error)
        print(f"voirdire: rule serve: {str(error).splitlines()[0]}", file=sys.__stderr__, flush=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
