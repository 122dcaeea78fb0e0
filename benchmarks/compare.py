"""Whether any benchmark row got slower: the working tree against an older spatialcontact.

Run ``python benchmarks/compare.py [REF] [--quick] [--scripts bench_queries bench_group ...]``.
REF is a git commit, branch or tag (by default 099a697, spatialcontact 0.1.0). The script
checks REF out in a temporary ``git worktree`` (removed at the end), compiles REF's
``spatialcontact._native`` there when it has one (Eigen's headers from ``cmeel-eigen``, in the
``bench`` extra), and, for each benchmark
script (every ``benchmarks/bench_*.py`` by default), runs ``--runs`` times in turn

- the working tree's script with ``PYTHONPATH`` set to the worktree, so that it imports the
  package as it was at REF, and
- the same script with ``PYTHONPATH`` set to the working tree,

each writing its figures with ``--json`` (the older side first in one round, second in the
next: alternating spreads the drift of a shared machine over both sides). It then prints one
table per script: every row that times the package, the old and new microseconds (medians over
the rounds), new / old (the median of the ratios of the runs of one round), and a flag on rows
more than ``--threshold`` (10 %) slower, or faster.

Where a script relates a row to a raw Coal row timed in turn with it (``sc / raw`` in the same
run), the table also gives "new / old vs raw": that ratio in the new run over the same in the
old run, the median over the rounds. It is what a shared machine disturbs least, since a slow
spell that lasts a run slows both rows of the ratio, and the flag is set from it when there is
one (else from new / old).

Both sides run the working tree's scripts, not the scripts as they were at REF: the statements,
the row names and the timing code are then the same on both sides, so a row's ratio measures
the package only, and the scripts at the baseline cannot write JSON. The scripts look for
features the older package may lack (``hasattr``) and report those rows as missing; they are
"new" here. A script that fails against the older package (it may need a whole module that did
not exist then) is reported and run on the working tree only; one that fails on the working
tree is reported too, and makes the exit status 1 (as ``--strict`` does for a row flagged
slower).

Rows that time code outside the package (raw Coal, numpy, other libraries: a script's
``reference`` rows) run the same code on both sides: how far their new / old ratios spread,
printed under each table, is the noise of the machine during the comparison. A row flagged
within that spread may be noise; run again, or with more ``--runs``, to tell.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _timing import fmt_ratio, fmt_us, machine_lines, read_figures, table

BENCHMARKS = Path(__file__).resolve().parent
ROOT = BENCHMARKS.parent
BASELINE_REF = "099a697"
"""spatialcontact 0.1.0."""
SIDES = ("old", "new")
SCRIPT_TIMEOUT = 1800.0
"""Seconds one benchmark run may take."""


def git(*args: str) -> str:
    """Run git in the repository; its output, stripped (CalledProcessError on failure)."""
    done = subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@contextmanager
def worktree(commit: str) -> Iterator[Path]:
    """A temporary worktree of ``commit``, removed on exit."""
    folder = Path(tempfile.mkdtemp(prefix="spatialcontact-compare-"))
    path = folder / "ref"
    try:
        git("worktree", "add", "--detach", str(path), commit)
        yield path
    finally:
        if path.exists():
            git("worktree", "remove", "--force", str(path))
        shutil.rmtree(folder, ignore_errors=True)


_BUILD = """
import runpy, tempfile
import setuptools
found = {}
setuptools.setup = lambda **kw: found.update(kw)  # the extension, not the project's metadata
runpy.run_path("setup.py", run_name="__main__")
dist = setuptools.Distribution({"name": "spatialcontact", "ext_modules": found["ext_modules"]})
command = dist.get_command_obj("build_ext")
command.inplace = 1
command.build_temp = tempfile.mkdtemp()
dist.run_command("build_ext")
"""
"""Compiles the extension of the ``setup.py`` in the current folder in place."""


def build_native(root: Path) -> None:
    """Compile the compiled module of the package at ``root`` in place, when it has one.

    Without it, the working tree's editable install would supply the working tree's module
    to the older Python code (a mix that is neither version).
    """
    if not (root / "spatialcontact" / "_native.cpp").exists():
        return
    print("- compiling the older package's spatialcontact._native (a minute or two)", flush=True)
    failure = _run([sys.executable, "-c", _BUILD], root, dict(os.environ))
    if failure is not None:
        raise SystemExit(f"could not compile spatialcontact._native in {root}: {failure}")


def _run(command: list[str], cwd: Path, env: dict[str, str]) -> str | None:
    """Run ``command``; None when it succeeds, else its exit code and last line on stderr."""
    done = subprocess.run(
        command,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT,
        check=False,
    )
    if done.returncode == 0:
        return None
    last = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
    return f"exited with {done.returncode}: {last}"


def script_paths(names: Sequence[str] | None) -> list[Path]:
    """The benchmark scripts called ``names`` (with or without ``.py``), or all of them."""
    if not names:
        return sorted(BENCHMARKS.glob("bench_*.py"))
    paths = []
    for name in names:
        path = BENCHMARKS / (name if name.endswith(".py") else f"{name}.py")
        if not path.is_file():
            known = ", ".join(p.stem for p in sorted(BENCHMARKS.glob("bench_*.py")))
            raise SystemExit(f"no benchmark script {name!r} in {BENCHMARKS} (there are: {known})")
        paths.append(path)
    return paths


class ScriptFailed(Exception):
    """A benchmark script exited with an error or wrote no figures."""


def run_script(script: Path, package_root: Path, out: Path, quick: bool) -> dict[str, Any]:
    """Run ``script`` importing the package from ``package_root``; its JSON figures.

    Raises ScriptFailed when the script fails or imported modules the older package lacks
    from elsewhere (an editable install supplies them from the working tree), and SystemExit
    when it imported the package itself from elsewhere.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(package_root), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    command = [sys.executable, str(script), "--json", str(out), *(["--quick"] if quick else [])]
    failure = _run(command, ROOT, env)
    if failure is not None:
        raise ScriptFailed(failure)
    try:
        figures = read_figures(out)
    except (OSError, ValueError) as error:
        raise ScriptFailed(f"wrote no figures with --json ({error})") from error
    imported = figures.get("package", {}).get("path")
    expected = str((package_root / "spatialcontact").resolve())
    if imported != expected:
        raise SystemExit(
            f"{script.name} imported spatialcontact from {imported}, not {expected}: is "
            "PYTHONPATH overridden?"
        )
    foreign = figures["package"].get("foreign")
    if foreign:  # an editable install fills in what the older package lacks: not that package
        raise ScriptFailed(
            f"it imported {', '.join(foreign)} from outside {expected}, which the package "
            "there lacks"
        )
    return figures


@dataclass
class Comparison:
    """One figure over the rounds: old and new microseconds, None where missing, and the
    row's ratio to its reference row in each run when the script relates them."""

    name: str
    old: list[float | None]
    new: list[float | None]
    old_vs_raw: list[float | None] = field(default_factory=list)
    new_vs_raw: list[float | None] = field(default_factory=list)

    @property
    def old_us(self) -> float | None:
        return _median(self.old)

    @property
    def new_us(self) -> float | None:
        return _median(self.new)

    @property
    def ratio(self) -> float | None:
        """Median over the rounds of new / old (rounds with both figures)."""
        return _median_ratio(self.new, self.old)

    @property
    def ratio_vs_raw(self) -> float | None:
        """Median over the rounds of (new / its raw) / (old / its raw)."""
        return _median_ratio(self.new_vs_raw, self.old_vs_raw)

    @property
    def decisive(self) -> float | None:
        """The ratio a flag is set from: against raw when there is one, else new / old."""
        steady = self.ratio_vs_raw
        return self.ratio if steady is None else steady


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _median_ratio(
    numerators: Sequence[float | None], denominators: Sequence[float | None]
) -> float | None:
    return _median(
        [
            n / d
            for n, d in zip(numerators, denominators, strict=False)
            if n is not None and d is not None and d > 0.0
        ]
    )


def compare(runs: Mapping[str, Sequence[Mapping[str, Any]]], kind: str) -> list[Comparison]:
    """Every figure of ``kind`` ("rows" or "reference") in either side's runs, in order."""
    names: dict[str, None] = {}
    for side in SIDES:
        for run in runs[side]:
            names.update(dict.fromkeys(run[kind]))
    return [
        Comparison(
            name,
            [run[kind].get(name) for run in runs["old"]],
            [run[kind].get(name) for run in runs["new"]],
            [_vs_raw(run, name) for run in runs["old"]],
            [_vs_raw(run, name) for run in runs["new"]],
        )
        for name in names
    ]


def _vs_raw(run: Mapping[str, Any], name: str) -> float | None:
    related = run.get("relative", {}).get(name)
    return None if related is None else related["ratio"]


def flag(c: Comparison, threshold: float) -> str:
    if c.old_us is None:
        return "new" if c.new_us is not None else "n/a"
    if c.new_us is None:
        return "missing"
    r = c.decisive
    if r is not None and r > 1.0 + threshold:
        return "SLOWER"
    if r is not None and r < 1.0 - threshold:
        return "faster"
    return ""


def noise_line(reference: Sequence[Comparison]) -> str:
    ratios = [r for r in (c.ratio for c in reference) if r is not None]
    if not ratios:
        return "No reference rows (code outside the package) to gauge the noise by."
    text = (
        f"Noise: the {len(ratios)} reference rows (code outside the package, the same on both "
        f"sides) have new / old {fmt_ratio(statistics.median(ratios))} (median)"
    )
    if len(ratios) >= 10:
        low, *_, high = statistics.quantiles(ratios, n=10)
        text += f", 80 % of them from {fmt_ratio(low)} to {fmt_ratio(high)}"
    return text + f", all from {fmt_ratio(min(ratios))} to {fmt_ratio(max(ratios))}."


def report(
    script: str,
    runs: Mapping[str, Sequence[Mapping[str, Any]]],
    failed: Mapping[str, str],
    threshold: float,
) -> list[str]:
    """Print the table of one script; the names of its rows flagged slower.

    ``failed`` maps a side whose runs failed to why (that side then has no figures).
    """
    counts = " and ".join(f"{len(runs[side])} {side}" for side in SIDES)
    print(f"\n## {script} ({counts} runs, alternated)\n")
    for side, why in failed.items():
        print(f"The {side} side failed, {why}.\n")
    rows = compare(runs, "rows")
    if not rows:
        return []
    cells = [
        [
            c.name,
            fmt_us(c.old_us),
            fmt_us(c.new_us),
            fmt_ratio(c.ratio),
            fmt_ratio(c.ratio_vs_raw),
            flag(c, threshold),
        ]
        for c in rows
    ]
    headers = ["row", "old µs", "new µs", "new / old", "new / old vs raw", "flag"]
    print(table(headers, cells, right=[False, True, True, True, True, False]))
    print(f"\n{noise_line(compare(runs, 'reference'))}")
    return [c.name for c in rows if flag(c, threshold) == "SLOWER"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument(
        "ref", nargs="?", default=BASELINE_REF, help=f"the older version ({BASELINE_REF})"
    )
    parser.add_argument("--quick", action="store_true", help="run the scripts with --quick")
    parser.add_argument(
        "--scripts", nargs="+", metavar="NAME", help="benchmark scripts to run (all by default)"
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of each side per script (3)")
    parser.add_argument(
        "--threshold", type=float, default=0.10, help="flag rows slower by more than this (0.10)"
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit with 1 when a row is flagged slower"
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error(f"--runs must be >= 1, got {args.runs}")
    if not args.threshold > 0.0:
        parser.error(f"--threshold must be > 0, got {args.threshold}")
    scripts = script_paths(args.scripts)
    try:
        commit = git("rev-parse", "--verify", f"{args.ref}^{{commit}}")
    except subprocess.CalledProcessError:
        parser.error(f"{args.ref!r} is not a commit of the repository at {ROOT}")
    head = git("rev-parse", "--short", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    print("# Benchmarks: the working tree against an older spatialcontact\n")
    for text in machine_lines(["coal", "numpy"]):
        print(f"- {text}")
    print(f"- old: {args.ref} ({commit[:10]}), in a temporary git worktree")
    print(f"- new: the working tree at {ROOT} (HEAD {head}{', with changes' if dirty else ''})")
    print(
        f"- both run the working tree's scripts{' with --quick' if args.quick else ''}, "
        f"{args.runs} runs of each side, alternately; µs are medians over the runs, new / old "
        "the median of the ratios of the runs taken side by side"
    )
    slower: dict[str, list[str]] = {}
    with worktree(commit) as old_root, tempfile.TemporaryDirectory() as out:
        build_native(old_root)
        roots = {"old": old_root, "new": ROOT}
        results: dict[str, dict[str, list[dict[str, Any]]]] = {
            s.stem: {side: [] for side in SIDES} for s in scripts
        }
        failed: dict[str, dict[str, str]] = {s.stem: {} for s in scripts}
        for k in range(args.runs):
            for script in scripts:
                for side in SIDES if k % 2 == 0 else SIDES[::-1]:
                    if side in failed[script.stem]:
                        continue  # it fails the same way every time
                    path = Path(out) / f"{script.stem}-{side}-{k}.json"
                    try:
                        figures = run_script(script, roots[side], path, args.quick)
                    except ScriptFailed as error:
                        failed[script.stem][side] = str(error)
                        continue
                    results[script.stem][side].append(figures)
                print(f"  round {k + 1} of {args.runs}: {script.stem} done", file=sys.stderr)
    for script in scripts:
        slower[script.stem] = report(
            script.stem, results[script.stem], failed[script.stem], args.threshold
        )
    flagged = [f"{s}: {name}" for s, names in slower.items() for name in names]
    print(
        f"\n## Summary\n\n{len(flagged)} rows more than {args.threshold:.0%} slower (SLOWER: "
        "by new / old vs raw where there is one, else by new / old)" + (":" if flagged else ".")
    )
    for text in flagged:
        print(f"- {text}")
    broken = [s for s, sides in failed.items() if "new" in sides]
    if broken:
        print(f"\nFailed on the working tree: {', '.join(broken)}.")
    return 1 if broken or (args.strict and flagged) else 0


if __name__ == "__main__":
    sys.exit(main())
