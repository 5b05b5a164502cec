"""The Plan: what the workflow will compute, derived once from a checked config
(:func:`voirdire.config.checks.check`); the Snakefile's input functions read it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..assistants.declarations import ORIGINAL, Assistant
from ..errors import ConfigError
from ..judges import Judge
from ..runs import Recorded
from ..systems import BM25, Oracle, Ranker, System


def labels_only(spec: dict) -> bool:
    """A local dataset without a corpus: topics and qrels only, no passage texts."""
    return (
        spec["source"] == "local"
        and "corpus" not in spec
        and "prebuilt" not in spec.get("index", {})
        and "texts" not in spec
    )


def fetched_texts(spec: dict) -> bool:
    """A dataset whose texts are fetched for its needed pairs only (``texts:``, voirdire.textsource):
    it has texts but no BM25 pool."""
    return "texts" in spec


@dataclass(frozen=True)
class Plan:
    """What the workflow will compute, derived once from a validated config.

    ``config`` is that config with each section's defaults resolved
    (:func:`~voirdire.config.checks.probes_from_config`, :func:`~voirdire.config.checks.gaming_from_config`):
    a new dict, the config checked is never changed."""

    config: dict
    systems: tuple[System, ...]
    judges: dict[str, tuple[Judge, ...]] = field(default_factory=dict)
    assistants: tuple[Assistant, ...] = ()
    padders: tuple[Assistant, ...] = ()  # the pad probe's LLM padders
    notes: tuple[str, ...] = ()  # what the config check chose and a user should read (logged)

    @property
    def probes(self) -> dict | None:
        """The probes section, its defaults resolved (None without one)."""
        return self.config.get("probes")

    @property
    def gaming(self) -> dict | None:
        """The gaming section, its defaults resolved (None without one)."""
        return self.config.get("gaming")

    @property
    def has_systems(self) -> bool:
        """Whether ``systems:`` lists any: without, the judges' label sets are audited alone (on the
        human-judged pairs; docs/configuration.md, "Label sets without runs")."""
        return bool(self.systems)

    @property
    def recorded(self) -> list[Recorded]:
        """The recorded systems (``runs:``) listed under ``systems:``."""
        return [s for s in self.systems if isinstance(s, Recorded)]

    def labels_only(self, dataset: str) -> bool:
        return labels_only(self.config["datasets"][dataset])

    def fetched_texts(self, dataset: str) -> bool:
        return fetched_texts(self.config["datasets"][dataset])

    @property
    def base(self) -> System:
        """The run the oracles reorder (``oracles.base``): BM25 or a recorded run."""
        name = self.config["oracles"]["base"]
        if name == "BM25":
            return BM25()
        return next(s for s in self.recorded if s.name == name)

    @property
    def depth(self) -> int:
        """Every system is cut at this depth before any measure (``evaluation.depth``, else
        ``bm25.depth``)."""
        return self.config["evaluation"].get("depth") or self.config["bm25"]["depth"]

    @property
    def measures(self) -> list[str]:
        return list(self.config["evaluation"]["measures"])

    @property
    def probe_judges(self) -> list[str]:
        """The LLM judges the probes ask again (none without a ``probes`` section)."""
        probes = self.probes
        if probes is None:
            return []
        llm = [j.name for j in next(iter(self.judges.values()), ()) if j.kind == "llm"]
        return [name for name in llm if name in probes.get("judges", llm)]

    @property
    def gaming_judges(self) -> dict[str, list[str]]:
        """The judges the gamed systems are put to -> their methods (none without ``gaming``)."""
        return dict((self.gaming or {}).get("judges") or {})

    def padder(self, name: str) -> Assistant:
        for padder in self.padders:
            if padder.name == name:
                return padder
        raise ConfigError(f"no LLM padder {name!r}", key="probes.pad.assistants")

    @property
    def provenances(self) -> list[str]:
        """``original``, then ``rewritten-{assistant}`` for every assistant."""
        return [ORIGINAL] + [a.provenance for a in self.assistants]

    def assistant(self, name: str) -> Assistant:
        for assistant in self.assistants:
            if assistant.name == name:
                return assistant
        raise ConfigError(f"no assistant {name!r}", key="assistants")

    @property
    def rewriting_rankers(self) -> list[Ranker]:
        """The pointwise rankers of the assistants experiment (Figure 5, experiment 3)."""
        names = self.config.get("rewriting", {}).get("rankers", []) if self.assistants else []
        return [r for r in self.rankers if r.name in names]

    @property
    def datasets(self) -> list[str]:
        return list(self.config["datasets"])

    @property
    def oracles(self) -> list[Oracle]:
        return [s for s in self.systems if not isinstance(s, (BM25, Ranker, Recorded))]

    @property
    def rankers(self) -> list[Ranker]:
        return [s for s in self.systems if isinstance(s, Ranker)]

    @property
    def draws(self) -> int:
        """Runs per oracle: one for a stable tie-break, R for a random one."""
        cfg = self.config["oracles"]
        return cfg["draws"] if cfg["tie_break"] == "random" else 1

    def run_names(self, system: System) -> list[str]:
        """Run file stems for a system (``swap-1~r0`` .. for random tie-break draws)."""
        if isinstance(system, (BM25, Ranker, Recorded)) or self.draws == 1:
            return [system.slug]
        return [f"{system.slug}~r{draw}" for draw in range(self.draws)]

    def judge_names(self, dataset: str) -> list[str]:
        return [judge.name for judge in self.judges[dataset]]

    def judge(self, dataset: str, name: str) -> Judge:
        for judge in self.judges[dataset]:
            if judge.name == name:
                return judge
        raise ConfigError(f"no judge {name!r} for dataset {dataset!r}", key="judges")

    def system(self, slug: str) -> System:
        for system in self.systems:
            if system.slug == slug:
                return system
        raise ConfigError(f"no system with slug {slug!r}", key="systems")
