"""Judge audits that need only labels (docs/audits.md; the label, family and length tests of practitioners' LLM-judge checklists, and a three-family judge-panel study, 2026).

They run on every kind of judge -- live LLM judges, recorded label sets, null baselines --
so a user with nothing but published judge outputs can audit them without a call:

* :mod:`.labels` -- the label test: confusion, agreement, missed failures, false alarms;
* :mod:`.panel` -- leave-one-judge-out, and family self-preference corrected for strictness;
* :mod:`.length` -- length bias within human grades, and Simpson's paradox.

Each audit is a pure function on tables, tested by planting a bias of known sign and size
(inject -> recover) and checking that a clean judge is not flagged.
"""
