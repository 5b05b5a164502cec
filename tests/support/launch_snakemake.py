"""Snakemake's command line for the test suite, run by a copy of the job host where one applies.

The suite starts Snakemake about a hundred times; each start imports Snakemake (about 2 CPU-seconds,
among them pandas and boto3 that its plugins import) before it reads the workflow. Started with
``$VOIRDIRE_JOB_HOST_PRELOAD=snakemake.cli`` (as ``tests/conftest.py`` does), this script hands
itself to the job host (voirdire.jobhost), whose copy runs it again with those imports done:
the same ``snakemake.cli.main`` on the same argv, directory, environment and streams, its exit
status this process's. Where no host applies (``$VOIRDIRE_JOB_HOST=0``, Slurm) it runs here.
"""

import os
import sys
import types

from voirdire.jobhost import WHY_ENV, hand_over

hand_over(types.SimpleNamespace(threads=1, rule="snakemake"))
os.environ.pop(WHY_ENV, None)  # the launcher's, not a job's: Snakemake's jobs say their own

from snakemake.cli import main  # noqa: E402

sys.exit(main())
