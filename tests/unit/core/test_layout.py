"""The architecture holds: one package calls into litellm, the science core imports no heavy stack,
no import cycle (function-level imports included), every module has one home, result paths come
from Layout, package data is read through importlib.resources.

The checkers are plain functions on source text, so each is also tested on a planted violation."""

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SRC = ROOT / "src" / "voirdire"
SCRIPTS = ROOT / "workflow" / "scripts"
RULES = ROOT / "workflow" / "rules"
HEAVY = ("litellm", "torch", "snakemake")

CORE = [
    "voirdire",
    "assistants",
    "assistants.checks",
    "assistants.declarations",
    "assistants.experiments",
    "assistants.figures",
    "assistants.preference",
    "assistants.recorded",
    "assistants.sample",
    "audits",
    "audits.calibration",
    "audits.circularity",
    "audits.declared",
    "audits.drift",
    "audits.figures",
    "audits.labels",
    "audits.run",
    "audits.length",
    "audits.panel",
    "audits.ranking",
    "audits.reranked",
    "audits.registry",
    "stats.ranking",
    "bm25",
    "cli",
    "config",
    "config.checks",
    "config.found",
    "config.plan",
    "config.sections_judges",
    "config.sections_probes",
    "config.sections_systems",
    "config.schema",
    "data",
    "defaults",
    "embedding_judge",
    "errors",
    "evaluation",
    "fingerprint",
    "formats",
    "init",
    "inputs",
    "inputs.assistants",
    "inputs.audits",
    "inputs.base",
    "inputs.data",
    "inputs.evaluate",
    "inputs.gaming",
    "inputs.helpers",
    "inputs.judges",
    "inputs.plan",
    "inputs.probes",
    "inputs.serve",
    "inputs.verdict",
    "judges",
    "layout",
    "machine",
    "manifest",
    "baselines",
    "output",
    "parallel",
    "preflight",
    "probes",
    "probes.gaming",
    "probes.items",
    "probes.personas",
    "probes.sensitivity",
    "probes.shifts",
    "probes.swap",
    "probes.tables",
    "prompts",
    "paper",
    "runs",
    "stats",
    "stats.agreement",
    "stats.multiplicity",
    "stats.paired",
    "stats.permutation",
    "stats.significance",
    "verdict",
    "stats.proportions",
    "stats.reliability",
    "stats.resample",
    "swaps",
    "systems",
    "texts",
    "textsource",
    "timing",
    "jobscript",
    "questions",
    "stats.leaderboard",
    "jury",
    "stats.redundancy",
]
"""The science modules: every module outside the LLM side below."""
LLM_SIDE = ("llm", "llm_judge", "rankers", "assistants.job", "probes.job", "plan")
"""The LLM call path, its callers (the LLM judge, the rankers, the assistants' and the probes'
LLM jobs) and the plan of their calls. Of these, only ``llm`` may call into litellm."""


def module_name(path: Path, src: Path = SRC) -> str:
    parts = path.relative_to(src).with_suffix("").parts
    parts = parts[:-1] if parts[-1] == "__init__" else parts
    return ".".join(parts) or "voirdire"


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def on_llm_side(name: str) -> bool:
    return any(name == side or name.startswith(f"{side}.") for side in LLM_SIDE)


def heavy_imports(source: str) -> list[str]:
    """Every import of litellm, torch or snakemake in ``source``, at any depth (lazy ones too)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found += [f"line {node.lineno}: {n}" for n in names if n.split(".")[0] in HEAVY]
    return found


def litellm_uses(source: str) -> list[str]:
    """Every way ``source`` reaches litellm itself: importing it, importing or calling
    ``import_litellm`` (or its module ``llm.env``), or a name ``litellm``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name.split(".")[0] == "litellm"]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.split(".")[0] == "litellm" or module.endswith("llm.env") or (node.level and module == "env"):
                found.append(f"line {node.lineno}: from {'.' * node.level}{module} import ...")
            found += [f"line {node.lineno}: imports import_litellm" for a in node.names if a.name == "import_litellm"]
        elif isinstance(node, ast.Name) and node.id in ("litellm", "import_litellm"):
            found.append(f"line {node.lineno}: {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr == "import_litellm":
            found.append(f"line {node.lineno}: .import_litellm")
    return found


# f"{R}/..." : a result path written out in a rule instead of asked of Layout (L.something(...))
_HAND_BUILT = re.compile(r"""\bf(["'])\{R\}/.*?\1""")


def hand_built_paths(rules_text: str) -> list[str]:
    """Every result path a rule file builds by hand (an f-string under ``{R}/``), with its line."""
    return [
        f"line {number}: {match.group(0)}"
        for number, line in enumerate(rules_text.splitlines(), 1)
        if not line.lstrip().startswith("#")
        for match in _HAND_BUILT.finditer(line)
    ]


# ----------------------------------------------------------------------------- litellm


def test_only_the_llm_package_imports_litellm():
    importers = {
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if re.search(r"^\s*(import litellm|from litellm)", path.read_text(), re.MULTILINE)
    }
    assert importers and all(p.startswith("llm/") for p in importers), importers


def test_nothing_outside_llm_calls_into_litellm():
    """Prices and token counts come from voirdire.llm (price_known, estimated_cost, count_tokens);
    no module or script outside llm/ imports litellm or is handed it by import_litellm."""
    files = [p for p in sorted(SRC.rglob("*.py")) if p.relative_to(SRC).parts[0] != "llm"]
    files += sorted(SCRIPTS.glob("*.py"))
    found = {p.relative_to(ROOT).as_posix(): litellm_uses(p.read_text(encoding="utf-8")) for p in files}
    assert not {p: uses for p, uses in found.items() if uses}


def test_the_litellm_check_catches_a_planted_call(tmp_path):
    planted = {
        "import litellm\n": 1,
        "def f():\n    from litellm import token_counter\n    return token_counter\n": 1,
        "from ..llm.env import import_litellm\n\nx = import_litellm()\n": 3,
        "from voirdire.llm import env\n\nx = env.import_litellm()\n": 1,
        "def cost(litellm, model):\n    return litellm.cost_per_token(model=model)\n": 1,
    }
    for text, at_least in planted.items():
        module = tmp_path / "science.py"
        module.write_text(text, encoding="utf-8")
        assert len(litellm_uses(module.read_text(encoding="utf-8"))) >= at_least, text
    assert litellm_uses("from ..llm import price_known\n\nx = price_known('m')\n") == []


def test_only_the_call_path_builds_a_semaphore():
    builders = [p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py") if "asyncio.Semaphore(" in p.read_text()]
    assert builders == ["llm/calls.py"]


# ----------------------------------------------------------------------------- the science core


def test_every_module_is_core_or_on_the_llm_side():
    found = modules()
    assert set(CORE) <= set(found), sorted(set(CORE) - set(found))
    unclassified = [m for m in found if m not in CORE and not on_llm_side(m)]
    assert not unclassified, f"add these to CORE (science) or LLM_SIDE: {unclassified}"
    assert not [m for m in CORE if on_llm_side(m)]


def test_the_science_core_imports_no_litellm_torch_or_snakemake():
    """Statically (no import of them anywhere in a core module, lazy ones included) and when the
    whole core is imported (nothing it imports at module level pulls them in)."""
    found = modules()
    static = {m: heavy_imports(found[m].read_text(encoding="utf-8")) for m in CORE}
    assert not {m: lines for m, lines in static.items() if lines}
    names = [m if m == "voirdire" else f"voirdire.{m}" for m in CORE]
    code = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        f"    heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "    if heavy:\n"
        "        print(name, heavy)\n"
        "        break\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_the_core_check_catches_a_planted_import(tmp_path):
    module = tmp_path / "science.py"
    module.write_text('"""A science module."""\n\nimport pandas as pd\nimport litellm\n', encoding="utf-8")
    assert heavy_imports(module.read_text(encoding="utf-8")) == ["line 4: litellm"]
    lazy = "def f():\n    import torch.nn\n    from snakemake.io import expand\n"
    assert heavy_imports(lazy) == ["line 2: torch.nn", "line 3: snakemake.io"]
    assert heavy_imports("import matplotlib\nfrom .llm import Call\n") == []


def import_graph(src: Path = SRC, package: str = "voirdire") -> dict[str, set[str]]:
    """Which modules of the package at ``src`` each of its modules imports (names as
    :func:`module_name` gives them), read from every ``import`` and ``from ... import`` in the
    file, at any depth: those inside a function or an ``if`` count as much as those at the top,
    since either runs when the code runs. Relative imports are resolved against the module's
    package; ``from p import x`` is an import of the module ``p.x`` when there is one, else of
    ``p``; an import of a name inside a module is an import of that module."""
    found = {module_name(path, src): path for path in sorted(src.rglob("*.py"))}
    dotted = {(package if name == "voirdire" else f"{package}.{name}"): name for name in found}
    graph: dict[str, set[str]] = {}
    for name, path in found.items():
        parts = [package, *name.split(".")] if name != "voirdire" else [package]
        here = parts if path.name == "__init__.py" else parts[:-1]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = here[: len(here) - node.level + 1] if node.level else []
                origin = ".".join([*base, *(node.module.split(".") if node.module else [])])
                targets.update(f"{origin}.{a.name}" if f"{origin}.{a.name}" in dotted else origin for a in node.names)
        graph[name] = set()
        for target in targets:
            while target and target not in dotted:  # a name inside a module: that module
                target = target.rpartition(".")[0]
            if target and dotted[target] != name:
                graph[name].add(dotted[target])
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles of ``graph``: each set of nodes that reach one another (a strongly
    connected component of more than one node, Tarjan's algorithm), sorted."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []
    for start in sorted(graph):
        if start in order:
            continue
        walk = [(start, iter(sorted(graph.get(start, ()))))]
        order[start] = low[start] = len(order)
        stack.append(start)
        while walk:
            node, following = walk[-1]
            step = next(following, None)
            if step is None:
                walk.pop()
                if walk:
                    low[walk[-1][0]] = min(low[walk[-1][0]], low[node])
                if low[node] == order[node]:
                    component = stack[stack.index(node) :]
                    del stack[stack.index(node) :]
                    if len(component) > 1:
                        cycles.append(sorted(component))
            elif step not in order:
                order[step] = low[step] = len(order)
                stack.append(step)
                walk.append((step, iter(sorted(graph.get(step, ())))))
            elif step in stack:
                low[node] = min(low[node], order[step])
    return sorted(cycles)


def unit_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """``graph`` between the top-level modules and packages (``assistants``, ``llm``, ``config``, ...)."""
    units: dict[str, set[str]] = {}
    for name, imported in graph.items():
        unit = name.split(".")[0]
        units.setdefault(unit, set()).update({other.split(".")[0] for other in imported} - {unit})
    return units


def test_no_module_of_voirdire_imports_itself_back():
    """No import cycle between modules, function-level imports included: a module never
    reaches itself through what it imports."""
    assert not import_cycles(import_graph())


def test_no_two_parts_of_voirdire_import_each_other():
    """No import cycle between packages (``assistants``, ``probes``, ``llm_judge``, ...) or
    top-level modules of voirdire, function-level imports included."""
    assert not import_cycles(unit_graph(import_graph()))


def test_the_cycle_check_catches_a_planted_cycle_through_a_function_level_import(tmp_path):
    package = tmp_path / "voirdire"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text('"""A package."""\n', encoding="utf-8")
    (package / "sub" / "__init__.py").write_text("", encoding="utf-8")
    (package / "sub" / "first.py").write_text("from . import second\n\nVALUE = 1\n", encoding="utf-8")
    lazy = "def value():\n    from .first import VALUE\n\n    return VALUE\n"
    (package / "sub" / "second.py").write_text(lazy, encoding="utf-8")
    (package / "leaf.py").write_text("import voirdire.sub.first\n", encoding="utf-8")
    graph = import_graph(package)
    assert graph["sub.first"] == {"sub.second"} and graph["sub.second"] == {"sub.first"}
    assert graph["leaf"] == {"sub.first"}
    assert import_cycles(graph) == [["sub.first", "sub.second"]]
    assert import_cycles(unit_graph(graph)) == []  # both in one package
    # the same cycle between two packages, by absolute imports
    (package / "other").mkdir()
    (package / "other" / "__init__.py").write_text("", encoding="utf-8")
    (package / "sub" / "second.py").write_text("def value():\n    from voirdire.other import thing\n", encoding="utf-8")
    (package / "other" / "thing.py").write_text("from ..sub.first import VALUE\n", encoding="utf-8")
    assert import_cycles(import_graph(package)) == [["other.thing", "sub.first", "sub.second"]]
    assert import_cycles(unit_graph(import_graph(package))) == [["other", "sub"]]
    # and none once the lazy import is gone
    (package / "sub" / "second.py").write_text("VALUE = 2\n", encoding="utf-8")
    assert import_cycles(import_graph(package)) == []


# ----------------------------------------------------------------------------- result paths


def test_the_path_check_catches_a_planted_hand_built_path():
    rule = (
        "rule planted:\n"
        "    input:\n"
        "        L.pairs(D, P),\n"
        "    output:\n"
        '        table=f"{R}/tables/{{provenance}}/planted.csv",\n'
        '    # f"{R}/in a comment" is not a path\n'
        "    log:\n"
        '        L.log("planted"),\n'
    )
    assert hand_built_paths(rule) == ['line 5: f"{R}/tables/{{provenance}}/planted.csv"']
    assert hand_built_paths('output:\n    L.table(P, "table1"),\n') == []


def test_rules_build_no_result_path_by_hand():
    found = {p.name: hand_built_paths(p.read_text(encoding="utf-8")) for p in sorted(RULES.glob("*.smk"))}
    found = {name: lines for name, lines in found.items() if lines}
    count = sum(map(len, found.values()))
    assert not found, f"{count} hand-built result paths in {len(found)} rule files: {found}"


# ----------------------------------------------------------------------------- package data


def test_templates_and_schema_are_package_data():
    from voirdire.config import SCHEMA
    from voirdire.prompts import DEFAULT_PROMPT

    assert DEFAULT_PROMPT.is_file() and "{query}" in DEFAULT_PROMPT.read_text()
    assert SCHEMA.is_file() and SCHEMA.parent == SRC
    pyproject = (SRC.parents[1] / "pyproject.toml").read_text()
    assert '"schema.yaml"' in pyproject and '"prompts/*.txt"' in pyproject


# ----------------------------------------------------------------------------- one statistics engine
AUDIT_PACKAGES = ("audits", "probes", "assistants", "paper")
RESAMPLING = re.compile(r"stats\.bootstrap|scipy\.stats import bootstrap|\.integers\(|\.choice\(|default_rng\(")


def own_resampling(source: str) -> list[str]:
    """Lines of an audit module that resample on their own (scipy's bootstrap, or a random
    generator drawing indices) instead of calling ``voirdire.stats``."""
    return [f"line {i}: {line.strip()}" for i, line in enumerate(source.splitlines(), 1) if RESAMPLING.search(line)]


# drawing which queries are labelled (calibration) or which pairs are probed is sampling a
# design, not resampling a statistic; these modules may draw for that
DESIGN_DRAWS = {"audits.calibration", "probes.items", "probes.personas", "probes.swap", "assistants.sample"}


def test_no_audit_module_draws_its_own_resamples():
    offenders = {}
    for name, path in modules().items():
        if name.split(".")[0] in AUDIT_PACKAGES and name not in DESIGN_DRAWS:
            found = own_resampling(path.read_text())
            if found:
                offenders[name] = found
    assert not offenders, f"resample through voirdire.stats, not by hand: {offenders}"


def test_the_resampling_checker_finds_a_planted_bootstrap():
    assert own_resampling("from scipy import stats\nci = stats.bootstrap((x,), np.mean)")
    assert own_resampling("rng = np.random.default_rng(1)\npicks = rng.integers(0, n, size=(b, n))")
    assert not own_resampling("from ..stats import query_mean_test\nrow = query_mean_test(values, queries)")
