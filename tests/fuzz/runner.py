"""Run fuzz cases in child processes, so that a crash is caught and pinned on its case.

The parent starts a child with a range of case ids. Before each case the child appends
``RUN <id>`` to a log file and after it ``OUT <id> <outcome as JSON>``, each written straight to
the file (unbuffered), so whatever kills the child, the log shows the case it was running. When
the child dies (a signal, a non-zero exit) or stops writing for ``hang_seconds``, the parent
records that case as a crash or a hang and starts a new child from the next id.

Case ``i`` of seed ``s`` is made by target ``schedule[i % len(schedule)]`` (every target in turn,
repeated by its weight) from ``numpy.random.default_rng([s, i])``: any case can be remade alone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .core import TARGETS, Outcome, Target, judge
from .known import known

PACKAGE = __package__ or "fuzz"
ROOT = Path(__file__).resolve().parents[len(PACKAGE.split("."))]
"""The directory from which ``python -m <PACKAGE>.runner`` finds this package."""


def load_targets() -> list[Target]:
    """Every registered target (importing the modules that register them)."""
    from . import targets  # noqa: F401  (registers the targets)

    return list(TARGETS)


def schedule(only: list[str] | None = None) -> list[Target]:
    """The round-robin order of the targets (each repeated by its weight)."""
    every = load_targets()
    if only is None:  # the harness's own test targets run only when named
        chosen = [t for t in every if not t.name.startswith("self-test")]
    else:
        chosen = [t for t in every if t.name in only]
    if not chosen:
        raise ValueError(f"no fuzz target among {only}")
    return [t for t in chosen for _ in range(t.weight)]


def make_case(seed: int, index: int, order: list[Target], env: Any) -> tuple[Target, Any]:
    """The target and case of id ``index``."""
    chosen = order[index % len(order)]
    rng = np.random.default_rng([seed, index])
    return chosen, chosen.make(rng, env)


# ------------------------------------------------------------------------------ the child


def child(seed: int, start: int, stop: int, log: str, only: list[str] | None) -> None:
    """Run cases ``start .. stop - 1`` and log each (see the module docstring)."""
    import warnings

    from .env import Env

    warnings.simplefilter("ignore")  # deprecated spellings (base=) are fuzzed on purpose
    env = Env()
    order = schedule(only)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        for index in range(start, stop):
            os.write(fd, f"RUN {index}\n".encode())
            try:
                chosen, case = make_case(seed, index, order, env)
                outcome = judge(case)
                label = case.label
            except Exception:  # the generator itself failed: a harness bug, reported as such
                chosen = order[index % len(order)]
                outcome = Outcome(
                    "wrong", "case generator failed: " + traceback.format_exc()[-500:]
                )
                label = "<generator>"
            kind = outcome.kind
            if kind == "wrong" and known(chosen.name, label, outcome.detail) is not None:
                kind = "known"
            record = {
                "target": chosen.name,
                "label": label[:400],
                "kind": kind,
                "detail": outcome.detail[:600],
            }
            os.write(fd, f"OUT {index} {json.dumps(record)}\n".encode())
    finally:
        os.close(fd)
        env.close()


# ----------------------------------------------------------------------------- the parent


@dataclass
class Report:
    """Counts and failures of a run."""

    seed: int
    cases: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    per_target: Counter[str] = field(default_factory=Counter)
    failures: list[dict[str, Any]] = field(default_factory=list)
    children: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        k = self.kinds
        lines = [
            f"fuzz seed {self.seed}: {self.cases} cases in {self.seconds:.1f} s "
            f"({self.children} child processes, {len(self.per_target)} targets)",
            f"  answers {k['answer']}, clean errors {k['error']}, crashes {k['crash']}, "
            f"hangs {k['hang']}, wrong answers or errors {k['wrong']}, "
            f"known open bugs {k['known']} (see known.py)",
        ]
        for failure in self.failures[:50]:
            lines.append(
                f"  {failure['kind'].upper()} case {failure['id']} [{failure['target']}] "
                f"{failure['label']}\n      {failure['detail']}"
            )
        if len(self.failures) > 50:
            lines.append(f"  ... and {len(self.failures) - 50} more")
        return "\n".join(lines)


def _read_log(path: Path) -> tuple[dict[int, dict[str, Any]], int | None]:
    """The finished cases of a log and the id of a case started but not finished."""
    done: dict[int, dict[str, Any]] = {}
    running: int | None = None
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("RUN "):
            running = int(line.split()[1])
        elif line.startswith("OUT "):
            _, index, payload = line.split(" ", 2)
            done[int(index)] = json.loads(payload)
            running = None
    return done, running


def run(
    seed: int,
    cases: int,
    *,
    start: int = 0,
    only: list[str] | None = None,
    per_child: int = 2000,
    hang_seconds: float = 120.0,
    progress: bool = False,
) -> Report:
    """Run case ids ``start .. start + cases - 1`` of ``seed``; a new child per crash."""
    report = Report(seed)
    clock = time.monotonic()
    order = schedule(only)
    names = {i: order[i % len(order)].name for i in range(len(order))}
    stop = start + cases
    position = start
    with tempfile.TemporaryDirectory(prefix="fuzz-") as scratch:
        while position < stop:
            end = min(stop, position + per_child)
            log = Path(scratch) / f"log-{position}.txt"
            errors = Path(scratch) / f"stderr-{position}.txt"
            log.touch()
            command = [sys.executable, "-m", f"{PACKAGE}.runner", "--child", str(seed)]
            command += [str(position), str(end), str(log)] + (only or [])
            report.children += 1
            with open(errors, "wb") as stderr:
                process = subprocess.Popen(
                    command,
                    cwd=ROOT,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                    start_new_session=True,
                )
                hung = _wait(process, log, hang_seconds)
            done, running = _read_log(log)
            for index, record in sorted(done.items()):
                _count(report, index, record)
            if progress:
                print(f"  ... {max(done, default=position - 1) + 1 - start} cases", flush=True)
            if process.returncode == 0 and running is None and len(done) == end - position:
                position = end
                continue
            # the child died or hung: pin it on the case it was running
            culprit = running if running is not None else max(done, default=position - 1) + 1
            tail = errors.read_bytes()[-1500:].decode(errors="replace")
            kind = "hang" if hung else "crash"
            detail = (
                f"no progress for {hang_seconds:g} s"
                if hung
                else f"child exited with {process.returncode}"
            )
            record = {
                "target": names[culprit % len(order)],
                "label": f"(remake with --case {culprit})",
                "kind": kind,
                "detail": detail + (f"; stderr: {tail.strip()[-600:]}" if tail.strip() else ""),
            }
            _count(report, culprit, record)
            position = culprit + 1
    report.seconds = time.monotonic() - clock
    return report


def _wait(process: subprocess.Popen[bytes], log: Path, hang_seconds: float) -> bool:
    """Wait for ``process``; kill it (its whole session) if ``log`` stops growing."""
    size, last = -1, time.monotonic()
    while process.poll() is None:
        time.sleep(0.05)
        now_size = log.stat().st_size
        if now_size != size:
            size, last = now_size, time.monotonic()
        elif time.monotonic() - last > hang_seconds:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return True
    return False


def _count(report: Report, index: int, record: dict[str, Any]) -> None:
    report.cases += 1
    report.kinds[record["kind"]] += 1
    report.per_target[record["target"]] += 1
    if record["kind"] in ("wrong", "crash", "hang"):
        report.failures.append({"id": index, **record})


def remake(seed: int, index: int, only: list[str] | None = None) -> str:
    """The label and outcome of one case, run in this process (for reproducing a failure)."""
    from .env import Env

    env = Env()
    try:
        chosen, case = make_case(seed, index, schedule(only), env)
        outcome = judge(case)
        entry = known(chosen.name, case.label, outcome.detail) if outcome.kind == "wrong" else None
        kind = outcome.kind if entry is None else f"known ({entry.test})"
        return f"case {index} [{chosen.name}] {case.label}\n  {kind}: {outcome.detail}"
    finally:
        env.close()


if __name__ == "__main__":
    if len(sys.argv) >= 6 and sys.argv[1] == "--child":
        _, _, seed_text, start_text, stop_text, log_path, *names_given = sys.argv
        child(int(seed_text), int(start_text), int(stop_text), log_path, names_given or None)
    else:
        sys.exit("usage: python -m <package>.runner --child SEED START STOP LOG [TARGET ...]")
