"""Every script in examples/ runs to completion (exit code 0) in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.py"))


def test_quickstart_is_among_the_examples() -> None:
    assert "quickstart.py" in [path.name for path in EXAMPLES]


def short_run(script: Path, folder: Path) -> list[str]:
    """Options that keep a long example short, with its output in ``folder``."""
    if script.name == "batch_dataset.py":  # 1,000,000 poses on Dask by default
        return ["--n", "2000", "--serial", "--out", str(folder / "labels.npz")]
    return []


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda path: path.name)
def test_example_runs(script: Path, tmp_path: Path) -> None:
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, str(script), *short_run(script, tmp_path)],
        cwd=tmp_path,  # examples must not depend on the working directory
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:  # shown by pytest on failure
        print(done.stdout)
        print(done.stderr, file=sys.stderr)
    assert done.returncode == 0, f"{script.name} exited with {done.returncode}:\n{done.stderr}"


def test_quickstart_prints_the_known_answers(tmp_path: Path) -> None:
    script = next(path for path in EXAMPLES if path.name == "quickstart.py")
    out = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300
    ).stdout
    assert "d = 0.300" in out  # 0.5 - 0.1 - 0.1
    assert "ball.distance(box) = -0.050" in out  # overlap 0.1 + 0.1 - 0.15
    assert "distance +0.210, collided False" in out  # fingertips at 0.30 - 0.09
    assert "distance -0.010, collided True" in out  # fingertips at 0.08 - 0.09
    assert out.count("penetration_depth -0.010") == 2  # both fingers touch the table
