"""Failures the harness finds that are open bugs, each pinned by a strict ``xfail`` regression
test in ``test_regressions.py``.

A case whose failure matches an entry counts as ``known``, not as a failure: the CI set stays
green while the bug is open, and the entry's regression test turns XPASS (a failure, since it
is strict) once the bug is fixed, which is the reminder to delete the entry here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Known:
    """An open bug: which target, what the label and the failure look like, and its test."""

    target: str
    label: str
    """Regular expression searched in the case's label."""
    detail: str
    """Regular expression searched in the failure's detail."""
    test: str
    """The regression test in ``test_regressions.py`` that pins it."""


KNOWN: tuple[Known, ...] = ()


def known(target: str, label: str, detail: str) -> Known | None:
    """The open bug a failure of ``target`` is, if any."""
    for entry in KNOWN:
        if (
            entry.target == target
            and re.search(entry.label, label)
            and re.search(entry.detail, detail)
        ):
            return entry
    return None
