"""Command line: ``voirdire check`` (a config and its inputs, before any job) and ``voirdire plan``."""

from __future__ import annotations

import argparse
import sys

from .config import load_plan
from .errors import InputError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="voirdire")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser(
        "check", help="validate a config and every input file it names, as the workflow does before any job"
    )
    check.add_argument("--configfile", default="config/config.yaml")
    plan = sub.add_parser("plan", help="calls, cache hits, tokens and cost per judge, before judging")
    plan.add_argument("--configfile", default="config/config.yaml")
    plan.add_argument("--provenance", default="original")
    args = parser.parse_args(argv)
    try:
        cfg = load_plan(args.configfile)
        if args.command == "check":
            from .preflight import preflight

            preflight(cfg)
            judges = {j.name for js in cfg.judges.values() for j in js}
            print(f"ok: {len(cfg.datasets)} dataset(s), {len(cfg.systems)} systems, {len(judges)} judges")
            return 0
        from .judging.plan import plan_rows

        table = plan_rows(cfg, args.provenance)
    except (InputError, FileNotFoundError) as exc:
        print(f"voirdire: {exc}", file=sys.stderr)
        return 2
    print(table.to_markdown(index=False) if len(table) else "no LLM judges configured")
    return 0


if __name__ == "__main__":
    sys.exit(main())
