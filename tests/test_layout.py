"""The architecture holds: one package imports litellm, the science core imports no heavy stack,
package data is read through importlib.resources."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "voirdire"
CORE = ["formats", "data", "bm25", "systems", "judges", "null_judges", "evaluation", "stats",
        "report", "config", "preflight", "fingerprint", "layout"]  # fmt: skip


def test_only_the_llm_package_imports_litellm():
    importers = {
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if re.search(r"^\s*(import litellm|from litellm)", path.read_text(), re.MULTILINE)
    }
    assert importers and all(p.startswith("llm/") for p in importers), importers


def test_only_the_call_path_builds_a_semaphore():
    builders = [p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py") if "asyncio.Semaphore(" in p.read_text()]
    assert builders == ["llm/calls.py"]


@pytest.mark.parametrize("module", CORE)
def test_the_science_core_imports_no_litellm_torch_or_snakemake(module):
    code = (f"import sys, voirdire.{module}; "
            "print(sorted(m for m in ('litellm', 'torch', 'snakemake') if m in sys.modules))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_templates_and_schema_are_package_data():
    from voirdire.config import SCHEMA
    from voirdire.prompts import DEFAULT_PROMPT

    assert DEFAULT_PROMPT.is_file() and "{query}" in DEFAULT_PROMPT.read_text()
    assert SCHEMA.is_file() and SCHEMA.parent == SRC
    pyproject = (SRC.parents[1] / "pyproject.toml").read_text()
    assert '"schema.yaml"' in pyproject and '"prompts/*.txt"' in pyproject
