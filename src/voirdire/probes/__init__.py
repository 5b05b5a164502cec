"""Judge probes that ask again: swap, pad, injection, persona and prompt sensitivity.

:mod:`.items` draws what each probe asks, :mod:`.job` asks it (the probes' LLM job, and the pad
test's LLM padders), :mod:`.tables` turns the answers into the probes' tables, with the
definitions in :mod:`.swap`, :mod:`.shifts`, :mod:`.personas` and :mod:`.sensitivity`.
"""
