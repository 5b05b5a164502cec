"""Another lab's workflow pulls voirdire in as a Snakemake module (``module voirdire: snakefile:
...`` and ``use rule * from voirdire as voirdire_*``), from its own folder with its own config,
and gets the same tables and audits as a run from this checkout."""

import re
import textwrap
from pathlib import Path

import yaml
from conftest import ROOT, SHARED_DL19, snakemake

MANIFEST = re.compile(r"^manifest sha256: .*$", re.MULTILINE)


def outer_workflow(folder: Path, results: str) -> None:
    """An outer Snakefile that uses the checkout's workflow as a module, and a config of its
    own: the DL19 test config with its data paths pointing at the shared data from here."""
    config = yaml.safe_load((ROOT / ".test" / "config.yaml").read_text())
    config["results"] = results
    shared = str(SHARED_DL19.parent.parent)  # the folder `../shared` names from the checkout
    text = yaml.safe_dump(config, sort_keys=False).replace("../shared", shared)
    (folder / "config.yaml").write_text(text)
    (folder / "Snakefile").write_text(
        textwrap.dedent(f"""\
        configfile: "config.yaml"


        module voirdire:
            snakefile:
                "{ROOT / "Snakefile"}"
            config:
                config


        use rule * from voirdire as voirdire_*
        """)
    )


def comparable(path: Path) -> str:
    """A table's text without the manifest line (the config differs by its results folder)."""
    return MANIFEST.sub("manifest sha256: -", path.read_text())


def test_the_workflow_as_a_module_gives_the_same_tables(dl19_results, tmp_path):
    outer = tmp_path / "lab"
    outer.mkdir()
    outer_workflow(outer, "results")
    snakemake("--cores", "2", cwd=outer)
    mine = outer / "results"
    assert (outer / "config.yaml").read_text().count(str(ROOT.parent / "shared")) >= 3  # nothing read from ROOT's cwd
    compared = 0
    for reference in sorted(dl19_results.rglob("*")):
        relative = reference.relative_to(dl19_results)
        table = reference.suffix in (".md", ".csv") and relative.parts[0] in (
            "tables",
            "audits",
            "verdict.md",
            "verdict.csv",
        )
        if not table or relative.name.startswith("timings"):  # where the time went differs from run to run
            continue
        assert (mine / relative).is_file(), f"{relative} is missing from the module's run"
        assert comparable(mine / relative) == comparable(reference), f"{relative} differs"
        compared += 1
    assert compared >= 20
