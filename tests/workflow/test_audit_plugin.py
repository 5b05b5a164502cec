"""Adding an audit is three files: its module (computation, declaration, verdict question), its
caption and its test. A planted audit, installed the way a lab would add its own (a module and an
entry point of the group ``voirdire.audits``, on ``PYTHONPATH``; no file of the workflow changed),
reaches the audits rule's outputs, the config schema (its settings), the report and the verdict."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import yaml

PLANTED = '''
"""A planted audit: the share of a judge's labels above the humans' grade of the same pair."""

from pathlib import Path

import pandas as pd
from scipy.stats import binomtest

from voirdire.audits.registry import Table, audit
from voirdire.questions import NA, PASS, Cell, judge_rows, number, question


@audit(
    "planted",
    tables=[Table("planted", "Planted: labels above the humans'", ["dataset", "judge", "pairs", "above", "share"])],
    systems=False,
    captions=Path(__file__).parent,
    short="Planted audit",
    settings={
        "type": "object",
        "default": {},
        "additionalProperties": False,
        "properties": {"share": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5}},
    },
)
def planted(context):
    rows = []
    for judge in context.judges:
        both = context.human.merge(context.data.labels[judge], on=["query_id", "doc_id"], suffixes=("_h", "_j"))
        above = int((both["relevance_j"] > both["relevance_h"]).sum())
        rows.append({"judge": judge, "pairs": len(both), "above": above, "share": context.settings["share"]})
    return {"planted": pd.DataFrame(rows)}


@question(
    "planted",
    asks="Does it grade above the humans more often than the planted share?",
    table="planted",
    needs=("labels",),
    rule="one-sided exact binomial test of the pairs above the humans' grade against the share",
)
def _planted(rows, judge, context):
    found = judge_rows(rows, judge)
    if not len(found):
        return Cell(NA, reason="no labels")
    row = found.iloc[0].to_dict()
    pairs, above, share = int(number(row, "pairs")), int(number(row, "above")), number(row, "share")
    test = binomtest(above, pairs, share, alternative="greater")
    low, high = test.proportion_ci()
    return Cell(PASS, above / pairs, low, high, p=test.pvalue, signal=above / pairs > share)
'''

CAPTION = "Planted audit: ``judge``, ``pairs``, ``above`` (labels above the humans' grade), ``share``.\n"


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    """The planted audit as a lab installs one: a module and its entry point (a dist-info folder)."""
    folder = tmp_path / "plugin"
    folder.mkdir()
    (folder / "planted_audit.py").write_text(textwrap.dedent(PLANTED), encoding="utf-8")
    (folder / "audit_planted.rst").write_text(CAPTION, encoding="utf-8")
    info = folder / "planted_audit-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: planted-audit\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[voirdire.audits]\nplanted = planted_audit\n", encoding="utf-8")
    return folder


def test_a_planted_audit_reaches_the_outputs_the_report_and_the_verdict(tmp_path, plugin, dl19, monkeypatch):
    from conftest import snakemake

    topics = dl19.joinpath("topics.tsv").read_text().splitlines()[:4]
    kept = {line.split("\t")[0] for line in topics}
    (tmp_path / "topics.tsv").write_text("\n".join(topics) + "\n")
    columns = ["query_id", "iteration", "doc_id", "relevance"]
    nist = pd.read_csv(dl19 / "qrels.nist.txt", sep=r"\s+", header=None, names=columns, dtype=str)
    nist = nist[nist["query_id"].isin(kept)].astype({"relevance": int})
    nist.to_csv(tmp_path / "qrels.txt", sep=" ", header=False, index=False)
    lenient = nist.assign(relevance=(nist["relevance"] + 1).clip(upper=3))  # above the humans on every grade < 3
    lenient.to_csv(tmp_path / "lenient.txt", sep=" ", header=False, index=False)
    nist.to_csv(tmp_path / "copy.txt", sep=" ", header=False, index=False)
    out = tmp_path / "results"
    config = {
        "results": str(out),
        "datasets": {
            "d": {"source": "local", "topics": str(tmp_path / "topics.tsv"), "qrels": str(tmp_path / "qrels.txt")}
        },
        "judges": [
            {"name": "copy", "kind": "recorded", "qrels": str(tmp_path / "copy.txt")},
            {"name": "lenient", "kind": "recorded", "qrels": str(tmp_path / "lenient.txt")},
        ],
        "audits": {"planted": {"share": 0.2}},  # the planted audit's own setting, in the config schema
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(plugin), os.environ.get("PYTHONPATH")])))

    # its setting is checked by the schema it declares: a share of 2 is one error naming the key
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**config, "audits": {"planted": {"share": 2}}}), encoding="utf-8")
    refused = snakemake("--cores", "1", "--configfile", str(bad), "-n", check=False)
    assert refused.returncode != 0 and "audits.planted.share" in refused.stdout + refused.stderr

    snakemake("--cores", "2", "--configfile", str(path))
    table = pd.read_csv(out / "audits/original/planted.csv").set_index("judge")
    above = int((nist["relevance"] < 3).sum())
    assert table.loc["lenient", "above"] == above and table.loc["copy", "above"] == 0
    assert (table["share"] == 0.2).all() and (table["pairs"] == len(nist)).all()
    assert "Planted: labels above the humans'" in (out / "audits/original/planted.md").read_text()

    verdict = pd.read_csv(out / "verdict.csv", keep_default_na=False, na_values=[""]).set_index(["judge", "question"])
    assert verdict.loc[("lenient", "planted"), "status"] == "flag"  # the planted bias, found
    assert verdict.loc[("copy", "planted"), "status"] in ("pass", "inconclusive")  # a clean judge is not flagged
    assert verdict.loc[("lenient", "planted"), "effect"] == pytest.approx(above / len(nist))

    report = tmp_path / "report.html"
    snakemake("--configfile", str(path), "--report", str(report))
    html = report.read_text(encoding="utf-8")
    assert "labels above the humans" in html and "Planted audit" in html  # its caption, under its short name
