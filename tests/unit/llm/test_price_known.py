"""Whether a model has a known price is kept in its store when its calls are priced and carried
with copied answers, so that a judging job that asks nothing never imports litellm for it, and
says what litellm says: against a real HTTP server on 127.0.0.1 and real SQLite stores."""

import json
import sqlite3
import subprocess
import sys

import pandas as pd
import pytest
from support.judging import judging_job
from support.loopback import LoopbackServer

from voirdire.judges import LLMJudge
from voirdire.llm import Endpoint, Store, price_known
from voirdire.llm.calls import _cost_map, _litellm, has_price
from voirdire.llm.store import PRICE_KNOWN

PAIRS = pd.DataFrame({"query_id": ["q0", "q0", "q1", "q1"], "doc_id": ["d0", "d1", "d2", "d3"]})
TOPICS = {"q0": "what is topic zero", "q1": "what is topic one"}
TEXTS = {f"d{i}": f"passage {i} says something about topic {i % 2}" for i in range(4)}
MODELS = ("openai/loopback", "openai/gpt-4o-mini")
"""One model litellm has no price for (a self-hosted one), one its bundled cost map prices."""

COPY_JOB = """
import json, sys
import pandas as pd
from voirdire.judges import LLMJudge
from voirdire.llm import Endpoint
from voirdire.llm_judge.job import run_judging_job
base, folder, texts, topics, pairs, *models = sys.argv[1:]
texts, topics, pairs = json.loads(texts), json.loads(topics), pd.DataFrame(json.loads(pairs))
found = {}
for n, model in enumerate(models):
    judge = LLMJudge(name="j", endpoint=Endpoint(model, api_base=base, api_key_env="VOIRDIRE_TEST_KEY"))
    out = f"{folder}/copy{n}"
    result = run_judging_job(judge, pairs=pairs, texts=texts, topics=topics, store_path=out + ".sqlite",
                             provenance="original", qrels_out=out + ".txt", raw_out=out + ".parquet",
                             summary_out=out + ".json", progress=False, seeds=[f"{folder}/seed{n}.sqlite"])
    found[model] = [result["price_known"], result["calls_this_run"]]
print(json.dumps({"litellm": "litellm" in sys.modules, "jobs": found}))
"""


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("VOIRDIRE_TEST_KEY", "sk-test-not-a-key")
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def judge_into(server, model, tmp_path, name, **options):
    judge = LLMJudge(name="j", endpoint=Endpoint(model, api_base=server.url, api_key_env="VOIRDIRE_TEST_KEY"))
    return judging_job(judge, tmp_path, name, pairs=PAIRS, texts=TEXTS, topics=TOPICS, **options)


def kept(store_path, model):
    with Store(store_path) as store:
        return store.price_known(model, _cost_map())


def test_the_price_kept_in_the_store_is_litellms_and_a_copying_job_reads_it_without_litellm(tmp_path):
    litellm_says = {model: has_price(_litellm(), model) for model in MODELS}
    assert litellm_says == {"openai/loopback": False, "openai/gpt-4o-mini": True}  # the two cases differ
    with LoopbackServer() as server:
        for n, model in enumerate(MODELS):
            asked = judge_into(server, model, tmp_path, f"seed{n}")
            assert asked["calls_this_run"] == len(PAIRS) and asked["price_known"] is litellm_says[model]
            assert kept(tmp_path / f"seed{n}.sqlite", model) is litellm_says[model]  # kept when the calls were priced
        assert len(server.log) == len(MODELS) * len(PAIRS)
        # jobs that copy every answer from those finished stores, in a fresh process: no call, no litellm
        args = [server.url, str(tmp_path), json.dumps(TEXTS), json.dumps(TOPICS), PAIRS.to_json(orient="records")]
        done = subprocess.run([sys.executable, "-c", COPY_JOB, *args, *MODELS], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        copied = json.loads(done.stdout.strip().splitlines()[-1])
        assert copied == {"litellm": False, "jobs": {model: [litellm_says[model], 0] for model in MODELS}}
        for n, model in enumerate(MODELS):
            assert kept(tmp_path / f"copy{n}.sqlite", model) is litellm_says[model]  # carried with the answers
            # a seed that cannot say (written before prices were kept): litellm is asked, and its answer kept
            with sqlite3.connect(tmp_path / f"seed{n}.sqlite") as db:
                assert db.execute(f"DELETE FROM meta WHERE name LIKE '{PRICE_KNOWN}%'").rowcount == 1
            old = judge_into(server, model, tmp_path, f"old{n}", seeds=[tmp_path / f"seed{n}.sqlite"])
            assert old["calls_this_run"] == 0 and old["price_known"] is litellm_says[model]
            assert kept(tmp_path / f"old{n}.sqlite", model) is litellm_says[model]
        assert len(server.log) == len(MODELS) * len(PAIRS)  # the copies asked nothing


def test_a_price_is_kept_per_cost_map_and_never_for_one_fetched_from_the_network(tmp_path, monkeypatch):
    model = "openai/gpt-4o-mini"
    with Store(tmp_path / "s.sqlite") as store:
        assert store.price_known(model, _cost_map()) is None and price_known(model, store) is True
        assert store.price_known(model, _cost_map()) is True
        assert store.price_known(model, "litellm 0.0.0 bundled") is None  # another litellm's map: not known here
        assert store.price_known("openai/loopback", _cost_map()) is None
        monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "False")
        assert _cost_map() is None  # a map fetched at import time can change between runs
        before = store.meta()
        assert price_known("openai/loopback", store) is False and store.meta() == before
