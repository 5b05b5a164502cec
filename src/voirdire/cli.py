"""Command line: ``voirdire plan`` (what judging will cost before any call)."""

from __future__ import annotations

import argparse
import sys

from .config import load_plan
from .errors import InputError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="voirdire")
    sub = parser.add_subparsers(dest="command", required=True)
    plan = sub.add_parser("plan", help="calls, cache hits, tokens and cost per judge, before judging")
    plan.add_argument("--configfile", default="config/config.yaml")
    plan.add_argument("--provenance", default="original")
    args = parser.parse_args(argv)
    try:
        cfg = load_plan(args.configfile)
        from .judging.plan import plan_rows

        table = plan_rows(cfg, args.provenance)
    except (InputError, FileNotFoundError) as exc:
        print(f"voirdire: {exc}", file=sys.stderr)
        return 2
    print(table.to_markdown(index=False) if len(table) else "no LLM judges configured")
    return 0


if __name__ == "__main__":
    sys.exit(main())
