"""The figures a README or a doc page quotes, read from a finished run (prints Markdown).

Docs quote numbers from a run, never from memory: run the workflow, then paste what this
prints. It reads the run's results folder and prints, per provenance (``original`` by
default):

- Table 1: every system's mean score under the humans and each judge, with its interval (the first measure
  of ``evaluation.measures`` unless ``--measure`` names another, or ``all``);
- Table 2: each judge's Cohen's kappa (binary, graded, quadratic-weighted), Kendall's tau
  (all systems, oracles only) and coverage;
- self-preference: each judge's corrected value with its 95% bootstrap CI, whether it is
  flagged, and the reason when there is no value;
- the run's wall time, from the Snakemake benchmark files under ``logs/benchmarks/`` when
  there are any: the span from the first job's start to the last job's end (a job's start
  is its file's time less its seconds), with the jobs' summed seconds beside it; when the
  files come from several runs (a partial rerun), the last run's, with a warning.

Numbers are rounded as the run's own Markdown tables round them, so a quote matches the
table a reader opens.

    python bench/doc_figures.py results
    python bench/doc_figures.py /tmp/demo --provenance all --measure all
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path

import pandas as pd

TABLE2_COLUMNS = ("kappa_binary", "kappa_graded", "kappa_quadratic", "tau_all", "tau_oracles", "coverage")
NOT_JUDGES = {"dataset", "system", "measure"}


def number(value, fmt: str) -> str:
    """``value`` in ``fmt``; ``n/a`` when it is missing (as the run's tables print it)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return format(float(value), fmt)


def with_interval(row, name: str, fmt: str) -> str:
    """``row[name]`` and its interval (``<name>_ci_low``, ``<name>_ci_high``) as the run's Markdown
    prints them (``0.4821 [0.3600, 0.5880]``); the value alone where the row has no bounds."""
    value = number(row[name], fmt)
    low, high = row.get(f"{name}_ci_low"), row.get(f"{name}_ci_high")
    if value == "n/a" or any(b is None or (isinstance(b, float) and math.isnan(b)) for b in (low, high)):
        return value
    return f"{value} [{number(low, fmt)}, {number(high, fmt)}]"


def markdown(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]


def provenances(results: Path, wanted: str) -> list[str]:
    found = (
        sorted(p.name for p in (results / "tables").iterdir() if p.is_dir()) if (results / "tables").is_dir() else []
    )
    if wanted == "all":
        return sorted(found, key=lambda name: (name != "original", name))
    return [wanted]


def table1(results: Path, provenance: str, measure: str | None) -> list[str]:
    path = results / "tables" / provenance / "table1.csv"
    if not path.is_file():
        return [f"(no {path.relative_to(results)})"]
    frame = pd.read_csv(path)
    measures = list(dict.fromkeys(frame["measure"]))
    chosen = measures if measure == "all" else [measure or measures[0]]
    judges = [c for c in frame.columns if c not in NOT_JUDGES and not c.endswith(("_ci_low", "_ci_high"))]
    lines = []
    for dataset, block in frame.groupby("dataset", sort=False):
        for m in chosen:
            rows = block[block["measure"] == m]
            if rows.empty:
                lines += [f"{dataset}: no rows for measure {m!r} (measures: {', '.join(measures)})", ""]
                continue
            lines += [f"**{dataset}**, {m}:", ""]
            lines += markdown(
                ["system", *judges],
                [[r["system"], *(with_interval(r, j, ".4f") for j in judges)] for _, r in rows.iterrows()],
            )
            lines.append("")
    return lines


def table2(results: Path, provenance: str, measure: str | None) -> list[str]:
    path = results / "tables" / provenance / "table2.csv"
    if not path.is_file():
        return [f"(no {path.relative_to(results)})"]
    frame = pd.read_csv(path)
    if frame.empty:
        return ["(no judge besides the human labels)"]
    measures = list(dict.fromkeys(frame["measure"]))
    if measure != "all":
        frame = frame[frame["measure"] == (measure or measures[0])]
    columns = [c for c in TABLE2_COLUMNS if c in frame.columns]
    lines = []
    for dataset, block in frame.groupby("dataset", sort=False):
        lines += [f"**{dataset}**:", ""]
        lines += markdown(
            ["judge", "measure", *columns],
            [[r["judge"], r["measure"], *(number(r[c], ".3f") for c in columns)] for _, r in block.iterrows()],
        )
        lines.append("")
    return lines


def self_preference(results: Path, provenance: str) -> list[str]:
    path = results / "audits" / provenance / "self_preference.csv"
    if not path.is_file():
        return [f"(no {path.relative_to(results)})"]
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    if frame.empty:
        return ["(no rows: no judge to test)"]
    lines = []
    for dataset, block in frame.groupby("dataset", sort=False):
        rows = []
        for _, r in block.iterrows():
            corrected = r.get("corrected")
            if corrected is None or pd.isna(corrected):
                value, ci = "n/a", ""
            else:
                value = f"{float(corrected):+.4f}"
                ci = f"{number(r['corrected_ci_low'], '.4f')} .. {number(r['corrected_ci_high'], '.4f')}"
            reason = r.get("reason")
            rows.append(
                [
                    r["judge"],
                    "" if pd.isna(r.get("family")) else r["family"],
                    value,
                    ci,
                    "yes" if str(r.get("self_preferring")) == "True" else "no",
                    "" if reason is None or pd.isna(reason) else reason,
                ]
            )
        lines += [f"**{dataset}**:", ""]
        lines += markdown(["judge", "family", "corrected", "95% CI", "flagged", "reason"], rows)
        lines.append("")
    return lines


def wall_time(results: Path, gap: float = 120.0) -> list[str]:
    """The run's wall time from its benchmark files. Files a later (partial) rerun rewrote sit
    apart in time: jobs are grouped into runs wherever nothing ran for ``gap`` seconds, and the
    span of the last run is quoted, with a warning when the files hold more than one."""
    files = sorted((results / "logs" / "benchmarks").rglob("*.tsv"))
    jobs = []
    for path in files:
        with path.open(newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        if not rows:
            continue
        seconds = float(rows[-1]["s"])  # repeated benchmarks: the last run
        end = path.stat().st_mtime
        jobs.append((end - seconds, end, seconds, path))
    if not jobs:
        return ["(no benchmark files under logs/benchmarks/)"]
    jobs.sort()
    runs, covered = [[jobs[0]]], jobs[0][1]
    for job in jobs[1:]:
        if job[0] > covered + gap:
            runs.append([])
        runs[-1].append(job)
        covered = max(covered, job[1])
    last = runs[-1]
    span = max(j[1] for j in last) - min(j[0] for j in last)
    total = sum(j[2] for j in last)
    slowest = sorted(last, key=lambda j: -j[2])[:5]
    lines = [
        f"- wall time: **{clock(span)}** from the first job's start to the last job's end "
        f"({len(last)} jobs with a benchmark file; their seconds summed: {clock(total)})",
        "- slowest jobs: "
        + ", ".join(
            f"`{j[3].relative_to(results / 'logs' / 'benchmarks').with_suffix('')}` {j[2]:.0f} s" for j in slowest
        ),
    ]
    if len(runs) > 1:
        lines.append(
            f"- warning: the benchmark files come from {len(runs)} runs (gaps of over {gap:.0f} s); "
            f"the figures above are the last run's ({len(last)} of {len(jobs)} jobs). Quote a cold run's: "
            "remove the results folder and run again."
        )
    return lines


def clock(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path, help="a finished run's results folder")
    parser.add_argument("--provenance", default="original", help="a provenance, or 'all' (default: original)")
    parser.add_argument("--measure", default=None, help="a measure as Table 1 names it, or 'all' (default: the first)")
    args = parser.parse_args(argv)
    results = args.results
    if not results.is_dir():
        print(f"doc_figures: {results} is not a folder", file=sys.stderr)
        return 2
    lines = [f"# Figures from `{results}`", ""]
    manifest = results / "manifest.json"
    if manifest.is_file():
        try:  # the manifest is the run's resolved config
            config = json.loads(manifest.read_text(encoding="utf-8"))
            datasets = ", ".join(config.get("datasets", {})) if isinstance(config, dict) else ""
        except ValueError:
            datasets = ""
        if datasets:
            lines += [f"datasets: {datasets}; systems: {', '.join(map(str, config.get('systems', [])))}", ""]
    for provenance in provenances(results, args.provenance):
        lines += [f"## Table 1 ({provenance})", "", *table1(results, provenance, args.measure), ""]
        lines += [f"## Table 2: kappa and tau ({provenance})", "", *table2(results, provenance, args.measure), ""]
        lines += [
            f"## Self-preference, corrected for strictness ({provenance})",
            "",
            *self_preference(results, provenance),
            "",
        ]
    lines += ["## Wall time", "", *wall_time(results), ""]
    print("\n".join(line.rstrip() for line in lines).rstrip() + "\n", end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
