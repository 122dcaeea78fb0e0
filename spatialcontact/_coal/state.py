"""Per-shape Coal state: the transform, the geometry and the per-partner caches of queries.

Each leaf shape keeps, per partner shape, the Coal functor, request and result of every query
kind it has asked of that pair. The caches are keyed by the partner's serial (``_uid``, never
reused in a process) and hold nothing that keeps the partner alive: a partner that is collected
takes its entries out of every cache first (:func:`drop_partner`, called from its finaliser),
before its geometry is freed (the functors hold raw pointers to both geometries).

Threads
-------
Coal holds the GIL through each call, but a query reads its result after the call returns, so
two threads sharing one result object could read each other's answers. A cache entry belongs to
the thread that made it (its last field is that thread's ident); another thread asking the same
pair gets an entry of its own from :func:`thread_entry`. Scenes, whose Coal managers are shared
state, run each query under :data:`LOCK`.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any

import coal
import numpy as np

from .. import _native

__all__ = [
    "CACHE_LIMIT",
    "LOCK",
    "PAIR_CACHES",
    "UNPICKLED_STATE",
    "drop_partner",
    "forget",
    "init_state",
    "pair_call",
    "remember",
    "thread_entry",
]

LOCK = threading.RLock()
"""Held by scene queries and by moves of groups, so no thread sees a scene or group half-done."""

CACHE_LIMIT = 4096
"""A shape's pair cache of one query kind holds at most this many partners: when it is full, the
older half is dropped (a table under 1,000 resting objects keeps all of their pairs)."""

PAIR_CACHES = ("_collide_pairs", "_distance_pairs", "_contact_pairs")
"""The per-partner caches of each shape, one per query kind."""

UNPICKLED_STATE = (
    "_tf",
    "_buffer",
    "_geometry",
    *PAIR_CACHES,
    "_thread_pairs",
    "_cached_by",
    "_bounds_cache",
    "_observers",
    "_plan",
    "_leaf_cache",
    "_slot_cache",
    "_batch",
)
"""Per-shape attributes that hold Coal objects, caches or observers: never pickled or copied."""


def init_state(shape: Any) -> None:
    """Give a new (or unpickled) shape its empty Coal state and caches."""
    shape._tf = coal.Transform3s()
    shape._buffer = np.eye(4)  # a leaf's pose T, copied in when set (see ShapeBase.T)
    shape._geometry = None
    shape._collide_pairs = {}
    shape._distance_pairs = {}
    shape._contact_pairs = {}
    shape._thread_pairs = {}
    shape._cached_by = weakref.WeakSet()
    shape._bounds_cache = None
    weakref.finalize(shape, drop_partner, shape._cached_by, shape._uid)


def drop_partner(hosts: weakref.WeakSet[Any], ident: int) -> None:
    """Take the entries naming the shape of serial ``ident`` out of the caches of ``hosts``."""
    for host in list(hosts):
        for name in PAIR_CACHES:
            getattr(host, name).pop(ident, None)
        threads = host._thread_pairs
        if threads:
            for key in [key for key in threads if key[1] == ident]:
                del threads[key]
    hosts.clear()


def forget(shape: Any) -> None:
    """Drop every cached pair that involves ``shape`` (its geometry changed or went away)."""
    ident = shape._uid
    for name in PAIR_CACHES:
        getattr(shape, name).clear()
    shape._thread_pairs.clear()
    drop_partner(shape._cached_by, ident)


def remember(a: Any, b: Any, cache: dict[int, Any], entry: tuple[Any, ...]) -> None:
    """Keep ``entry`` (whose last field is the current thread's ident) for the pair ``a``, ``b``."""
    if len(cache) >= CACHE_LIMIT:
        for old in list(itertools.islice(cache, CACHE_LIMIT // 2)):
            del cache[old]
    cache[b._uid] = entry
    b._cached_by.add(a)


def pair_call(functor: Any, tf1: Any, tf2: Any, request: Any, result: Any) -> Any:
    """The cached call of one pair query: ``call()`` clears ``result`` and returns
    ``functor(tf1, tf2, request, result)``.

    For Coal's own functors it is compiled (:class:`~spatialcontact._native.CollideCall`,
    :class:`~spatialcontact._native.DistanceCall`: no Boost.Python dispatch, about 0.05 µs
    where the two Python calls cost 0.3); the workarounds of ``quirks.collider`` are called
    from Python.
    """
    kind = type(functor)
    if kind is coal.ComputeCollision:
        return _native.CollideCall(functor, tf1, tf2, request, result)
    if kind is coal.ComputeDistance:
        return _native.DistanceCall(functor, tf1, tf2, request, result)

    def call() -> Any:
        result.clear()
        return functor(tf1, tf2, request, result)

    return call


def thread_entry(a: Any, b: Any, kind: str, make: Any) -> tuple[Any, ...]:
    """The cache entry of the pair ``a``, ``b`` for the calling thread, made by ``make(a, b)``
    (which returns the entry, its last field the thread ident) when there is none.

    The first thread to ask a pair gets the entry in the plain cache (the fast path reads it);
    other threads keep theirs in ``a._thread_pairs``.
    """
    cache: dict[int, Any] = getattr(a, kind)
    entry = cache.get(b._uid)
    me = threading.get_ident()
    if entry is not None and entry[-1] == me:
        return entry
    if entry is None:
        entry = make(a, b)
        remember(a, b, cache, entry)
        return entry
    key = (kind, b._uid, me)
    entry = a._thread_pairs.get(key)
    if entry is None:
        entry = make(a, b)
        if len(a._thread_pairs) >= CACHE_LIMIT:
            a._thread_pairs.clear()
        a._thread_pairs[key] = entry
        b._cached_by.add(a)
    return entry
