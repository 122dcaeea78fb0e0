"""docs/sensors.md: its example prints what its comments say.

tests/test_docs.py runs every block of the docs; this checks what the sensors' page prints.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parent.parent / "docs" / "sensors.md"
FENCE = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def test_the_example_prints_a_gazebo_reading_with_contacts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    (code,) = FENCE.findall(PAGE.read_text())
    exec(compile(code, str(PAGE), "exec"), {"__name__": "__main__"})
    printed = capsys.readouterr().out.splitlines()
    # 0.1 s of steps: the 10 Hz bumper publishes once, with the contacts of the five steps
    assert printed == [
        "ContactsMessage(5 contact messages, time=0.1)",
        "table box 0.1",
        "[[0.0, 0.0, -0.0025]]",
        "[[0.0, 0.0, -1.0]]",
        "[0.005]",
        "[[0.0, 0.0, 100.0]]",
    ]
