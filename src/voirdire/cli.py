"""Command line: ``voirdire init`` (a config from your files), ``voirdire check`` (a config and its
inputs, before any job), ``voirdire plan``, ``voirdire verdict`` (the verdict of a finished
run, in the terminal) and ``voirdire resume`` (a killed run, the way docs/reproducibility.md says)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from .config import load_plan
from .errors import InputError


def main(argv: list[str] | None = None) -> int:
    """The command line; a reader that stops early (``voirdire verdict | head``) ends it quietly."""
    try:
        code = _main(argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        # the reader has gone: nothing more to print, and no traceback at exit (Python's docs, signal)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["resume"] and argv[1:2] not in (["-h"], ["--help"]):
        return _resume(argv[1:])  # every argument after it is Snakemake's, as given
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
    verdict.add_argument(
        "--rank",
        action="store_true",
        help="print the judges' leaderboard instead: every judge ranked by its agreement with the humans, each "
        "against the next one down (audits/<provenance>/judge_ranking.csv)",
    )
    resume = sub.add_parser(
        "resume",
        help="resume a killed run: refuse while a process of it lives, else `snakemake --unlock` and the run again",
        description="Resume a run that was killed (kill -9, a lost session, a node that went away): check that no "
        "Snakemake process or job of it is alive in its working directory, remove the lock Snakemake left, and run "
        "`snakemake --rerun-incomplete` with the same arguments. Jobs cut short are remade; LLM answers already "
        "stored are not asked again.",
    )
    resume.add_argument(
        "snakemake_args",
        nargs="*",
        metavar="SNAKEMAKE_ARG",
        help="the killed run's arguments, e.g. --cores 2 --configfile config/mine.yaml",
    )
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
        help="a folder of label sets (qrels files), or a glob ('release/*.qrels'), one judge each, named by its "
        "file name; files that are not qrels (topics.tsv) are skipped and named",
    )
    init.add_argument("--family", action="append", default=[], metavar="NAME=FAMILY", help="a run's or judge's family")
    init.add_argument(
        "--oracle-base",
        metavar="RUN",
        help="the run the oracles (Perfect) reorder (default: the run the others rerank, else the one named BM25)",
    )
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

    from .layout import Layout
    from .verdict import judge_rows, read_verdict, sentence

    results = args.results
    if results is None:
        try:
            results = load_plan(args.configfile).config["results"]
        except (InputError, FileNotFoundError) as exc:
            print(f"voirdire: {exc}", file=sys.stderr)
            return 2
    if args.rank:
        return _ranking(Layout(str(results)))
    path = Path(Layout(str(results)).verdict("csv"))
    if not path.exists():
        print(f"voirdire: no verdict at {path}: run the workflow first (snakemake --cores N)", file=sys.stderr)
        return 2
    long = read_verdict(path)
    for dataset, judge in judge_rows(long):
        print(sentence(long, dataset, judge))
        rows = long[(long["dataset"] == dataset) & (long["judge"] == judge)]
        width = max(len(q) for q in rows["question"])
        for row in rows.itertuples():
            print(f"  {row.question:<{width}}  {row.text}")
        print()
    return 0


def _ranking(layout) -> int:
    """``voirdire verdict --rank``: the judges' leaderboard of every provenance the run audited (original first)."""
    from .verdict import ranking_text, read_ranking

    original = Path(layout.audit("original", "judge_ranking"))
    found = sorted(original.parent.parent.glob(f"*/{original.name}"), key=lambda p: (p != original, str(p)))
    if not found:
        print(f"voirdire: no judges' leaderboard at {original}: run the workflow first", file=sys.stderr)
        return 2
    for path in found:
        if len(found) > 1:
            print(f"# {path.parent.name}")
        print(ranking_text(read_ranking(path)))
    return 0


def _init(args: argparse.Namespace) -> int:
    from .init import init_config, write_config

    try:
        config, notes = init_config(
            qrels=args.qrels,
            topics=args.topics,
            runs=args.runs,
            judges=args.judge,
            judge_folders=args.judges,
            families=args.family,
            measures=args.measures,
            dataset=args.dataset,
            oracle_base_run=args.oracle_base,
        )
        write_config(config, notes, args.output)
        quiet = logging.getLogger("voirdire.config")  # what the check would log, init has said as a warning
        level, _ = quiet.level, quiet.setLevel(logging.ERROR)
        try:
            load_plan(args.output)  # what it wrote validates as the workflow will check it
        finally:
            quiet.setLevel(level)
    except (InputError, FileNotFoundError) as exc:
        print(f"voirdire: {exc}", file=sys.stderr)
        return 2
    from pathlib import Path

    from .init import WARNING, family_of

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
        if not note.startswith(WARNING):
            print(f"note: {note}")
    for note in notes:  # last, where they are seen: what init could not take as it found it
        if note.startswith(WARNING):
            print(note, file=sys.stderr)
    snakefile = Path(__file__).resolve().parents[2] / "Snakefile"
    print(f"next:\n  snakemake -s {snakefile} --cores 2 --configfile {Path(args.output).resolve()}")
    return 0


def _workdir(args: list[str], cwd: str | Path = ".") -> Path:
    """A run's working directory: Snakemake's ``--directory`` (``-d``) if given, else ``cwd``."""
    for index, arg in enumerate(args):
        if arg in ("-d", "--directory") and index + 1 < len(args):
            return (Path(cwd) / args[index + 1]).resolve()
        if arg.startswith("--directory="):
            return (Path(cwd) / arg.split("=", 1)[1]).resolve()
    return Path(cwd).resolve()


def alive_in(directory: Path) -> list[tuple[int, str]]:
    """The processes of a run in ``directory`` still alive: Snakemake itself and its jobs (their
    command lines name snakemake: ``-m snakemake``, ``bin/snakemake``, ``.snakemake/scripts/``),
    this process and its parents aside."""
    import os

    import psutil  # a dependency of Snakemake's

    mine = {os.getpid(), *(p.pid for p in psutil.Process().parents())}
    found = []
    for process in psutil.process_iter(["pid", "cmdline", "cwd"]):
        info = process.info
        args = info.get("cmdline") or []
        if info["pid"] in mine or not info.get("cwd") or not any("snakemake" in arg for arg in args):
            continue
        if _workdir(args, info["cwd"]) == directory:
            found.append((info["pid"], " ".join(args)))
    return found


def _resume(args: list[str]) -> int:
    """``voirdire resume SNAKEMAKE_ARGS``: unlock and rerun a killed run, unless it is still running."""
    import subprocess

    directory = _workdir(args)
    alive = alive_in(directory)
    if alive:
        print(
            f"voirdire: a run in {directory} is still alive; let it end or stop it (all of it: kill -- -PGID), "
            "then resume:",
            file=sys.stderr,
        )
        for pid, cmdline in alive:
            print(f"  pid {pid}: {cmdline[:200]}", file=sys.stderr)
        return 1
    snakemake = [sys.executable, "-m", "snakemake"]
    print(f"voirdire: nothing of a run is alive in {directory}: removing Snakemake's lock", flush=True)
    unlocked = subprocess.run([*snakemake, "--unlock", *args], check=False)
    if unlocked.returncode != 0:
        return unlocked.returncode
    print("voirdire: resuming: snakemake --rerun-incomplete " + " ".join(args), flush=True)
    return subprocess.run([*snakemake, "--rerun-incomplete", *args], check=False).returncode


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
