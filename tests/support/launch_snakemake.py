"""Snakemake's command line for the test suite: ``snakemake.cli.main`` on this process's argv,
directory, environment and streams, its exit status this process's (what ``snakemake`` runs)."""

import sys

from snakemake.cli import main

sys.exit(main())
