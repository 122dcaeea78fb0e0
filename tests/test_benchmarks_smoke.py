"""Every benchmark script runs with ``--quick``, exits with 0 and prints a table.

Also checks the shared timing helpers in ``benchmarks/_timing.py`` on known answers. No test
here looks at how fast anything is.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
SCRIPTS = sorted(BENCHMARKS.glob("bench_*.py"))


def _load_timing() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_timing", BENCHMARKS / "_timing.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("_timing", module)
    spec.loader.exec_module(module)
    return module


timing = _load_timing()

_MD_SEPARATOR = re.compile(r"^\|(\s*:?-+:?\s*\|)+$")
_RULE = re.compile(r"^[-=+| ]*[-=]{10,}[-=+| ]*$")


def _cells(line: str) -> int:
    """Number of cells of a Markdown table line ``| a | b |`` (0 if it is not one)."""
    text = line.strip()
    if not (text.startswith("|") and text.endswith("|")) or len(text) < 2:
        return 0
    return text.count("|") - 1


def has_table(text: str) -> bool:
    """True when ``text`` holds a table with at least one row of figures.

    Either a Markdown table (header, ``|---|`` separator and a row, all with the same number
    of cells, at least two) or a text table under a rule of at least ten ``-`` or ``=``
    followed by a line with two or more fields, one of them a number.
    """
    lines = [line.rstrip() for line in text.splitlines()]
    for i in range(len(lines) - 1):
        line = lines[i].strip()
        if i > 0 and _MD_SEPARATOR.match(line):
            n = _cells(line)
            if n >= 2 and _cells(lines[i - 1]) == n and _cells(lines[i + 1]) == n:
                return True
        elif _RULE.match(line):
            following = lines[i + 1].split()
            if len(following) >= 2 and any(re.search(r"\d", f) for f in following):
                return True
    return False


# ------------------------------------------------------------------ the table detector


def test_has_table_finds_a_markdown_table() -> None:
    text = "title\n\n| pair | µs |\n|---|--:|\n| a | 1.5 |\n"
    assert has_table(text)


def test_has_table_finds_a_ruled_text_table() -> None:
    text = "case        time\n--------------------\nsphere      1.25 us\n"
    assert has_table(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "no table here, only prose - with a dash\n",
        "| pair | µs |\n|---|---|\n",  # a header and no row
        "| pair | µs |\n|---|---|\n| a | 1 | extra |\n",  # row with another cell count
        "| one column |\n|---|\n| a |\n",  # a single column is not a table
        "----------\nfinished\n",  # a rule followed by a single word
    ],
)
def test_has_table_refuses_text_without_a_table(text: str) -> None:
    assert not has_table(text)


def test_has_table_accepts_the_shared_table_printer() -> None:
    assert has_table(timing.table(["case", "µs"], [["sphere", "1.00"]]))


# --------------------------------------------------------------------- _timing helpers


def test_table_known_answer() -> None:
    # Column widths: max(len("case"), 3, len("box")) = 4 and max(len("µs"), 3, len("12.5")) = 4.
    # The second column holds only figures, so it is right-aligned ("-----:" = 4 + 1 dashes).
    out = timing.table(["case", "µs"], [["box", "12.5"], ["ball", "3.00"]])
    assert out == (
        "| case |   µs |\n"
        "|------|-----:|\n"
        "| box  | 12.5 |\n"
        "| ball | 3.00 |"
    )  # fmt: skip


def test_table_counts_n_a_as_a_figure_and_honours_right() -> None:
    out = timing.table(["a", "b"], [["x", "n/a"]])
    assert out.splitlines()[1] == "|-----|----:|"
    out = timing.table(["a", "b"], [["1", "2"]], right=[False, False])
    assert out.splitlines()[2] == "| 1   | 2   |"


def test_table_refuses_ragged_rows() -> None:
    with pytest.raises(ValueError, match=r"every row must have 2 cells, got 3: \['a', 'b', 'c'\]"):
        timing.table(["x", "y"], [["a", "b", "c"]])


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "n/a"), (0.123, "0.12"), (9.999, "10.00"), (12.34, "12.3"), (1234.5, "1,234")],
)
def test_fmt_us(value: float | None, text: str) -> None:
    assert timing.fmt_us(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "n/a"), (1.0, "1.00×"), (15.26, "15.3×"), (215.4, "215×")],
)
def test_fmt_ratio(value: float | None, text: str) -> None:
    assert timing.fmt_ratio(value) == text


def test_ratio() -> None:
    assert timing.ratio(3.0, 1.5) == 2.0
    assert timing.ratio(None, 1.0) is None
    assert timing.ratio(1.0, None) is None
    assert timing.ratio(1.0, 0.0) is None


def test_paired_ratio_is_the_median_of_side_by_side_ratios() -> None:
    # Ratios per repeat: 2/1 = 2, 9/3 = 3, 4/4 = 1 -> median 2. (The ratio of the medians
    # would be 4/3.)
    assert timing.paired_ratio([2.0, 9.0, 4.0], [1.0, 3.0, 4.0]) == 2.0
    assert timing.paired_ratio(None, [1.0]) is None
    assert timing.paired_ratio([1.0], None) is None
    with pytest.raises(ValueError, match="same repeats, got 2 and 1 values"):
        timing.paired_ratio([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="same repeats, got 0 and 0 values"):
        timing.paired_ratio([], [])


def test_interleaved_samples_give_one_timing_per_repeat() -> None:
    samples = timing.interleaved_samples({"a": "pass", "b": "x = 2 ** 8"}, repeat=4, min_time=1e-4)
    assert sorted(samples) == ["a", "b"]
    assert [len(v) for v in samples.values()] == [4, 4]
    assert all(t > 0.0 for v in samples.values() for t in v)


def test_interleaved_us_times_every_case() -> None:
    calls = {"a": 0, "b": 0}

    def count_a() -> None:
        calls["a"] += 1

    us = timing.interleaved_us(
        {"a": count_a, "b": "calls['b'] += 1"}, {"calls": calls}, repeat=3, min_time=1e-4
    )
    assert set(us) == {"a", "b"}
    assert all(v > 0.0 for v in us.values())
    assert calls["a"] > 3 and calls["b"] > 3  # calibration plus three timings of each
    assert timing.median_us("x = 1", repeat=1, min_time=1e-4) > 0.0


def test_calibrate_reaches_min_time() -> None:
    import timeit

    timer = timeit.Timer("sum(range(50))")
    n = timing.calibrate(timer, 0.002)
    assert n >= 1
    assert timer.timeit(n) > 0.0


def test_parse_settings() -> None:
    assert timing.parse_settings("x", []) == timing.Settings(False, 15, 0.015)
    assert timing.parse_settings("x", ["--quick"]) == timing.Settings(True, 3, 0.002)
    assert timing.parse_settings("x", ["--quick", "--repeat", "5"]).repeat == 5
    assert timing.parse_settings("x", ["--min-time", "0.5"]).min_time == 0.5


@pytest.mark.parametrize("argv", [["--repeat", "0"], ["--min-time", "0"], ["--bogus"]])
def test_parse_settings_refuses_bad_arguments(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit, match="2"):
        timing.parse_settings("x", argv)
    assert "error" in capsys.readouterr().err


def test_machine_lines_name_the_versions() -> None:
    lines = timing.machine_lines(["numpy", "no-such-distribution-here"])
    assert lines[0].startswith("machine: ")
    assert f"{os.cpu_count()} cores" in lines[0]
    assert "numpy " in lines[-1]
    assert "no-such-distribution-here not installed" in lines[-1]


# ----------------------------------------------------------------------- the scripts


def test_benchmark_scripts_are_found() -> None:
    assert BENCHMARKS / "bench_queries.py" in SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_benchmark_quick_run_prints_a_table(script: Path) -> None:
    env = dict(os.environ, MPLBACKEND="Agg")
    done = subprocess.run(
        [sys.executable, str(script), "--quick"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"{script.name} exited with {done.returncode}:\n{done.stderr}"
    assert has_table(done.stdout), f"{script.name} printed no table:\n{done.stdout[-2000:]}"
