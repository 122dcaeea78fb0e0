"""The soak run of ``benchmarks/soak.py``, short: memory stays flat and dropped objects are freed.

The full run (10 million queries) is ``python benchmarks/soak.py``; here the same script runs
100,000 queries in a child process (its RSS is its own, and a crash is a failure, not the end
of the test run) and must exit with 0: RSS growth after the warm-up under 20 MB and every
dropped shape, scene and robot collected. The script's own checks are tested to fail on a leak.
"""

from __future__ import annotations

import gc
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import spatialcontact as sc

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "soak.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("soak", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("soak", module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


soak = _load()


def test_a_short_soak_keeps_memory_flat_and_frees_what_it_drops() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--queries", "100000", "--warmup", "0.3"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    rows = re.findall(r"^\| +([\w%-]+) \| +([\d,]+) \|", out, re.MULTILINE)
    labels = [label for label, _ in rows]
    assert labels == ["start", "warm-up"] + [f"{10 * k}%" for k in range(1, 10)] + ["end"]
    assert int(rows[-1][1].replace(",", "")) >= 100_000
    growth = re.search(r"largest growth after warm-up ([-+][\d.]+) MiB", out)
    assert growth is not None and float(growth[1]) < 20.0, out
    dropped = re.search(r"dropped and watched: ([\d,]+) shapes, ([\d,]+) scenes, (\d+) robots", out)
    assert dropped is not None, out
    shapes, scenes, robots = (int(x.replace(",", "")) for x in dropped.groups())
    assert shapes > 500 and scenes > 10 and robots == 10  # one per tenth of the run
    assert "alive after gc: 0" in out and out.rstrip().endswith("OK")


def test_the_checkpoints() -> None:
    assert list(soak._marks(1000, 0.05)) == [
        ("warm-up", 50),
        *[(f"{10 * k}%", 100 * k) for k in range(1, 10)],
        ("end", 1000),
    ]


def test_a_dropped_object_still_held_is_found() -> None:
    watcher = soak.Soak.__new__(soak.Soak)  # only the watching part: no shapes or robots
    watcher.watched, watcher.dropped = [], {"shape": 0, "scene": 0, "robot": 0}
    held, scene = sc.Sphere(0.5), sc.Scene()
    scene.add(held)
    cycle: list[object] = [sc.Cuboid([1, 1, 1])]
    cycle.append(cycle)  # freed by the garbage collector only
    for kind, obj in (("shape", held), ("scene", scene), ("shape", cycle[0])):
        watcher.watch(kind, obj)
    del scene, cycle, obj
    alive = watcher.alive()
    assert len(alive) == 1 and alive[0].startswith("shape: Sphere(radius=0.5")
    assert watcher.dropped == {"shape": 2, "scene": 1, "robot": 0} and watcher.watched == []
    assert watcher.alive() == []  # forgotten once reported


def test_rss_follows_what_is_allocated() -> None:
    gc.collect()
    before = soak.rss_mb()
    block = bytearray(64 * 2**20)  # zero-filled: its pages are touched
    assert soak.rss_mb() - before > 50.0
    del block
    assert soak.rss_mb() - before < 30.0


@pytest.mark.parametrize("args", [["--queries", "0"], ["--warmup", "1.5"], ["--warmup", "0"]])
def test_bad_arguments_are_refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        soak.main(args)
    assert exit_info.value.code == 2
    assert "--queries must be >= 1 and --warmup in (0, 1)" in capsys.readouterr().err
