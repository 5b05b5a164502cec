"""Every audit from labels, for every dataset, as named tables: what the audits job computes.

The workflow's ``audits`` script reads the files, builds one :class:`DatasetInputs` per dataset,
calls :func:`audit_tables` and writes each table and draws each figure as its audit declares them.
Every audit is declared beside its computation (:mod:`voirdire.audits.registry`: the label test in
:mod:`voirdire.audits.labels`, self-preference in :mod:`voirdire.audits.panel`, ...); this module
gives each the :class:`~voirdire.audits.registry.Context` of every dataset and gathers their rows,
so it is unit-tested on small frames (``tests/unit/audits/test_audits_run.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

import pandas as pd

from ..evaluation import MEASURE, evaluate_systems_under
from ..judges import HUMAN, Scale, restrict
from .registry import Context, load


@dataclass
class DatasetInputs:
    """What the audits of one dataset read: every judge's scale, kind and family (humans
    first), the needed pairs, each judge's labels of them, the systems' runs, the base run the
    judges rerank, the texts (empty for a labels-only dataset), the topics, every judge's
    per-query scores under the primary measure (columns judge, system, query_id, ndcg), and
    each judge's label sets for the drift audit (judge -> name -> qrels; two or more).

    No systems (no runs, no base run): the audits of labels alone run (label test, leave one
    judge out on labels, length, drift without tau); those of systems have no row."""

    judges: Mapping[str, Mapping]
    pairs: pd.DataFrame
    labels: Mapping[str, pd.DataFrame]
    runs: Mapping[str, list[pd.DataFrame]]
    base: pd.DataFrame | None
    topics: Mapping[str, str]
    per_query: pd.DataFrame
    texts: Mapping[str, str] = field(default_factory=dict)
    label_sets: Mapping[str, Mapping[str, pd.DataFrame]] = field(default_factory=dict)
    pool_per_query: pd.DataFrame | None = None
    """The systems' per-query scores under ``human@pool`` (the columns of ``per_query``), the
    reference of the judges' leaderboard's tau; None: the humans' own scores."""

    def scale(self, judge: str) -> Scale:
        meta = self.judges[judge]
        return Scale(meta["min"], meta["max"], meta["binary_threshold"])


def all_tables() -> tuple[str, ...]:
    """Every audit table (those written and those behind a figure only), each registered audit's in turn."""
    return tuple(t.name for a in load().values() for t in a.tables)


def audit_tables(
    datasets: Mapping[str, DatasetInputs],
    *,
    system_families: Mapping[str, str | None],
    measure: str = str(MEASURE),
    seed: int = 42,
    alpha: float = 0.05,
    calibration: Mapping[str, object] | None = None,
    depth: int | None = None,
    ties: str = "trec_eval",
    constructed: Sequence[str] | None = None,
    settings: Mapping[str, Mapping[str, object]] | None = None,
) -> dict[str, pd.DataFrame]:
    """Every registered audit's tables (:func:`all_tables`, each with a ``dataset`` column first):
    each audit (:mod:`voirdire.audits.registry`) of each dataset, with its ``settings``
    (``audits.<name>``; absent: its computation's defaults); one that needs systems has no row on a
    dataset without them. ``calibration`` is the calibration audit's settings (``ks``, ``draws``;
    :mod:`voirdire.audits.calibration`), over ``settings["calibration"]``.

    Every score an audit computes itself (the judges as rankers, the systems under each drift
    label set) is computed as Table 2's are: ``measure`` on every system cut at ``depth`` (the
    evaluation depth; None: uncut), binarized at the scoring judge's ``binary_threshold``. The
    length across systems is measured on the documents ``measure`` scores: each run cut at
    ``depth``, judged documents only for a judged-only measure, then the measure's cutoff, all
    in trec_eval's order.

    The judges' leaderboard ranks them by tau over the systems the user brought: every system of
    ``system_families`` but ``constructed`` (default: those of the family ``oracle``, Perfect and
    the swaps, as :func:`voirdire.systems.family_of` files them)."""
    registered = load()
    settings = settings or {}
    if constructed is None:
        constructed = [s for s, family in system_families.items() if family == ORACLE_FAMILY]
    user = [s for s in system_families if s not in set(constructed)]
    if calibration is not None:  # the calibration audit's settings, as a keyword of their own
        settings = {**settings, "calibration": {**settings.get("calibration", {}), **calibration}}
    rows: dict[str, list] = {name: [] for name in all_tables()}
    for dataset, data in datasets.items():
        others = [j for j in data.judges if j != HUMAN]
        human = restrict(data.labels[HUMAN], data.pairs)  # human@pool: the human labels of the needed pairs
        # systems under several label sets, as Table 2 scores them (every run cut at the evaluation
        # depth, the measure binarized at each label set's judge's threshold): the audits' scorer
        under_each = partial(evaluate_systems_under, query_ids=data.topics, measure=measure, depth=depth, ties=ties)
        systems = bool(data.runs)
        context = Context(
            dataset=dataset,
            data=data,
            human=human,
            judges=others,
            user=user,
            system_families=system_families,
            score=under_each,
            depth=depth,
            measure=measure,
            ties=ties,
            seed=seed,
            alpha=alpha,
        )
        for name, declared in registered.items():
            if declared.systems and not systems:
                continue
            context.settings = dict(settings.get(name, {}))
            for table, found in declared.compute(context).items():
                rows[table] += _with_dataset(found, dataset)
    tables = {}
    for name, found in rows.items():
        if not found:
            tables[name] = pd.DataFrame(columns=_declared_columns(registered, name))
            continue
        frame = pd.concat([f if isinstance(f, pd.DataFrame) else pd.DataFrame([f]) for f in found], ignore_index=True)
        tables[name] = frame[["dataset"] + [c for c in frame.columns if c != "dataset"]]
    return tables


ORACLE_FAMILY = "oracle"
"""The family :func:`voirdire.systems.family_of` gives the constructed systems (Perfect, the swaps)."""


def _with_dataset(found: pd.DataFrame | list, dataset: str) -> list:
    """An audit's rows of one table on one dataset (a frame, or a list of frames and row dicts),
    each with its ``dataset``: what the rows of the table gather, concatenated as they come."""
    if isinstance(found, pd.DataFrame):
        return [found.assign(dataset=dataset)]
    return [{"dataset": dataset, **row} if isinstance(row, Mapping) else row.assign(dataset=dataset) for row in found]


def _declared_columns(registered, name: str) -> list[str]:
    """A table's columns when no dataset has a row, as its audit declares them."""
    return next(list(t.columns) for declared in registered.values() for t in declared.tables if t.name == name)
