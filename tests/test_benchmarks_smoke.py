"""Every benchmark script runs with ``--quick``, exits with 0, prints a table and writes its
figures with ``--json``; ``compare.py`` runs one of them against the baseline commit.

Also checks the shared timing helpers in ``benchmarks/_timing.py`` and the arithmetic of
``compare.py`` on known answers. No test here looks at how fast anything is.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
SCRIPTS = sorted(BENCHMARKS.glob("bench_*.py"))


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


timing = _load("_timing")
compare = _load("compare")  # imports _timing, loaded above

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
    assert timing.parse_settings("x", []).json is None
    assert timing.parse_settings("x", ["--json", "out.json"]).json == "out.json"


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


def test_figures_record_rows_ratios_and_targets(tmp_path: Path) -> None:
    figures = timing.Figures("bench_x", ["numpy"])
    figures.add("a: ours", 1.5)
    figures.add("a: raw", 0.5, reference=True)
    figures.add("b: ours", None)  # a feature the imported package lacks
    figures.ratio("a: ours / raw", 3.0)
    figures.relate("a: ours", "a: raw", 3.1)
    with pytest.raises(ValueError, match="'a: raw' is not a recorded row"):
        figures.relate("a: raw", "a: raw", 1.0)
    with pytest.raises(ValueError, match="'b: ours' is not a recorded reference row"):
        figures.relate("a: ours", "b: ours", 1.0)
    with pytest.raises(ValueError, match="already related to 'a: raw'"):
        figures.relate("a: ours", "a: raw", 1.0)
    assert figures.target("T1", "a / raw", 3.0, 4.0) == "PASS"
    assert figures.target("T2", "a / raw", 3.0, 2.0) == "FAIL"
    assert figures.target("T3", "b / raw", None, 2.0) == "n/a"
    with pytest.raises(ValueError, match="'a: ours' is used twice"):
        figures.add("a: ours", 2.0, reference=True)
    with pytest.raises(ValueError, match="target name 'T1' is used twice"):
        figures.target("T1", "again", 1.0, 2.0)
    path = tmp_path / "out.json"
    figures.write(timing.Settings(True, 3, 0.002, json=str(path)))
    data = timing.read_figures(path)
    assert data["script"] == "bench_x" and data["quick"] is True and data["unit"] == "µs"
    assert data["rows"] == {"a: ours": 1.5, "b: ours": None}
    assert data["reference"] == {"a: raw": 0.5}
    assert data["ratios"] == {"a: ours / raw": 3.0}
    assert data["relative"] == {"a: ours": {"to": "a: raw", "ratio": 3.1}}
    assert data["targets"]["T2"] == {"text": "a / raw", "measured": 3.0, "limit": 2.0,
                                     "verdict": "FAIL"}  # fmt: skip
    assert data["package"]["name"] == "spatialcontact"
    assert data["machine"][0].startswith("machine: ")


def test_read_figures_refuses_other_json(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"script": "x", "rows": {}}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"not a benchmark's --json output: no \['reference'"):
        timing.read_figures(path)
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ValueError, match="not a benchmark's --json output"):
        timing.read_figures(path)


def test_modules_from_outside_the_imported_package_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An editable install completes an older copy on PYTHONPATH with the modules it lacks:
    # compare.py must not take such a run for the older package's.
    for folder in ("old", "new"):
        (tmp_path / folder / "pkgx").mkdir(parents=True)
        (tmp_path / folder / "pkgx" / "__init__.py").write_text("")
        (tmp_path / folder / "pkgx" / "extra.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "old"))
    pkgx = importlib.import_module("pkgx")
    monkeypatch.setitem(sys.modules, "pkgx", pkgx)
    assert timing._imported("pkgx")["foreign"] == []
    monkeypatch.syspath_prepend(str(tmp_path / "new"))
    monkeypatch.setattr(pkgx, "__path__", [str(tmp_path / "new" / "pkgx")])
    monkeypatch.setitem(sys.modules, "pkgx.extra", importlib.import_module("pkgx.extra"))
    found = timing._imported("pkgx")
    assert found["path"] == str((tmp_path / "old" / "pkgx").resolve())
    assert found["foreign"] == ["pkgx.extra"]


# ---------------------------------------------------------------- compare.py arithmetic


def test_comparison_pairs_the_runs_of_a_round() -> None:
    # Ratios per round: 2/1 = 2, 3/3 = 1, 8/2 = 4 -> median 2; the medians of the figures are
    # old 2 and new 3 (their ratio would be 1.5).
    c = compare.Comparison("row", [1.0, 3.0, 2.0], [2.0, 3.0, 8.0])
    assert (c.old_us, c.new_us, c.ratio) == (2.0, 3.0, 2.0)
    assert compare.flag(c, 0.10) == "SLOWER"
    assert compare.flag(compare.Comparison("row", [1.0], [0.85]), 0.10) == "faster"
    assert compare.flag(compare.Comparison("row", [1.0], [1.05]), 0.10) == ""
    missing = compare.Comparison("row", [None, None], [1.0, 1.2])
    assert missing.old_us is None and missing.ratio is None
    assert compare.flag(missing, 0.10) == "new"
    assert compare.flag(compare.Comparison("row", [1.0], [None]), 0.10) == "missing"


def test_comparison_against_raw_decides_the_flag() -> None:
    # The new time is 1.5x the old, but the row against the raw Coal row timed beside it went
    # from 1.0x to 1.05x only: the machine was slower, not the row. From 1.0x to 1.2x it is.
    steady = compare.Comparison("row", [2.0], [3.0], [1.0], [1.05])
    assert steady.ratio == 1.5 and steady.ratio_vs_raw == 1.05
    assert compare.flag(steady, 0.10) == ""
    worse = compare.Comparison("row", [2.0], [3.0], [1.0], [1.2])
    assert compare.flag(worse, 0.10) == "SLOWER"
    assert compare.Comparison("row", [1.0], [1.0], [None], [1.0]).ratio_vs_raw is None


def test_compare_lists_every_row_of_either_side() -> None:
    related = {"a": {"to": "raw", "ratio": 2.0}}
    runs = {
        "old": [{"rows": {"a": 1.0, "b": None}}, {"rows": {"a": 3.0, "b": None}}],
        "new": [
            {"rows": {"a": 1.5, "c": 2.0}, "relative": related},
            {"rows": {"a": 3.0, "c": 2.0}, "relative": related},
        ],
    }
    rows = compare.compare(runs, "rows")
    assert [c.name for c in rows] == ["a", "b", "c"]
    assert rows[0].ratio == 1.25  # median of 1.5 and 1.0
    assert rows[0].new_vs_raw == [2.0, 2.0] and rows[0].ratio_vs_raw is None  # none in old
    assert rows[2].old == [None, None] and rows[2].new_us == 2.0


def test_noise_line_gives_the_spread_of_the_reference_rows() -> None:
    reference = [compare.Comparison(f"r{i}", [1.0], [1.0 + i / 100]) for i in range(11)]
    text = compare.noise_line(reference)
    assert "the 11 reference rows" in text
    assert "1.05× (median)" in text
    assert "all from 1.00× to 1.10×" in text
    assert "No reference rows" in compare.noise_line([])


# ----------------------------------------------------------------------- the scripts


def test_benchmark_scripts_are_found() -> None:
    assert BENCHMARKS / "bench_queries.py" in SCRIPTS
    assert BENCHMARKS / "bench_core.py" in SCRIPTS


_RUNS: dict[str, tuple[subprocess.CompletedProcess[str], dict[str, Any]]] = {}


def quick_run(
    script: Path, folder: pytest.TempPathFactory
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """``script --quick --json ...`` (run once per session): the process and its JSON."""
    if script.name not in _RUNS:
        out = folder.mktemp(script.stem) / "figures.json"
        env = dict(os.environ, MPLBACKEND="Agg")
        done = subprocess.run(
            [sys.executable, str(script), "--quick", "--json", str(out)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, f"{script.name} exited with {done.returncode}:\n{done.stderr}"
        _RUNS[script.name] = (done, timing.read_figures(out))
    return _RUNS[script.name]


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_benchmark_quick_run_prints_a_table_and_writes_json(
    script: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    done, data = quick_run(script, tmp_path_factory)
    assert has_table(done.stdout), f"{script.name} printed no table:\n{done.stdout[-2000:]}"
    assert data["script"] == script.stem and data["quick"] is True
    assert Path(data["package"]["path"]).name == "spatialcontact"  # where it was imported from
    assert data["rows"], f"{script.name} wrote no rows"
    for kind in ("rows", "reference"):
        for name, us in data[kind].items():
            assert us is None or (math.isfinite(us) and us > 0.0), (name, us)


def test_bench_core_checks_every_target(tmp_path_factory: pytest.TempPathFactory) -> None:
    done, data = quick_run(BENCHMARKS / "bench_core.py", tmp_path_factory)
    assert sorted(data["targets"]) == ["T1", "T2", "T3", "T4", "T5"]
    targets = done.stdout.split("## Targets", 1)[1]
    for name, target in data["targets"].items():
        assert target["verdict"] in ("PASS", "FAIL", "n/a")
        assert re.search(rf"^\| {name} .*\| {target['verdict']} ", targets, re.MULTILINE), name
    if data["targets"]["T2"]["verdict"] == "n/a":  # a package without set_poses
        assert data["rows"]["bulk placement: group.set_poses(P, check=False)"] is None
    assert (BENCHMARKS / "baseline.json").exists() == ("0.1.0 (baseline) µs" in done.stdout)


def test_bench_core_baseline_file_is_a_full_run_at_0_1_0() -> None:
    data = timing.read_figures(BENCHMARKS / "baseline.json")
    assert data["script"] == "bench_core" and data["quick"] is False
    assert data["package"]["version"] == "0.1.0"
    assert data["rows"]["bulk placement: group.set_poses(P, check=False)"] is None


def test_compare_runs_one_script_against_the_baseline() -> None:
    try:
        compare.git("rev-parse", "--verify", f"{compare.BASELINE_REF}^{{commit}}")
    except (OSError, subprocess.CalledProcessError):
        pytest.skip(f"no git repository holding {compare.BASELINE_REF}")
    before = compare.git("worktree", "list")
    done = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "compare.py"),
            "--quick",
            "--scripts",
            "bench_sensors",
            "--runs",
            "2",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"compare.py exited with {done.returncode}:\n{done.stderr}"
    assert "## bench_sensors (2 old and 2 new runs, alternated)" in done.stdout
    assert has_table(done.stdout), done.stdout[-2000:]
    assert "## Summary" in done.stdout
    assert compare.git("worktree", "list") == before  # the temporary worktree is gone


def test_compare_finds_scripts_by_name() -> None:
    with pytest.raises(SystemExit, match="no benchmark script 'bench_nothing'"):
        compare.script_paths(["bench_nothing"])
    assert compare.script_paths(["bench_core.py", "bench_scene"]) == [
        BENCHMARKS / "bench_core.py",
        BENCHMARKS / "bench_scene.py",
    ]
