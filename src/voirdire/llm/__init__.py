"""The LLM call path: endpoints, requests, the one function that calls, the store, the local model.

The only package of voirdire that imports litellm (lazily); what the others need of it, prices
and token counts, is :func:`price_known`, :func:`estimated_cost` and :func:`count_tokens`.
Every LLM call -- a judge's grade, a ranker's preference, an assistant's rewrite, a probe's
second ask -- is a :class:`Call` filled into a :class:`Store` by :func:`fill_store` /
:func:`call_all`. What voirdire 0.1 stored answers today's requests through :mod:`.legacy`
(its keys and its store table; removed in 1.0).
"""

from .calls import (
    Accept,
    Answer,
    Call,
    CallsIncomplete,
    RunStats,
    Verdict,
    accept_any,
    answered,
    call_all,
    count_tokens,
    estimated_cost,
    fill_store,
    price_known,
    records,
)
from .endpoint import Endpoint
from .request import Request
from .store import Record, Store

__all__ = [
    "Accept",
    "Answer",
    "Call",
    "CallsIncomplete",
    "Endpoint",
    "Record",
    "Request",
    "RunStats",
    "Store",
    "Verdict",
    "accept_any",
    "answered",
    "call_all",
    "count_tokens",
    "estimated_cost",
    "fill_store",
    "price_known",
    "records",
]
