"""Targets that crash, hang or answer wrongly on purpose, to test the harness itself.

Registered only when ``SPATIALCONTACT_FUZZ_SELFTEST=1`` is in the environment (children inherit
it), so they never run in a real fuzz run.
"""

from __future__ import annotations

import ctypes
import time
from typing import Any

import numpy as np

from ..core import Case, target


def _segfault() -> Any:
    return ctypes.string_at(0)  # reads address 0: SIGSEGV


@target("self-test crash", covers=[])
def crash(rng: np.random.Generator, env: Any) -> Case:
    return Case("a segfault", _segfault, "answer")


@target("self-test fine", covers=[])
def fine(rng: np.random.Generator, env: Any) -> Case:
    return Case("an answer", lambda: 1, "answer", check=lambda x: None)


@target("self-test hang", covers=[])
def hang(rng: np.random.Generator, env: Any) -> Case:
    return Case("a sleep", lambda: time.sleep(60), "answer")


@target("self-test wrong", covers=[])
def wrong(rng: np.random.Generator, env: Any) -> Case:
    def check(result: Any) -> None:
        assert result == 2, f"{result} is not 2"

    return Case("1 + 0", lambda: 1, "answer", check=check)
