"""Command line: ``voirdire init`` (a config from your files), ``voirdire check`` (a config and its
inputs, before any job), ``voirdire plan`` and ``voirdire verdict`` (the verdict of a finished
run, in the terminal)."""

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
    plan = sub.add_parser(
        "plan", help="calls, cache hits, tokens and cost of every LLM caller (judges, rankers, assistants, probes)"
    )
    plan.add_argument("--configfile", default="config/config.yaml")
    plan.add_argument("--provenance", default="original")
    verdict = sub.add_parser("verdict", help="print the verdict of a finished run: one row per judge and dataset")
    verdict.add_argument("--configfile", default="config/config.yaml")
    verdict.add_argument("--results", help="the run's results folder (default: the config's results:)")
    init = sub.add_parser(
        "init",
        help="write an editable labels-only config from qrels, topics, runs and label sets (no runs: the "
        "label sets are audited alone)",
    )
    init.add_argument("--qrels", required=True, help="the human qrels (TREC format, plain or .gz)")
    init.add_argument("--topics", required=True, help="topics TSV: qid<TAB>text")
    init.add_argument(
        "--runs",
        nargs="+",
        default=[],
        help="a folder of TREC runs, or run files (none: no systems, the label sets audited alone)",
    )
    init.add_argument("--judge", action="append", default=[], metavar="NAME=FILE", help="a recorded judge's qrels")
    init.add_argument(
        "--judges",
        action="append",
        default=[],
        metavar="FOLDER",
        help="a folder of label sets (qrels files), one judge each, named by its file name",
    )
    init.add_argument("--family", action="append", default=[], metavar="NAME=FAMILY", help="a run's or judge's family")
    init.add_argument("--measures", nargs="+", default=[], help="ir_measures measures (default: the paper's)")
    init.add_argument("--dataset", default="data", help="the dataset's name in tables")
    init.add_argument("-o", "--output", default="config/mine.yaml")
    args = parser.parse_args(argv)
    if args.command == "init":
        return _init(args)
    if args.command == "verdict":
        return _verdict(args)
    try:
        cfg = load_plan(args.configfile)
        if args.command == "check":
            from .preflight import preflight

            preflight(cfg)
            judges = {j.name for js in cfg.judges.values() for j in js}
            systems = f"{len(cfg.systems)} systems" if cfg.systems else "no systems (the label sets audited alone)"
            print(f"ok: {len(cfg.datasets)} dataset(s), {systems}, {len(judges)} judges")
            return 0
        from .plan import render

        text = render(cfg, args.provenance)
    except InputError as exc:  # every error found, one line each
        for line in exc.lines:
            print(f"voirdire: {line}", file=sys.stderr)
        return 2
    except FileNotFoundError as exc:
        print(f"voirdire: {exc}", file=sys.stderr)
        return 2
    print(text)
    return 0


def _verdict(args: argparse.Namespace) -> int:
    from pathlib import Path

    import pandas as pd

    from .layout import Layout
    from .verdict import sentence

    results = args.results
    if results is None:
        try:
            results = load_plan(args.configfile).config["results"]
        except (InputError, FileNotFoundError) as exc:
            print(f"voirdire: {exc}", file=sys.stderr)
            return 2
    path = Path(Layout(str(results)).verdict("csv"))
    if not path.exists():
        print(f"voirdire: no verdict at {path}: run the workflow first (snakemake --cores N)", file=sys.stderr)
        return 2
    long = pd.read_csv(path, keep_default_na=False, na_values=[""])
    for dataset, judge in dict.fromkeys(zip(long["dataset"], long["judge"], strict=True)):
        print(sentence(long, dataset, judge))
        rows = long[(long["dataset"] == dataset) & (long["judge"] == judge)]
        width = max(len(q) for q in rows["question"])
        for row in rows.itertuples():
            print(f"  {row.question:<{width}}  {row.text}")
        print()
    return 0


def _init(args: argparse.Namespace) -> int:
    from .init import init_config, write_config

    try:
        config, notes = init_config(
            qrels=args.qrels, topics=args.topics, runs=args.runs, judges=args.judge, judge_folders=args.judges,
            families=args.family, measures=args.measures, dataset=args.dataset,
        )  # fmt: skip
        write_config(config, notes, args.output)
        load_plan(args.output)  # what it wrote validates as the workflow will check it
    except (InputError, FileNotFoundError) as exc:
        print(f"voirdire: {exc}", file=sys.stderr)
        return 2
    from pathlib import Path

    from .init import family_of

    runs = f"{len(config['runs'])} run entries" if config.get("runs") else "no runs (the label sets audited alone)"
    print(f"wrote {args.output}: {runs}, {len(config['judges'])} judges")
    for kind, names in (("runs", _run_names(config)), ("judges", [j["name"] for j in config["judges"]])):
        if not names:
            continue
        print(f"{kind}:")
        for name in names:
            family = family_of(name, dict(a.split("=", 1) for a in args.family)) or "no family (--family NAME=FAMILY)"
            print(f"  {name}  family: {family}")
    for note in notes:
        print(f"note: {note}")
    snakefile = Path(__file__).resolve().parents[2] / "Snakefile"
    print(f"next:\n  snakemake -s {snakefile} --cores 2 --configfile {Path(args.output).resolve()}")
    return 0


def _run_names(config: dict) -> list[str]:
    """Every system name the runs of ``config`` give (a folder: one per run file)."""
    from pathlib import Path

    from .runs import folder_names

    names = []
    for key, entry in config.get("runs", {}).items():
        names += list(folder_names(Path(entry["path"]), key="--runs")[0]) if Path(entry["path"]).is_dir() else [key]
    return names


if __name__ == "__main__":
    sys.exit(main())
