"""Helpers for the thin scripts under ``workflow/scripts/`` (run by Snakemake's ``script:``)."""

from __future__ import annotations

import logging
import sys


def start(snakemake) -> logging.Logger:
    """Send stderr and logging to the rule's log file, as every script's first act."""
    if snakemake.log:
        sys.stderr = open(snakemake.log[0], "w", buffering=1, encoding="utf-8")  # noqa: SIM115
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        force=True,
    )
    return logging.getLogger(f"voirdire.{snakemake.rule}")
