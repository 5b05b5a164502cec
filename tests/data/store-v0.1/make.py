"""Write the v0.1 store files with voirdire 0.1.0's own code (run once, at commit a2dca7d).

VOIRDIRE_TEST_KEY=sk-x python tests/data/store-v0.1/make.py
"""

import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "support"))

from legacy_inputs import JUDGE, PAIRS, PASSAGES, QUERIES, RANK_DOCS, RANK_QUERY  # noqa: E402
from voirdire.engine import build_tasks, judge_all  # noqa: E402  (0.1.0 only)
from voirdire.loopback import LoopbackServer  # noqa: E402
from voirdire.store import Store  # noqa: E402

from voirdire.judges import LLMJudge  # noqa: E402
from voirdire.rankers.api import LiteLLMBackend  # noqa: E402
from voirdire.rankers.llm import prp_rank, rg_scores  # noqa: E402

with LoopbackServer() as server:
    judge = LLMJudge(api_base=server.url, **JUDGE)
    pairs = pd.DataFrame(PAIRS, columns=["query_id", "doc_id"])
    tasks = build_tasks(judge, pairs, QUERIES, PASSAGES)
    with Store(HERE / "judge.sqlite") as store:
        judge_all(judge, tasks, store, provenance="original", progress=False)
    settings = LLMJudge(name="api", model="openai/served", api_base=server.url, api_key_env="VOIRDIRE_TEST_KEY")
    backend = LiteLLMBackend(settings=settings, store_path=HERE / "ranker.sqlite", ranker="api")
    passages = [PASSAGES[d] for d in RANK_DOCS]
    rg_scores(backend, QUERIES[RANK_QUERY], passages)
    prp_rank(backend, QUERIES[RANK_QUERY], passages, variant="allpairs")
    print(len(server.log), "calls")
for name in ("judge.sqlite", "ranker.sqlite"):  # one file each: fold the WAL into the database
    import sqlite3

    with sqlite3.connect(HERE / name) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("PRAGMA journal_mode=DELETE")
