"""Benchmark: rendering a table's Markdown view (prints figures; nothing asserted).

Builds the paired-tests table of every pair of N systems under J judges and M measures (the
largest table the workflow writes, the shape of ``significance.csv``: text, float, integer and
boolean columns, p-values printed with ``.4g`` so the decimal alignment has work to do) and times,
on the same rows:

* ``to_markdown``: pandas' ``DataFrame.to_markdown`` (tabulate's ``pipe`` format, public options
  only: ``floatfmt``, ``missingval``), each cell's type inferred from its value;
* ``markdown_table``: :func:`voirdire.output.markdown_table`, each column's type from its dtype;
* ``write_table``: :func:`voirdire.output.write_table` on the whole table (CSV of every row, and
  the Markdown of the first :data:`voirdire.output.MAX_ROWS` rows a person reads).

It prints whether the two renderers wrote the same text (they should: the layout is tabulate's).

    python bench/markdown_tables.py                       # 100 systems, 20 judges, 4 measures: 396,000 rows
    python bench/markdown_tables.py --systems 30 --rows 5000   # the Markdown of 5,000 rows
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from voirdire.output import MAX_ROWS, markdown_table, write_table


def paired_tests(systems: int, judges: int, measures: int, seed: int = 7) -> pd.DataFrame:
    """A table of the columns ``significance.csv`` has, one row per judge, measure and pair of systems."""
    rng = np.random.default_rng(seed)
    pairs = list(itertools.combinations([f"system-{s:03d}" for s in range(systems)], 2))
    keys = [(j, m, a, b) for j in range(judges) for m in range(measures) for a, b in pairs]
    n = len(keys)
    p_human, p_judge = rng.uniform(0, 1, n) ** 3, rng.uniform(0, 1, n) ** 3
    significant_human, significant_judge = p_human < 0.05, p_judge < 0.05
    return pd.DataFrame(
        {
            "dataset": "dl19",
            "judge": [f"judge-{k[0]}" for k in keys],
            "measure": [f"nDCG@{10 * (k[1] + 1)}" for k in keys],
            "system_a": [k[2] for k in keys],
            "system_b": [k[3] for k in keys],
            "queries": rng.integers(40, 44, n),
            "mean_diff_human": rng.normal(0, 0.05, n),
            "p_human_adjusted": np.where(rng.uniform(size=n) < 0.02, np.nan, p_human),
            "mean_diff_judge": rng.normal(0, 0.05, n),
            "p_judge_adjusted": p_judge,
            "missed": significant_human & ~significant_judge,
            "spurious": ~significant_human & significant_judge,
            "flipped": rng.uniform(size=n) < 0.01,
        }
    )


def best_of(repeats: int, call) -> tuple[float, object]:
    """The fastest of ``repeats`` calls (seconds) and the last call's result."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=100)
    parser.add_argument("--judges", type=int, default=20)
    parser.add_argument("--measures", type=int, default=4)
    parser.add_argument("--rows", type=int, default=MAX_ROWS, help="rows of the Markdown rendered alone")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    table = paired_tests(args.systems, args.judges, args.measures)
    shown = table.drop(columns="dataset").head(args.rows)
    print(f"table: {len(table):,} rows x {table.shape[1]} columns; Markdown of {len(shown):,} rows alone")
    slow, expected = best_of(
        args.repeats,
        lambda: (
            shown.astype(object).where(shown.notna(), None).to_markdown(index=False, floatfmt=".4g", missingval="n/a")
        ),
    )
    fast, found = best_of(args.repeats, lambda: markdown_table(shown, floatfmt=".4g"))
    print(f"to_markdown (tabulate):  {slow * 1000:8.1f} ms")
    print(f"markdown_table:          {fast * 1000:8.1f} ms  ({slow / fast:.1f}x faster)")
    print(f"the same text: {found == expected}")
    with tempfile.TemporaryDirectory() as folder:
        whole, _ = best_of(
            args.repeats, lambda: write_table(table, Path(folder) / "significance", title="t", floatfmt=".4g")
        )
    print(f"write_table, CSV of {len(table):,} rows and Markdown of {min(len(table), MAX_ROWS):,}: {whole:.2f} s")


if __name__ == "__main__":
    main()
