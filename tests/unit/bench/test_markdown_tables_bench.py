"""bench/markdown_tables.py: the table it renders has the paired tests' columns, and both
renderers it times write the same text on it. No timing is asserted."""

from __future__ import annotations

from conftest import load_bench


def test_the_bench_table_renders_alike_through_tabulate_and_markdown_table(capsys, monkeypatch):
    bench = load_bench("markdown_tables")
    table = bench.paired_tests(systems=6, judges=2, measures=2)
    assert len(table) == 2 * 2 * 15
    assert {"int64", "float64", "bool"} <= {str(t) for t in table.dtypes}
    assert table["judge"].map(type).eq(str).all()  # and text
    monkeypatch.setattr(
        "sys.argv", ["markdown_tables.py", "--systems", "6", "--judges", "2", "--measures", "2", "--repeats", "1"]
    )
    bench.main()
    printed = capsys.readouterr().out
    assert "table: 60 rows x 13 columns" in printed and "the same text: True" in printed
