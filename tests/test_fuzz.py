"""The fuzz harness in CI: a bounded, seeded set of cases over every public entry point.

Every case runs in a child process (see ``tests/fuzz/runner.py``); this test fails on any
crash, hang, wrong answer or unclean error, and prints the counts. The harness is tested too:
a case that segfaults is pinned on its id and the run goes on, a hang is killed, and the judge
tells clean errors from foreign ones. ``python -m tests.fuzz --cases 200000 --seed 1`` runs a
long set (``tests/fuzz/README.md``).
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from fuzz.api import public_api
from fuzz.core import Case, judge
from fuzz.runner import load_targets, run

import spatialcontact as sc

CI_CASES = int(os.environ.get("SPATIALCONTACT_FUZZ_CASES", "12000"))
CI_SEED = int(os.environ.get("SPATIALCONTACT_FUZZ_SEED", "0"))

EXEMPT: dict[str, str] = {}
"""Public entry points with no fuzz target, and why (none today)."""


def test_every_public_entry_point_has_a_fuzz_target() -> None:
    covered = {entry for t in load_targets() for entry in t.covers}
    missing = sorted(public_api() - covered - set(EXEMPT))
    assert not missing, f"public entry points no fuzz target covers: {missing}"


def test_fuzz_targets_cover_only_public_entry_points() -> None:
    stale = sorted({entry for t in load_targets() for entry in t.covers} - public_api())
    assert not stale, f"fuzz targets name entry points that are not public: {stale}"
    assert not set(EXEMPT) - public_api(), "EXEMPT names entry points that are gone"


def test_fuzz_ci_set() -> None:
    report = run(CI_SEED, CI_CASES)
    print(report.summary())
    assert report.cases == CI_CASES
    assert set(report.per_target) == {
        t.name for t in load_targets() if not t.name.startswith("self-test")
    }
    assert report.kinds["answer"] > CI_CASES // 5 and report.kinds["error"] > CI_CASES // 5
    assert report.ok, report.summary()


# ------------------------------------------------------------------------ the harness


@pytest.fixture
def selftest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SPATIALCONTACT_FUZZ_SELFTEST", "1")
    from fuzz.targets import selftest as _  # noqa: F401  (registers them here too)


@pytest.mark.usefixtures("selftest")
def test_a_crash_is_pinned_on_its_case_and_the_run_goes_on() -> None:
    # the schedule alternates the two targets: even ids segfault, odd ids answer
    report = run(5, 9, only=["self-test crash", "self-test fine"])
    crashes = sorted(f["id"] for f in report.failures if f["kind"] == "crash")
    assert crashes == [0, 2, 4, 6, 8]
    assert report.kinds["answer"] == 4 and report.cases == 9
    assert report.children == 5  # one more child after each crash but the last case's
    assert all("-11" in f["detail"] or "SIGSEGV" in f["detail"] for f in report.failures)
    assert not report.ok and "CRASH case 0 [self-test crash]" in report.summary()


@pytest.mark.usefixtures("selftest")
def test_a_hang_is_killed_and_pinned() -> None:
    report = run(5, 3, only=["self-test fine", "self-test hang"], hang_seconds=3.0)
    assert [(f["id"], f["kind"]) for f in report.failures] == [(1, "hang")]
    assert report.kinds["answer"] == 2


@pytest.mark.usefixtures("selftest")
def test_a_wrong_answer_fails_the_run() -> None:
    report = run(5, 2, only=["self-test wrong"])
    assert [f["kind"] for f in report.failures] == ["wrong", "wrong"]
    assert "1 is not 2" in report.failures[0]["detail"]


def _raise(error: BaseException) -> Any:
    def call() -> Any:
        raise error

    return call


@pytest.mark.parametrize(
    ("case", "kind", "says"),
    [
        (
            Case(
                "x",
                _raise(sc.InvalidShapeError("radius must be positive, got -1")),
                "error",
                "radius",
                -1,
            ),
            "error",
            "InvalidShapeError",
        ),
        (
            Case("x", _raise(ValueError("radius must be positive, got -1")), "error", "radius", -1),
            "wrong",
            "foreign builtins.ValueError",
        ),
        (
            Case("x", _raise(IndexError("list index out of range")), "either", "index", 3),
            "wrong",
            "foreign builtins.IndexError",
        ),
        (
            Case(
                "x", _raise(sc.InvalidShapeError("must be positive, got -1")), "error", "radius", -1
            ),
            "wrong",
            "does not name",
        ),
        (
            Case(
                "x", _raise(sc.InvalidShapeError("radius must be positive")), "error", "radius", -1
            ),
            "wrong",
            "does not show the value",
        ),
        (
            Case(
                "x", _raise(sc.InvalidShapeError("radius 1.5 is too large")), "error", "radius", 1
            ),
            "wrong",
            "does not show the value",
        ),  # "1" inside "1.5" is not the value
        (Case("x", lambda: 3, "error", "radius", -1), "wrong", "accepted"),
        (
            Case("x", _raise(sc.InvalidShapeError("radius must be positive, got -1")), "answer"),
            "wrong",
            "raised",
        ),
        (Case("x", lambda: 3, "answer", check=lambda r: None), "answer", "3"),
        (
            Case(
                "x",
                _raise(sc.NotInSceneError("name 'a' is not in the scene")),
                "error",
                "name",
                "a",
            ),
            "error",
            "NotInSceneError",
        ),
    ],
)
def test_the_judge(case: Case, kind: str, says: str) -> None:
    outcome = judge(case)
    assert outcome.kind == kind and says in outcome.detail, outcome
