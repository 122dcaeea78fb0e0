"""Chunked work over many items, serially or on any ``concurrent.futures`` executor.

:func:`iter_chunks` cuts a sequence of items (an array of poses, of robot configurations, ...)
into chunks, applies ``function(payload, chunk)`` to each and yields the results in input
order; :func:`map_chunks` collects them in a list. The batch queries of
:mod:`spatialcontact.batch` run on it, and so can any other many-items computation.

Serially (no executor) the function gets the caller's own ``payload``. With an executor, the
payload is pickled once, in the caller, and reaches each worker once: a Dask executor's
client scatters it to every worker, a ``ProcessPoolExecutor``'s workers read it from a
temporary file, any other executor gets it with each task. Every worker thread unpickles it
once and keeps it for the following chunks, and for later calls with the same payload (the
same pickle). Each chunk is a separate task, and at most a few tasks per worker are in
flight, so a long run holds only a few chunks of results at a time.

The chunks of a large array of items (1 MiB or more) go to workers on this machine (a
process pool's, or a Dask cluster's whose workers all have a loopback address) through shared
memory rather than with their tasks: the caller writes each chunk into a file in
``/dev/shm``, in one of as many slots as there are tasks in flight, and the task names its
slot. Sending 128 MiB of poses through Dask costs more than answering them. A worker that
finds no such file (it runs elsewhere) says so, and its chunk is sent again with the task.
The file is removed when the call ends; one left by a caller that was killed is removed by the
next call that makes one.

An exception raised by ``function`` is located: the failing chunk is halved while a half
fails, and a :class:`BatchError` naming the global index of the item that fails (and the
original error) is raised in the caller.
"""

from __future__ import annotations

import collections
import concurrent.futures
import glob
import hashlib
import importlib
import ipaddress
import math
import os
import pickle
import shutil
import socket
import sys
import tempfile
import threading
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple, Protocol, TypeVar

import numpy as np

from .._validate import count, describe, flag, text
from ..errors import ShapeTypeError, SpatialContactError

__all__ = ["DEFAULT_CHUNK_SIZE", "BatchError", "Items", "iter_chunks", "map_chunks"]

DEFAULT_CHUNK_SIZE = 16384
"""Items per chunk when no executor is given and no ``chunk_size`` either."""

_EXECUTOR_CHUNKS = (256, 65536)
"""The range of the default chunk size with an executor (about four chunks per worker)."""

_TASKS_PER_WORKER = 4
"""Tasks kept in flight per worker, so that none waits for the next one to arrive (a Dask
task takes about 25 ms from submission to result on a 2-core machine)."""

_KEPT_PAYLOADS = 8
"""Unpickled payloads a worker process keeps (one per thread and payload, the latest ones)."""

_SHARED_DIRECTORY = "/dev/shm"
"""Where the chunks of a large array of items are left for workers on this machine: memory
(Linux's tmpfs), not a disk. Without it, chunks go with their tasks."""

_SHARED_MIN_BYTES = 1 << 20
"""An array of items at least this large reaches workers on this machine by shared memory."""

R = TypeVar("R")


class Items(Protocol):
    """What can be cut into chunks: a sized sequence whose slices are chunks (an ndarray)."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: slice, /) -> Any: ...


class BatchError(SpatialContactError, ValueError):
    """An item of a batch (a pose, a configuration) could not be processed.

    Raised in the caller, also when the item failed in a worker process.

    Parameters
    ----------
    message : str
        What failed: the message names the item's index and the original error.
    index : int or None
        Index of the item in the whole batch (a row of the poses), or None when the failure
        cannot be pinned to one item (the chunk failed as a whole, or the executor did).

    Attributes
    ----------
    index : int or None
        As given.
    """

    def __init__(self, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (str(self), self.index))


# --------------------------------------------------------------------------- the chunks


def _failure(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def _run_chunk(
    function: Callable[[Any, Any], R], payload: Any, chunk: Any, start: int, unit: str
) -> R:
    """``function(payload, chunk)``; if it raises, the failing item is found (see
    :func:`_locate`) and a :class:`BatchError` naming its global index is raised instead."""
    try:
        return function(payload, chunk)
    except BatchError:
        raise
    except Exception as error:
        located = _locate(function, payload, chunk, start, unit, error)
        raise located from located.__cause__


def _locate(
    function: Callable[[Any, Any], Any],
    payload: Any,
    chunk: Any,
    start: int,
    unit: str,
    error: Exception,
) -> BatchError:
    """The error to raise for a chunk that failed with ``error``.

    The chunk is halved while a half fails (the first half is tried first), so about the
    chunk's work again finds the first failing item, when items fail one by one; the error
    names that item, with its own exception as the cause.
    """
    low, high = 0, len(chunk)
    while high - low > 1:
        middle = (low + high) // 2
        try:
            function(payload, chunk[low:middle])
        except Exception:
            high = middle
        else:
            low = middle
    try:
        function(payload, chunk[low : low + 1])
    except Exception as single:
        located = BatchError(f"{unit} {start + low} failed: {_failure(single)}", start + low)
        located.__cause__ = single
        return located
    stop = start + len(chunk) - 1
    together = BatchError(
        f"{unit}s {start} to {stop} failed together (no single {unit} fails alone): "
        f"{_failure(error)}"
    )
    together.__cause__ = error
    return together


class _File(NamedTuple):
    """A pickled payload left in a file for the worker processes of this machine."""

    path: str


_PAYLOADS: collections.OrderedDict[tuple[str, int], Any] = collections.OrderedDict()
"""The payloads unpickled in this process, by (hash of the pickle, thread ident)."""
_PAYLOADS_LOCK = threading.Lock()


def _payload(token: str, sent: bytes | _File) -> Any:
    """The payload pickled as ``sent`` (named ``token``) for this thread, unpickled on first
    use.

    Each thread gets its own copy: the batch queries move the shapes they are given.
    """
    key = (token, threading.get_ident())
    with _PAYLOADS_LOCK:
        payload = _PAYLOADS.get(key)
        if payload is not None:
            _PAYLOADS.move_to_end(key)
            return payload
    if isinstance(sent, _File):
        with open(sent.path, "rb") as f:
            sent = f.read()
    payload = pickle.loads(sent)
    with _PAYLOADS_LOCK:
        _PAYLOADS[key] = payload
        while len(_PAYLOADS) > _KEPT_PAYLOADS:
            _PAYLOADS.popitem(last=False)
    return payload


class _Rows(NamedTuple):
    """A chunk of an array of items left in shared memory by the caller (see the module)."""

    path: str
    offset: int
    """Where the chunk starts in the file, in bytes."""
    shape: tuple[int, ...]
    dtype: str

    def read(self) -> np.ndarray:
        """The chunk, in memory of this process's own (OSError when the file cannot be read
        here: the worker runs on another machine)."""
        count = math.prod(self.shape)
        with open(self.path, "rb") as f:
            rows = np.fromfile(f, dtype=self.dtype, count=count, offset=self.offset)
        if rows.size != count:
            raise OSError(f"{self.path} holds {rows.size} of the chunk's {count} values")
        return rows.reshape(self.shape)


class _Elsewhere:
    """What a task returns when it cannot read its :class:`_Rows` (it runs on another
    machine, or as another user): the caller sends the chunk again with the task."""


def _task(
    token: str,
    sent: Any,
    function: Callable[[Any, Any], R],
    chunk: Any,
    start: int,
    unit: str,
) -> R | _Elsewhere:
    """One chunk in a worker: the payload from the worker's cache, then the chunk."""
    if isinstance(chunk, _Rows):
        try:
            chunk = chunk.read()
        except OSError:  # no such file here (or not this user's): sent again with the task
            return _Elsewhere()
    return _run_chunk(function, _payload(token, sent), chunk, start, unit)


class _SharedSlots:
    """A file in shared memory with room for ``slots`` chunks of an array of items, written
    by the caller for workers on this machine (see the module)."""

    def __init__(self, items: np.ndarray, size: int, slots: int) -> None:
        self.slot_bytes = items.itemsize * math.prod(items.shape[1:]) * size
        self.slots = slots
        self.dtype = items.dtype.str
        self.fd, self.path = _shared_file("items", "")

    @staticmethod
    def open(items: Items, size: int, slots: int, local: bool) -> _SharedSlots | None:
        """Slots for the chunks of ``items``, or None when they go with their tasks (not an
        array of plain values, small, no worker on this machine, no room in memory)."""
        if not (
            local
            and isinstance(items, np.ndarray)
            and items.ndim >= 1
            and not items.dtype.hasobject
            and items.nbytes >= _SHARED_MIN_BYTES
            and os.path.isdir(_SHARED_DIRECTORY)
        ):
            return None
        needed = items.itemsize * math.prod(items.shape[1:]) * size * slots
        try:
            if shutil.disk_usage(_SHARED_DIRECTORY).free < 2 * needed:
                return None
            return _SharedSlots(items, size, slots)
        except OSError:
            return None

    def put(self, chunk: np.ndarray, index: int) -> _Rows | None:
        """Write chunk number ``index`` into its slot; None when it cannot be written."""
        data = np.ascontiguousarray(chunk).data.cast("B")
        offset = (index % self.slots) * self.slot_bytes
        try:
            done = 0
            while done < len(data):
                done += os.pwrite(self.fd, data[done:], offset + done)
        except OSError:
            return None
        return _Rows(self.path, offset, chunk.shape, self.dtype)

    def close(self) -> None:
        os.close(self.fd)
        os.remove(self.path)


# ----------------------------------------------------------------------------- executors


def _dask_client(executor: concurrent.futures.Executor) -> Any:
    """The Dask client behind ``executor`` (``client.get_executor()``), or None.

    Dask is only looked at when the caller has imported it already.
    """
    if "distributed" not in sys.modules:
        return None
    from distributed.cfexecutor import ClientExecutor

    if isinstance(executor, ClientExecutor):
        return executor._client
    return None


def _shared_file(kind: str, suffix: str) -> tuple[int, str]:
    """A new file ``(descriptor, path)`` for workers on this machine, named after this process:
    in shared memory when there is some (the files that processes since gone left there are
    removed first), else in the temporary folder."""
    if not os.path.isdir(_SHARED_DIRECTORY):
        return tempfile.mkstemp(prefix=f"spatialcontact-{kind}-", suffix=suffix)
    _remove_orphans()
    prefix = f"spatialcontact-{kind}-{os.getpid()}-"
    return tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=_SHARED_DIRECTORY)


def _remove_orphans() -> None:
    """Remove the files of :func:`_shared_file` whose process is gone: a caller killed
    (SIGKILL) during a call could not remove its own."""
    for path in glob.glob(os.path.join(_SHARED_DIRECTORY, "spatialcontact-*-*-*")):
        pid = os.path.basename(path).split("-")[2]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)  # signal 0: is it there? (POSIX only, as /dev/shm is)
        except ProcessLookupError:
            try:
                os.remove(path)
            except OSError:  # removed meanwhile, or not this user's to remove
                pass
        except OSError:  # there, another user's
            pass


def _on_this_machine(executor: concurrent.futures.Executor, client: Any) -> bool:
    """Whether every worker of ``executor`` runs on this machine (a process pool's do; a Dask
    cluster's when each has a loopback address, as a ``LocalCluster``'s have, or this
    machine's host name)."""
    if isinstance(executor, concurrent.futures.ProcessPoolExecutor):
        return True
    if client is None:
        return False
    names = {"localhost", socket.gethostname()}  # no name look-up: it may hang without DNS
    workers = client.scheduler_info().get("workers", {})
    for address in workers:
        host = urllib.parse.urlsplit(address).hostname or ""
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not (loopback or host in names):
            return False
    return bool(workers)


def _workers(executor: concurrent.futures.Executor, client: Any) -> int:
    """How many tasks ``executor`` runs at once (the machine's cores when it does not say)."""
    if client is not None:
        return max(1, int(sum(client.nthreads().values())))
    workers = getattr(executor, "_max_workers", None)
    if isinstance(workers, int) and workers > 0:
        return workers
    return os.cpu_count() or 1


def _default_chunk(n: int, workers: int) -> int:
    low, high = _EXECUTOR_CHUNKS
    return max(low, min(high, math.ceil(n / (4 * workers))))


def _send(
    blob: bytes, executor: concurrent.futures.Executor, client: Any
) -> tuple[Any, dict[str, Any], Callable[[], None]]:
    """How the tasks get the pickled payload: what they are given, the options of ``submit``
    and what to do once the call is over.

    A Dask client scatters it to every worker once; a process pool's workers (on this
    machine) read it from a temporary file (in shared memory when there is some), once each;
    any other executor sends it with every task.
    """
    if client is not None:
        future = client.scatter(blob, broadcast=True, hash=False)
        return future, {"pure": False}, future.release
    if isinstance(executor, concurrent.futures.ProcessPoolExecutor):
        handle, path = _shared_file("batch", ".pickle")
        with os.fdopen(handle, "wb") as f:
            f.write(blob)
        return _File(path), {}, lambda: os.remove(path)
    return blob, {}, lambda: None


def _serial(
    function: Callable[[Any, Any], R], payload: Any, items: Items, size: int, unit: str
) -> Iterator[tuple[int, R]]:
    for start in range(0, len(items), size):
        chunk = items[start : start + size]
        yield start, _run_chunk(function, payload, chunk, start, unit)


def _pickled(payload: Any) -> bytes:
    try:
        return pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:
        raise ShapeTypeError(
            "the work cannot be sent to the executor's workers, it does not pickle: "
            f"{_failure(error)}"
        ) from error


def _parallel(
    function: Callable[[Any, Any], R],
    blob: bytes,
    items: Items,
    size: int,
    unit: str,
    executor: concurrent.futures.Executor,
    client: Any,
    workers: int,
) -> Iterator[tuple[int, R]]:
    # Named by its contents: a worker that holds the same payload from an earlier call (the
    # same shapes, unchanged) uses it again rather than unpickling it anew.
    token = hashlib.sha256(blob).hexdigest()[:32]  # sha256: in hardware on most CPUs
    sent, options, done = _send(blob, executor, client)
    in_flight = _TASKS_PER_WORKER * workers
    shared = _SharedSlots.open(items, size, in_flight, _on_this_machine(executor, client))
    pending: collections.deque[tuple[int, concurrent.futures.Future[Any]]] = collections.deque()
    starts = iter(range(0, len(items), size))
    submit: Callable[..., concurrent.futures.Future[Any]] = executor.submit
    elsewhere = False

    def send(start: int, chunk: Any) -> concurrent.futures.Future[Any]:
        return submit(_task, token, sent, function, chunk, start, unit, **options)

    try:
        while True:
            while len(pending) < in_flight:
                start = next(starts, None)
                if start is None:
                    break
                chunk = items[start : start + size]
                # Chunk k takes the slot of chunk k - in_flight, whose result is in.
                rows = shared.put(chunk, start // size) if shared and not elsewhere else None
                pending.append((start, send(start, rows or chunk)))
            if not pending:
                return
            start, future = pending.popleft()
            try:
                result = future.result()
                if isinstance(result, _Elsewhere):  # a worker on another machine
                    elsewhere = True  # the next chunks go with their tasks
                    result = send(start, items[start : start + size]).result()
            except BatchError:
                raise
            except Exception as error:
                stop = min(start + size, len(items)) - 1
                raise BatchError(
                    f"the executor failed on {unit}s {start} to {stop}: {_failure(error)}"
                ) from error
            yield start, result
    finally:
        for _, future in pending:
            future.cancel()
        done()
        if shared is not None:
            shared.close()


def iter_chunks(
    function: Callable[[Any, Any], R],
    payload: Any,
    items: Items,
    *,
    chunk_size: int | None = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = False,
    unit: str = "item",
) -> Iterator[tuple[int, R]]:
    """Apply ``function(payload, chunk)`` to consecutive chunks of ``items``, in order.

    Parameters
    ----------
    function : callable
        ``function(payload, chunk) -> result`` for one chunk ``items[start:stop]``. It must
        accept any sub-chunk too (the halves of a failing chunk are run again to find the
        item that fails). With an executor it must be picklable: a module-level function.
    payload : object
        What every chunk needs (shapes, a robot model): passed as it is when there is no
        executor; otherwise pickled once here, sent to each worker once and unpickled once
        per worker thread (see the module notes).
    items : sized sequence
        Anything with ``len`` whose slices are chunks, e.g. an ndarray of shape (N, ...).
    chunk_size : int, optional
        Items per chunk (the last may be shorter). By default 16,384 without an executor, and
        with one about four chunks per worker, between 256 and 65,536 items.
    executor : concurrent.futures.Executor, optional
        Where the chunks run: a ``ProcessPoolExecutor``, a Dask ``client.get_executor()``, ...
        None runs them here, one after the other.
    progress : bool
        Show a ``tqdm`` progress bar counting the items done.
    unit : str
        What an item is, for the progress bar and the error messages ("pose").

    Yields
    ------
    start : int
        Index in ``items`` of the chunk's first item.
    result : object
        ``function(payload, items[start:start + len(chunk)])``.

    Raises
    ------
    BatchError
        When ``function`` raises (naming the global index of the first item that fails and its
        error, which is also the ``__cause__`` when it ran in this process), or when the
        executor fails (its ``index`` is then None). Chunks not yet started are cancelled.
    ShapeTypeError
        When ``executor`` is not a ``concurrent.futures.Executor``, or the payload cannot be
        pickled for it.

    Examples
    --------
    >>> import numpy as np
    >>> def total(offset, chunk):
    ...     return float(chunk.sum() + offset)
    >>> list(iter_chunks(total, 100.0, np.arange(10), chunk_size=4))
    [(0, 106.0), (4, 122.0), (8, 117.0)]
    """
    if not callable(function):
        raise ShapeTypeError(f"function must be callable, got {describe(function)}")
    if isinstance(items, Mapping) or not (
        hasattr(items, "__len__") and hasattr(items, "__getitem__")
    ):
        raise ShapeTypeError(
            f"items must be a sequence or an array (with len() and slices), got {describe(items)}"
        )
    size = None if chunk_size is None else count(chunk_size, "chunk_size", 1)
    if executor is not None and not isinstance(executor, concurrent.futures.Executor):
        raise ShapeTypeError(
            f"executor must be a concurrent.futures.Executor or None, got {describe(executor)}"
        )
    show = flag(progress, "progress")
    noun = text(unit, "unit")
    n = len(items)
    if executor is None:
        size = size or DEFAULT_CHUNK_SIZE
        chunks = _serial(function, payload, items, size, noun)
    else:
        client = _dask_client(executor)
        workers = _workers(executor, client)
        size = size or _default_chunk(n, workers)
        blob = _pickled(payload)
        chunks = _parallel(function, blob, items, size, noun, executor, client, workers)
    return _with_progress(chunks, n, size, noun) if show else chunks


def _with_progress(
    chunks: Iterator[tuple[int, R]], n: int, size: int, unit: str
) -> Iterator[tuple[int, R]]:
    """``chunks`` as they come, counted on a tqdm progress bar of ``n`` items."""
    tqdm = importlib.import_module("tqdm.auto").tqdm
    with tqdm(total=n, unit=unit) as bar:
        for start, result in chunks:
            bar.update(min(size, n - start))
            yield start, result


def map_chunks(
    function: Callable[[Any, Any], R],
    payload: Any,
    items: Items,
    *,
    chunk_size: int | None = None,
    executor: concurrent.futures.Executor | None = None,
    progress: bool = False,
    unit: str = "item",
) -> list[R]:
    """Apply ``function(payload, chunk)`` to consecutive chunks of ``items``, here or on an
    executor, and return the results in input order: the machinery of the batch queries, for
    any other many-items computation.

    A typical use is a method that answers many rows at once (a robot's configurations, say)
    and accepts an executor::

        def _rows(payload, Q):             # module level: pickled by reference
            robot, scene = payload
            return robot._check_rows(Q, scene)      # (len(Q),) bool

        parts = map_chunks(_rows, (robot, scene), Q, executor=executor, unit="configuration")
        out = np.concatenate(parts) if parts else np.zeros(0, dtype=bool)

    Parameters
    ----------
    function : callable
        ``function(payload, chunk) -> result`` for one chunk ``items[start:stop]``. It must
        accept any slice of ``items`` (a failing chunk is halved and run again to find the
        item that fails) and give the same answer for an item whichever chunk holds it. With
        an executor it must pickle: a module-level function, not a lambda or closure.
    payload : object
        What every chunk needs (shapes, a scene, a robot model). Without an executor the
        function gets this object itself. With one, it is pickled once here (it must pickle)
        and each worker thread unpickles it once and keeps it for the next chunks: the
        function may change its copy (move shapes), but such changes are not sent back, and
        a chunk must not depend on what an earlier chunk left in it. A copy is recognised by
        the bytes of its pickle, so a later call with a payload that pickles the same (the
        same shapes, not changed since) reuses the workers' copies; a payload whose pickle
        changes at every call is unpickled again by each worker at every call.
    items : sized sequence
        Anything with ``len`` whose slices are chunks, e.g. an ndarray of shape (N, ...):
        ``items[start:stop]`` is all a chunk is (with an executor, that slice is pickled and
        sent, or for an array of 1 MiB or more and workers on this machine, written to shared
        memory: see the module). Nothing is checked here: check the items before calling, so
        that bad input is refused before any work starts.
    chunk_size : int, optional
        Items per chunk (the last may be shorter), at least 1. By default 16,384 without an
        executor; with one, about four chunks per worker, between 256 and 65,536 items.
    executor : concurrent.futures.Executor, optional
        Where the chunks run: a ``ProcessPoolExecutor``, a Dask ``client.get_executor()``
        (the payload is then scattered to every worker once), a ``ThreadPoolExecutor`` (no
        faster: Coal holds the GIL), any other ``Executor``. None runs the chunks here, one
        after the other. At most four chunks per worker are in flight at a time.
    progress : bool
        Show a ``tqdm`` progress bar counting the items done (tqdm is imported only then).
    unit : str
        What an item is, for the progress bar and the error messages (``"pose"``).

    Returns
    -------
    list
        ``function(payload, chunk)`` of every chunk, first chunk first; empty when ``items``
        is.

    Raises
    ------
    BatchError
        When ``function`` raises: the message is ``"<unit> <index> failed: <Type>: <message>"``
        with the global index (``error.index``) of the first item that fails alone, also when
        it failed in a worker; the original exception is the ``__cause__`` when it ran in
        this process. When no single item fails alone, or the executor itself fails, the
        message names the range of items and ``index`` is None. Chunks not yet started are
        cancelled.
    ShapeTypeError
        When ``executor`` is not a ``concurrent.futures.Executor`` or None, ``progress`` not
        a bool, ``unit`` not a string, ``chunk_size`` not an integer, or the payload cannot be
        pickled for the executor.
    InvalidArgumentError
        When ``chunk_size`` is below 1.

    See Also
    --------
    iter_chunks : the same, yielding ``(start, result)`` as each chunk is done, for results
        too large to hold at once.

    Examples
    --------
    >>> import numpy as np
    >>> def doubled(_, chunk):
    ...     return 2 * chunk
    >>> np.concatenate(map_chunks(doubled, None, np.arange(5), chunk_size=2)).tolist()
    [0, 2, 4, 6, 8]
    """
    return [
        result
        for _, result in iter_chunks(
            function,
            payload,
            items,
            chunk_size=chunk_size,
            executor=executor,
            progress=progress,
            unit=unit,
        )
    ]
