"""Timing helpers shared by the benchmark scripts.

The machine a benchmark runs on is usually shared and noisy, so the figures that matter are
ratios measured in the same run. :func:`interleaved_samples` times several statements in turn,
one timing of each before the next timing of any; :func:`interleaved_us` keeps the median of
each and :func:`paired_ratio` the median of the ratios of timings taken side by side.
:func:`table` prints the figures as a Markdown table that can be pasted into the README.

Clocks: timings are in CPU seconds of the timing thread (``time.thread_time``) by default, so
that the time a shared machine gives to other processes is not counted: a 2-core machine with
five busy processes spread ratios of identical code from 0.4x to 3.4x on the wall clock.
``--clock wall`` (or ``clock="wall"`` for one call, as work spread over processes needs)
times by the wall clock instead.
:class:`Figures` collects a run's figures under stable names for ``--json``, which
``benchmarks/compare.py`` reads back with :func:`read_figures`.

Import it from a script in ``benchmarks/`` with ``from _timing import ...`` (the script's own
folder is on ``sys.path`` when it is run as ``python benchmarks/bench_x.py``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
import timeit
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = [
    "Figures",
    "Settings",
    "Statement",
    "calibrate",
    "fmt_ratio",
    "fmt_us",
    "interleaved_samples",
    "interleaved_us",
    "machine_lines",
    "median_us",
    "paired_ratio",
    "parse_settings",
    "ratio",
    "read_figures",
    "table",
    "version_of",
]

CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.thread_time, "wall": time.perf_counter}
"""The timers ``--clock`` chooses from (see the module notes)."""

_default_clock = ["cpu"]  # set by parse_settings

Statement = str | Callable[[], object]
"""What is timed: Python source run in a namespace, or a callable taking no arguments."""


@dataclass(frozen=True)
class Settings:
    """How hard a benchmark run measures.

    Attributes
    ----------
    quick : bool
        True for a run of a few seconds (the figures are then rough).
    repeat : int
        Timings per statement; the median is kept.
    min_time : float
        Seconds each timing lasts at least (calls are batched up to it).
    json : str or None
        Where to write the run's figures as JSON (see :class:`Figures`), or None.
    clock : str
        ``"cpu"`` (the timing thread's CPU time) or ``"wall"``: see the module notes.
    """

    quick: bool
    repeat: int
    min_time: float
    json: str | None = None
    clock: str = "cpu"


def parse_settings(
    description: str,
    argv: Sequence[str] | None = None,
    *,
    repeat: int = 15,
    min_time: float = 0.015,
) -> Settings:
    """Read the command line of a benchmark script: ``--quick``, ``--repeat``, ``--min-time``,
    ``--json``, ``--clock`` (which also becomes the default clock of the timing functions).

    Parameters
    ----------
    description : str
        Shown by ``--help``.
    argv : sequence of str, optional
        The arguments; ``sys.argv[1:]`` by default.
    repeat, min_time : int, float
        The defaults of a full run. ``--quick`` makes them 3 and 2 ms.

    Returns
    -------
    Settings
        What the command line asked for.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="run in a few seconds (rough figures)")
    parser.add_argument("--repeat", type=int, default=None, help=f"timings per case ({repeat})")
    parser.add_argument(
        "--min-time",
        type=float,
        default=None,
        help=f"seconds per timing ({min_time})",
    )
    parser.add_argument(
        "--json",
        metavar="PATH",
        default=None,
        help="also write every figure to PATH as JSON, keyed by stable row names",
    )
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="cpu",
        help="time by the timing thread's CPU time (cpu, the default) or the wall clock",
    )
    args = parser.parse_args(argv)
    _default_clock[0] = args.clock
    quick = bool(args.quick)
    rep = args.repeat if args.repeat is not None else (3 if quick else repeat)
    mt = args.min_time if args.min_time is not None else (0.002 if quick else min_time)
    if rep < 1:
        parser.error(f"--repeat must be >= 1, got {rep}")
    if not mt > 0.0:
        parser.error(f"--min-time must be > 0, got {mt}")
    return Settings(quick=quick, repeat=rep, min_time=mt, json=args.json, clock=args.clock)


def _timer(
    stmt: Statement, namespace: Mapping[str, Any] | None, clock: str | None = None
) -> timeit.Timer:
    timer = CLOCKS[clock or _default_clock[0]]
    if isinstance(stmt, str):
        return timeit.Timer(stmt, timer=timer, globals=dict(namespace or {}))
    return timeit.Timer(stmt, timer=timer)


def calibrate(timer: timeit.Timer, min_time: float) -> int:
    """How many calls make one timing of ``timer`` last at least ``min_time`` seconds."""
    number = 1
    while True:
        elapsed = timer.timeit(number)
        if elapsed >= min_time:
            return number
        if elapsed >= min_time / 20.0:
            return max(1, math.ceil(number * min_time / elapsed))
        number *= 10


def median_us(
    stmt: Statement,
    namespace: Mapping[str, Any] | None = None,
    *,
    repeat: int = 15,
    min_time: float = 0.015,
) -> float:
    """Median microseconds per call of ``stmt`` over ``repeat`` timings.

    Parameters
    ----------
    stmt : str or callable
        Python source run with ``namespace`` as globals, or a callable with no arguments.
    namespace : mapping, optional
        Globals for a source ``stmt``.
    repeat : int
        How many timings; each batches enough calls to last ``min_time`` seconds.
    min_time : float
        Seconds per timing.
    """
    return interleaved_us({"stmt": stmt}, namespace, repeat=repeat, min_time=min_time)["stmt"]


def interleaved_samples(
    cases: Mapping[str, Statement],
    namespace: Mapping[str, Any] | None = None,
    *,
    repeat: int = 15,
    min_time: float = 0.015,
    clock: str | None = None,
) -> dict[str, list[float]]:
    """Microseconds per call of each statement in each of ``repeat`` timings, taken in turn.

    Each statement is calibrated alone, then every repeat times each statement once, in an
    order that rotates from one repeat to the next, so that a slow spell of a shared machine
    falls on all of them rather than on one.

    Parameters
    ----------
    cases : mapping of str to (str or callable)
        Label to statement (see :func:`median_us`).
    namespace : mapping, optional
        Globals for the source statements.
    repeat, min_time : int, float
        As in :func:`median_us`.
    clock : {"cpu", "wall"}, optional
        The clock (see the module notes); the one ``--clock`` chose by default.

    Returns
    -------
    dict of str to list of float
        Label to ``repeat`` timings in microseconds per call; entry ``i`` of every list comes
        from repeat ``i``.
    """
    labels = list(cases)
    timers = {label: _timer(cases[label], namespace, clock) for label in labels}
    numbers = {label: calibrate(timers[label], min_time) for label in labels}
    samples: dict[str, list[float]] = {label: [] for label in labels}
    for r in range(repeat):
        k = r % len(labels)
        for label in labels[k:] + labels[:k]:
            n = numbers[label]
            samples[label].append(timers[label].timeit(n) / n * 1e6)
    return samples


def interleaved_us(
    cases: Mapping[str, Statement],
    namespace: Mapping[str, Any] | None = None,
    *,
    repeat: int = 15,
    min_time: float = 0.015,
) -> dict[str, float]:
    """Median microseconds per call of each statement, timed in turn.

    See :func:`interleaved_samples` for the parameters.

    Returns
    -------
    dict of str to float
        Label to median microseconds per call.
    """
    samples = interleaved_samples(cases, namespace, repeat=repeat, min_time=min_time)
    return {label: statistics.median(values) for label, values in samples.items()}


def paired_ratio(
    numerator: Sequence[float] | None, denominator: Sequence[float] | None
) -> float | None:
    """Median of ``numerator[i] / denominator[i]`` over timings taken side by side.

    More robust on a busy machine than the ratio of the medians: a slow spell that lasts a
    whole repeat slows both timings of a pair. None when either list is missing.
    """
    if numerator is None or denominator is None:
        return None
    if len(numerator) != len(denominator) or not numerator:
        raise ValueError(
            f"numerator and denominator must be timings of the same repeats, got "
            f"{len(numerator)} and {len(denominator)} values"
        )
    return statistics.median(a / b for a, b in zip(numerator, denominator, strict=True))


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """``numerator / denominator``, or None when either is missing."""
    if numerator is None or denominator is None or denominator <= 0.0:
        return None
    return numerator / denominator


def _three_figures(value: float | None, suffix: str) -> str:
    """``value`` to three significant figures (at least one decimal) with ``suffix``, or n/a."""
    if value is None:
        return "n/a"
    if value >= 100.0:
        return f"{value:,.0f}{suffix}"
    if value >= 10.0:
        return f"{value:.1f}{suffix}"
    return f"{value:.2f}{suffix}"


def fmt_us(value: float | None) -> str:
    """Microseconds with three significant figures (at least one decimal), or ``n/a``."""
    return _three_figures(value, "")


def fmt_ratio(value: float | None) -> str:
    """A ratio as ``1.23×``, or ``n/a``."""
    return _three_figures(value, "×")


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    right: Sequence[bool] | None = None,
) -> str:
    """A Markdown table with padded columns.

    Parameters
    ----------
    headers : sequence of str
        Column titles.
    rows : sequence of sequences of str
        Cells, as many per row as there are headers.
    right : sequence of bool, optional
        Which columns are right-aligned; by default those whose cells all start with a digit
        or are ``n/a``.

    Returns
    -------
    str
        The table, one line per row, with a ``|---|`` separator line under the headers.
    """
    ncol = len(headers)
    for row in rows:
        if len(row) != ncol:
            raise ValueError(f"every row must have {ncol} cells, got {len(row)}: {list(row)!r}")
    if right is None:
        right = [
            bool(rows) and all(r[i][:1].isdigit() or r[i] == "n/a" for r in rows)
            for i in range(ncol)
        ]
    widths = [max([len(headers[i]), 3, *(len(r[i]) for r in rows)]) for i in range(ncol)]

    def line(cells: Sequence[str]) -> str:
        padded = [
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)
        ]
        return "| " + " | ".join(padded) + " |"

    rule = (
        "|"
        + "|".join(
            ("-" * (w + 1) + ":") if r else ("-" * (w + 2))
            for w, r in zip(widths, right, strict=True)
        )
        + "|"
    )
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def version_of(distribution: str) -> str | None:
    """The installed version of a distribution, or None when it is not installed."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for text in f:
                if text.startswith("model name"):
                    return text.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_lines(distributions: Sequence[str] = ()) -> list[str]:
    """Describe the machine and the versions of ``distributions``, one fact per line."""
    lines = [f"machine: {_cpu_model()}, {os.cpu_count()} cores, {platform.system()}"]
    if hasattr(os, "getloadavg"):
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        lines.append(f"load average (1, 5, 15 min) at start: {load}")
    what = {"cpu": "CPU time of the timing thread", "wall": "wall clock"}[_default_clock[0]]
    lines.append(f"clock: {what} (--clock)")
    lines.append(f"Python {platform.python_version()} ({sys.implementation.name})")
    versions = [f"{d} {version_of(d) or 'not installed'}" for d in distributions]
    if versions:
        lines.append("; ".join(versions))
    return lines


def _imported(package: str) -> dict[str, Any]:
    """The name, version and folder of ``package`` as this run imported it (folder None when
    it is not imported), and its submodules loaded from another folder (``foreign``: an
    editable install completes an older copy on ``PYTHONPATH`` with the modules it lacks)."""
    module = sys.modules.get(package)
    path = getattr(module, "__file__", None)
    folder = None if path is None else Path(path).resolve().parent
    foreign = []
    for name, sub in list(sys.modules.items()):
        where = getattr(sub, "__file__", None)
        if folder is not None and name.startswith(f"{package}.") and where is not None:
            if not Path(where).resolve().is_relative_to(folder):
                foreign.append(name)
    return {
        "name": package,
        "version": getattr(module, "__version__", None) or version_of(package),
        "path": None if folder is None else str(folder),
        "foreign": sorted(foreign),
    }


class Figures:
    """The figures of one benchmark run under stable names, written as JSON by ``--json``.

    A *row* is microseconds per call of a statement that runs the package; a *reference* row
    times code that does not (raw Coal, numpy, other libraries), so it is the same code in two
    runs of different versions of the package and how much it moves between them is the noise
    of the machine. A row may also be *related* to a reference row timed in turn with it in the
    same run, by their ratio (:func:`paired_ratio` where the script keeps the timings): a shared
    machine that slows down between two runs slows both, so comparing that ratio between runs
    is steadier than comparing times. Ratios and targets are stored as measured. A missing
    figure (a feature the imported package lacks) is None, written as ``null``.

    Parameters
    ----------
    script : str
        The benchmark's name, e.g. ``"bench_core"``.
    distributions : sequence of str
        Whose versions :func:`machine_lines` reports; the machine is described when the
        run starts, that is when this is made.
    package : str
        The package whose imported version and folder the JSON records (under ``"package"``).
    """

    def __init__(
        self, script: str, distributions: Sequence[str] = (), package: str = "spatialcontact"
    ) -> None:
        self.script = script
        self.machine = machine_lines(distributions)
        self.package = package
        self.rows: dict[str, float | None] = {}
        self.reference: dict[str, float | None] = {}
        self.ratios: dict[str, float | None] = {}
        self.relative: dict[str, dict[str, Any]] = {}
        self.targets: dict[str, dict[str, Any]] = {}

    def _new(self, name: str) -> str:
        if name in self.rows or name in self.reference or name in self.ratios:
            raise ValueError(f"figure name {name!r} is used twice")
        return name

    def add(self, name: str, us: float | None, *, reference: bool = False) -> None:
        """Record ``us`` microseconds per call as row ``name`` (a reference row if asked)."""
        (self.reference if reference else self.rows)[self._new(name)] = us

    def ratio(self, name: str, value: float | None) -> None:
        """Record the ratio ``value`` as ``name``."""
        self.ratios[self._new(name)] = value

    def relate(self, row: str, reference: str, value: float | None) -> None:
        """Record that row ``row`` took ``value`` times reference row ``reference`` (both
        recorded with :meth:`add`), timed side by side in this run."""
        if row not in self.rows:
            raise ValueError(f"{row!r} is not a recorded row")
        if reference not in self.reference:
            raise ValueError(f"{reference!r} is not a recorded reference row")
        if row in self.relative:
            raise ValueError(f"row {row!r} is already related to {self.relative[row]['to']!r}")
        self.relative[row] = {"to": reference, "ratio": value}

    def target(self, name: str, text: str, measured: float | None, limit: float) -> str:
        """Record target ``name`` (``measured`` must be at most ``limit``); return its verdict.

        The verdict is ``"PASS"``, ``"FAIL"``, or ``"n/a"`` when ``measured`` is None.
        """
        if name in self.targets:
            raise ValueError(f"target name {name!r} is used twice")
        verdict = "n/a" if measured is None else ("PASS" if measured <= limit else "FAIL")
        self.targets[name] = {
            "text": text,
            "measured": measured,
            "limit": limit,
            "verdict": verdict,
        }
        return verdict

    def to_dict(self, settings: Settings) -> dict[str, Any]:
        """Everything recorded, with the run's settings, machine and versions."""
        return {
            "script": self.script,
            "unit": "µs",
            "quick": settings.quick,
            "repeat": settings.repeat,
            "min_time": settings.min_time,
            "machine": self.machine,
            "package": _imported(self.package),
            "rows": self.rows,
            "reference": self.reference,
            "ratios": self.ratios,
            "relative": self.relative,
            "targets": self.targets,
        }

    def write(self, settings: Settings) -> None:
        """Write :meth:`to_dict` to ``settings.json`` (nothing when it is None)."""
        if settings.json is None:
            return
        data = self.to_dict(settings)
        with open(settings.json, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, ensure_ascii=False, allow_nan=False)
            f.write("\n")


def read_figures(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a file written by :meth:`Figures.write` (ValueError if it is not one)."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    keys = ("script", "rows", "reference", "ratios", "relative", "targets")
    missing = [k for k in keys if k not in data] if isinstance(data, dict) else list(keys)
    if missing:
        raise ValueError(f"{os.fspath(path)} is not a benchmark's --json output: no {missing}")
    return data
