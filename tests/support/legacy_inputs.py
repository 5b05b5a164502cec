"""Inputs of the stores in ``tests/data/store-v0.1/``, written by voirdire 0.1.0 (commit a2dca7d).

The stores were made by ``tests/data/store-v0.1/make.py`` with the release's own code
(``voirdire.engine`` and ``voirdire.rankers.api``) against the loopback server. Tests rerun
the same judge and rankers on these inputs with today's code and assert that no call is
made: paid judgments are never asked for again because a key changed.
"""

QUERIES = {"q1": "what causes tides in the ocean", "q2": "how do vaccines train the immune system"}
PASSAGES = {
    "d1": "Tides are caused mainly by the gravitational pull of the moon on the oceans.",
    "d2": "The sun also pulls on the oceans, so spring tides happen at new and full moon.",
    "d3": "Ocean liners cross the Atlantic in about a week.",
    "d4": "Vaccines expose the immune system to a harmless piece of a pathogen.",
    "d5": "Memory B cells formed after vaccination respond quickly to later infection.",
    "d6": "The first vaccine was developed by Edward Jenner in 1796.",
}
PAIRS = [("q1", "d1"), ("q1", "d2"), ("q1", "d3"), ("q2", "d4"), ("q2", "d5"), ("q2", "d6")]
JUDGE = {"name": "loop", "model": "openai/loopback", "samples": 2, "api_key_env": "VOIRDIRE_TEST_KEY"}
RANK_QUERY = "q1"
RANK_DOCS = ["d1", "d2", "d3"]
