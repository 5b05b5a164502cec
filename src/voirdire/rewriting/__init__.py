"""Assistants rewrite the sampled passages (SPEC section 5): live through the LLM call path, or
recorded from a file. See :mod:`voirdire.rewriting.job`."""
