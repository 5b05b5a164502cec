"""What a job pays before it starts: the scripts that compute no statistic import no SciPy or
scikit-learn (about a second of CPU for every such job on a 2-core machine; the suite runs
hundreds). A new import chain that brings them back (the judging job once imported the
statistics engine through the gamed-system probe) fails here, naming the script."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest
from conftest import ROOT

SCRIPTS = ROOT / "workflow" / "scripts"
NO_STATISTICS = [
    "llm_judge",
    "embedding_judge",
    "null_judge",
    "recorded_judges",
    "probe_judge",
    "rewrite",
    "rerank",
    "pad",
    "plan",
    "ledger",
    "gaming_passages",
    "gaming_llm_judge",
    "gaming_embedding_judge",
    "oracles",
    "needed_pairs",
    "scores",
]
HEAVY = ["scipy.stats", "sklearn"]


def module_imports(script: str) -> str:
    """The script's top-level import statements, as source."""
    source = (SCRIPTS / f"{script}.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    return "\n".join(ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)))


def test_jobs_that_compute_no_statistic_import_no_scipy_or_sklearn():
    program = "import json, sys\n"
    for script in NO_STATISTICS:
        program += module_imports(script) + "\n"
        program += f"print(json.dumps([{script!r}, [m for m in {HEAVY!r} if m in sys.modules]]))\n"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300, check=True)
    found = dict(json.loads(line) for line in done.stdout.splitlines())
    assert set(found) == set(NO_STATISTICS)
    # the first script that brings one in is named (later ones inherit the module)
    assert not any(found.values()), {s: m for s, m in found.items() if m}


def test_the_check_sees_an_import_of_the_statistics_it_guards():
    """The engine imported, nothing computed: no SciPy; a paired test computed: SciPy."""
    program = "import sys\nimport voirdire.stats\nfrom voirdire.stats import paired_tests\n"
    program += f"print([m for m in {HEAVY!r} if m in sys.modules])\n"
    program += "import pandas as pd\npaired_tests(pd.DataFrame({'a': [0.1, 0.4, 0.3], 'b': [0.2, 0.1, 0.5]}))\n"
    program += f"print([m for m in {HEAVY!r} if m in sys.modules])\n"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300, check=True)
    before, after = done.stdout.splitlines()
    assert before == "[]" and "scipy.stats" in after


def test_a_job_that_runs_its_script_itself_keeps_its_imports_out_of_the_collectors_sight(tmp_path):
    """jobscript.start freezes what the script imported:
    statsmodels' Holm correction asks for a full collection on every call, which otherwise walks
    every object pandas, SciPy and statsmodels made. Counted, not timed: after start, the
    objects a collection walks are a small share of those frozen, and Holm still answers."""
    program = (
        "import gc, json, types\n"
        "import pandas, scipy.stats, statsmodels.api\n"
        "from voirdire.jobscript import start\n"
        "from voirdire.stats import adjust\n"
        "before = len(gc.get_objects())\n"
        f"start(types.SimpleNamespace(log=[{str(tmp_path / 'job.log')!r}], threads=1, rule='probe'))\n"
        "print(json.dumps([before, gc.get_freeze_count(), len(gc.get_objects()),"
        " adjust([0.01, 0.04, 0.03], 'holm').tolist()]))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300, check=True)
    before, frozen, walked, holm = json.loads(done.stdout.splitlines()[-1])
    assert frozen >= before > 100_000 and walked < before / 20
    assert holm == pytest.approx([0.03, 0.06, 0.06])


def test_listing_the_audits_imports_no_statistics_library():
    """Snakemake's start, the config check (ledger, plan) and the report list the registered
    audits (:func:`voirdire.audits.registry.load` imports each audit's module): the modules import
    SciPy, ppi_py or statsmodels where they compute, not at the top (ppi_py alone brought numba,
    scikit-learn and statsmodels: about 4 CPU-s in every Snakemake start and every such job)."""
    heavy = [*HEAVY, "ppi_py", "statsmodels", "numba", "matplotlib"]
    program = "import sys\nfrom voirdire.audits.registry import load\naudits = load()\n"
    program += f"print(len(audits), [m for m in {heavy!r} if m in sys.modules])\n"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300, check=True)
    count, found = done.stdout.split(" ", 1)
    assert int(count) >= 8 and found.strip() == "[]", done.stdout
