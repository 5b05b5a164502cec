"""Configuration: JSON-schema validation with defaults, then checks of meaning, then the Plan.

- :mod:`~voirdire.config.schema`: the schema (``voirdire/schema.yaml``, package data) fixes shapes
  and defaults, and is where every default a schema can state is set; :func:`validate_schema`
  fills them in, :func:`schema_default` reads one.
- :mod:`~voirdire.config.checks`: :func:`check` checks what a schema cannot (system names parse,
  files exist, a source has the keys it needs), section by section, and returns the Plan. It
  never changes the config it checks: what a section's defaults depend on (the systems, the
  judges) is resolved into new dicts (:func:`probes_from_config`, :func:`gaming_from_config`).
  Each section's checks live beside what builds its objects: :mod:`~voirdire.config.sections_systems`
  (datasets, rankers, runs, systems, oracles, measures), :mod:`~voirdire.config.sections_judges`
  (judges, assistants, variants), :mod:`~voirdire.config.sections_probes` (probes, gaming);
  :mod:`~voirdire.config.found` holds what they share (the errors of a pass, :func:`not_found`).
- :mod:`~voirdire.config.plan`: the :class:`Plan` the Snakefile's input functions read.

Every error is a :class:`~voirdire.errors.ConfigError` naming the config key, raised before any job
starts; both steps report every error they find at once (:class:`~voirdire.errors.ConfigErrors`,
one line each). Keys are written as :func:`voirdire.errors.item_key` says: ``judges[NAME].kind``,
``systems[Swap[1]]``, ``datasets.dl19.qrels``, ``evaluation.measures[0]``.

Relative paths in a config resolve from the working directory (where ``snakemake`` or
``voirdire`` runs), not from the config file's folder; a "not found" error says so, and
names the file when it exists relative to the config file instead.
"""

from .checks import check, load_plan
from .found import not_found
from .plan import Plan, labels_only
from .schema import SCHEMA, as_plain, config_hash, load, schema_default, validate_schema
from .sections_judges import POINTWISE
from .sections_probes import GAMING_KINDS, gaming_from_config, probes_from_config
from .sections_systems import FILE_KEYS, NEEDS_SYSTEMS, REQUIRED, TEXT_JUDGES

__all__ = [
    "FILE_KEYS",
    "GAMING_KINDS",
    "NEEDS_SYSTEMS",
    "POINTWISE",
    "REQUIRED",
    "SCHEMA",
    "TEXT_JUDGES",
    "Plan",
    "as_plain",
    "check",
    "config_hash",
    "gaming_from_config",
    "labels_only",
    "load",
    "load_plan",
    "not_found",
    "probes_from_config",
    "schema_default",
    "validate_schema",
]
