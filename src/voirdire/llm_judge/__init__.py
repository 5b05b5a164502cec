"""Live LLM judges: templates, the calls a judge needs, aggregation of samples, the judging job.

A judge's calls go through the one call path (:mod:`voirdire.llm`) with purpose ``judge``
and an acceptance rule that the grade parses (:mod:`.parsing`); this package only says
which calls a judge needs (:mod:`.tasks`), turns stored answers into labels
(:mod:`.aggregate`) and runs a whole job (:mod:`.job`). What judging will cost is
:mod:`voirdire.plan`; the judges that make no LLM call are :mod:`voirdire.baselines` and
:mod:`voirdire.embedding_judge`.
"""
