"""Several ``snakemake`` command lines in one process, in order: one Snakemake import and one
import of what the rules import, instead of one each (for the commands that read the workflow,
such as ``--lint`` under each config). Each argument is one command line (split as a shell
would); ``sys.argv`` is set to it, as the workflow reads it (``--lint`` skips the API keys and
writes nothing). Prints ``snakemake ok: <command line>`` for each one that succeeded and exits 1
if any did not (what Snakemake printed, above)."""

import shlex
import sys

from snakemake.cli import args_to_api, parse_args

failed = []
for command in sys.argv[1:]:
    argv = ["--nolock", *shlex.split(command)]
    sys.argv[1:] = argv
    parser, args = parse_args(argv)
    if args_to_api(args, parser):
        print(f"snakemake ok: {command}", flush=True)
    else:
        failed.append(command)
sys.exit(1 if failed else 0)
