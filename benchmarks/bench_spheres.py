"""The Panda's sphere model: the compiled kernel against pinocchio and the exact mesh check.

Run ``python benchmarks/bench_spheres.py`` (a few minutes) or add ``--quick`` (rough
figures); ``--json PATH`` writes every figure. The robot is the shipped Panda with its SRDF;
the sphere model is ``RobotModel.from_urdf(..., geometry="spheres")`` (8 covering spheres
fitted per link). The scenes are the robot alone (self-collision) and the 6-box shelf of
``bench_robot.py``. It prints:

- the coverage proof of the fitted spheres, with their overshoot and volume ratio;
- the first ``check`` and ``check_motions`` calls in a new process, with an empty numba cache
  (compiling) and with the cache that run left (loading it); ``--quick`` only loads the
  cache this run wrote;
- answers on 10,000 random configurations in the shelf: false negatives against
  ``geometry="mesh"`` (must be none), the false-positive rate (free with meshes, colliding
  with spheres), and kernel against the numpy reference (must be equal);
- µs per configuration: the sphere kernel's ``check(Q)`` over 100,000 configurations, the
  exact ``check(Q)`` (meshes) over 10,000, and pinocchio's ``computeCollisions`` on the
  meshes (stopping at the first collision) over a few hundred;
- free 1-radian motions per second on one core in the shelf: ``check_motions`` with the
  safe-skip bound and with 0.02 rad steps, on motions a 0.005 rad discretisation of the
  spheres finds free.

Compare the ratios (medians of side-by-side ratios), not the absolute times: the machine is
shared.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Sequence

import numpy as np
from _timing import (
    Figures,
    Settings,
    fmt_ratio,
    fmt_us,
    interleaved_samples,
    paired_ratio,
    parse_settings,
    table,
)
from bench_robot import Pinocchio, pin, shelf

from spatialcontact import Scene, meshes
from spatialcontact.robot import RobotModel
from spatialcontact.spheres import SphereRobotModel, reference

TARGET_PINOCCHIO = 20.0
"""The kernel at least this many times faster per configuration than computeCollisions."""
TARGET_EXACT = 10.0
"""The kernel at least this many times faster per configuration than the exact check(Q)."""
TARGET_MOTIONS = 50_000.0
"""Free 1-radian motions per second on one core, at least."""

FINE = 0.005
"""Radians: the discretisation that picks the free motions."""

_FIRST_CALL = textwrap.dedent(
    """
    import time
    from spatialcontact import Scene, meshes
    from spatialcontact.robot import RobotModel
    folder = meshes.path("panda")
    robot = RobotModel.from_urdf(folder / "panda.urdf", srdf=folder / "panda.srdf",
                                 geometry="spheres")
    Q = robot.sample(10, 0)
    start = time.perf_counter()
    robot.check(Q)
    first = time.perf_counter() - start
    start = time.perf_counter()
    robot.check_motions(Q[:5], Q[5:])
    print(first, time.perf_counter() - start)
    """
)


def first_call(cache: str | None) -> tuple[float, float]:
    """Seconds of the first check and check_motions in a new process, with numba's cache in
    ``cache`` (None: its default place, next to the package)."""
    env = dict(os.environ)
    if cache is not None:
        env["NUMBA_CACHE_DIR"] = cache
    out = subprocess.run(
        [sys.executable, "-c", _FIRST_CALL], env=env, check=True, capture_output=True, text=True
    )
    a, b = out.stdout.split()
    return float(a), float(b)


def one_radian_motions(
    robot: SphereRobotModel, scene: Scene, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` motions whose largest joint change is 1 radian (fingers still) that a 0.005 rad
    discretisation of the sphere model finds free."""
    low, high = robot.limits[:, 0], robot.limits[:, 1]
    Q0: list[np.ndarray] = []
    Q1: list[np.ndarray] = []
    while len(Q0) < n:
        q0 = robot.sample(4 * n, rng)
        change = rng.normal(size=q0.shape)
        change[:, -1] = 0.0
        q1 = q0 + change / np.abs(change).max(axis=1, keepdims=True)
        inside = ((q1 >= low) & (q1 <= high)).all(axis=1)
        q0, q1 = q0[inside], q1[inside]
        free = robot.check_motions(q0, q1, scene, method="discrete", resolution=FINE)
        Q0 += list(q0[free])
        Q1 += list(q1[free])
    return np.array(Q0[:n]), np.array(Q1[:n])


def sphere_section(settings: Settings, figures: Figures, prefix: str = "") -> list[str]:
    """Print the sphere model's tables (coverage, answers, configurations, motions, first
    calls) and return the PASS/FAIL lines of its targets; figures and targets are named
    with ``prefix`` first (``bench_robot.py`` prints them beside its own)."""
    n_answers = 2_000 if settings.quick else 10_000
    n_kernel = 20_000 if settings.quick else 100_000
    n_exact = 1_000 if settings.quick else 10_000
    n_pin = 100 if settings.quick else 500
    n_motions = 500 if settings.quick else 2_000
    folder = meshes.path("panda")
    mesh = RobotModel.from_urdf(folder / "panda.urdf", srdf=folder / "panda.srdf")
    spheres = RobotModel.from_urdf(
        folder / "panda.urdf", srdf=folder / "panda.srdf", geometry="spheres"
    )
    assert isinstance(spheres, SphereRobotModel)
    model = spheres.sphere_model
    report = spheres.spheres_cover()
    print(f"\n## Sphere model: coverage ({model.count} spheres, proved: {report.covered})\n")
    print(report.table())
    scene = shelf()
    rng = np.random.default_rng(13)
    Q = mesh.sample(n_answers, rng)
    exact = mesh.check(Q, scene)
    ours = spheres.check(Q, scene)
    packed = spheres._kernel_robot(), spheres._kernel_scene(scene)
    ref = reference.check_many(packed[0], packed[1], Q) == 1
    missed = int((exact & ~ours).sum())
    false_positive = float((ours & ~exact).sum() / max(int((~exact).sum()), 1))
    print(f"\n## Sphere model: answers ({n_answers:,} random configurations, shelf)\n")
    print(
        table(
            [
                "mesh collides",
                "spheres collide",
                "false negatives",
                "false-positive rate",
                "kernel == numpy reference",
            ],
            [
                [
                    f"{exact.mean():.1%}",
                    f"{ours.mean():.1%}",
                    str(missed),
                    f"{false_positive:.1%}",
                    "yes" if np.array_equal(ours, ref) else "NO",
                ]
            ],
        )
    )
    figures.ratio(f"{prefix}false-positive rate", false_positive)
    figures.ratio(f"{prefix}false negatives", float(missed))
    assert missed == 0, f"{missed} configurations collide with meshes but not with spheres"
    assert np.array_equal(ours, ref), "the kernel and the numpy reference differ"

    rows = []
    ratios: dict[str, tuple[float | None, float | None]] = {}
    worlds: tuple[tuple[str, Scene | None], ...] = (("self", None), ("shelf (6 boxes)", scene))
    for name, world in worlds:
        QK = mesh.sample(n_kernel, rng)
        QE, QP = QK[:n_exact], QK[:n_pin]

        def kernel_check(QK: np.ndarray = QK, world: Scene | None = world) -> object:
            return spheres.check(QK, world)

        def exact_check(QE: np.ndarray = QE, world: Scene | None = world) -> object:
            return mesh.check(QE, world)

        def one_call(QP: np.ndarray = QP, world: Scene | None = world) -> object:
            return [spheres.in_collision(q, world) for q in QP]

        def coal_call(QP: np.ndarray = QP, world: Scene | None = world) -> object:
            return [RobotModel.in_collision(spheres, q, world) for q in QP]

        cases: dict[str, Callable[[], object]] = {
            "spheres check": kernel_check,
            "mesh check": exact_check,
            "spheres in_collision": one_call,
            "Coal on the spheres": coal_call,
        }
        counts = {k: n_pin for k in cases} | {"spheres check": n_kernel, "mesh check": n_exact}
        counts["pinocchio"] = n_pin
        if pin is not None:
            peer = Pinocchio(world)
            QQ = [peer.q(q) for q in QP]

            def pinocchio(peer: Pinocchio = peer, QQ: list[np.ndarray] = QQ) -> None:
                for q in QQ:
                    peer.collides(q)

            cases["pinocchio"] = pinocchio
        samples = interleaved_samples(cases, repeat=settings.repeat, min_time=settings.min_time)
        us = {k: [t / counts[k] for t in v] for k, v in samples.items()}
        for k, v in us.items():
            figures.add(f"{prefix}{name}: {k}", statistics.median(v), reference=k == "pinocchio")
        vs_pin = paired_ratio(us.get("pinocchio"), us["spheres check"])
        vs_exact = paired_ratio(us["mesh check"], us["spheres check"])
        figures.ratio(f"{prefix}{name}: pinocchio / spheres", vs_pin)
        figures.ratio(f"{prefix}{name}: mesh check / spheres", vs_exact)
        ratios[name] = (vs_pin, vs_exact)
        rows.append([
            name,
            fmt_us(statistics.median(us["spheres check"])),
            fmt_us(statistics.median(us["mesh check"])),
            fmt_us(statistics.median(us["spheres in_collision"])),
            fmt_us(statistics.median(us["Coal on the spheres"])),
            fmt_us(statistics.median(us["pinocchio"])) if "pinocchio" in us else "n/a",
            fmt_ratio(vs_pin),
            fmt_ratio(vs_exact),
        ])  # fmt: skip
    print("\n## Sphere model: configurations (µs per configuration)\n")
    print(
        f"spheres: the kernel's check(Q) over {n_kernel:,} configurations; mesh: the exact "
        f"check(Q) over {n_exact:,}; pinocchio: computeCollisions on the meshes over {n_pin}, "
        "stopping at the first collision; one call: in_collision(q, scene) per configuration "
        f"over {n_pin}, in the kernel (the default) and through Coal on the same spheres "
        "(RobotModel.in_collision).\n"
    )
    print(
        table(
            [
                "world",
                "spheres check",
                "mesh check",
                "spheres, one call",
                "Coal on the spheres, one call",
                "pinocchio",
                "pinocchio / spheres",
                "mesh / spheres",
            ],
            rows,
        )
    )

    Q0, Q1 = one_radian_motions(spheres, scene, n_motions, rng)
    proved = spheres.check_motions(Q0, Q1, scene)
    stepped = spheres.check_motions(Q0, Q1, scene, method="discrete")
    motion_cases: dict[str, Callable[[], object]] = {
        "bound": lambda: spheres.check_motions(Q0, Q1, scene),
        "0.02 rad steps": lambda: spheres.check_motions(Q0, Q1, scene, method="discrete"),
    }
    samples = interleaved_samples(motion_cases, repeat=settings.repeat, min_time=settings.min_time)
    per_second = {k: n_motions / (statistics.median(v) * 1e-6) for k, v in samples.items()}
    for k, v in samples.items():
        figures.add(f"{prefix}motion: {k}", statistics.median(v) / n_motions)
    print(
        f"\n## Sphere model: motions ({n_motions:,} free 1-radian motions in the shelf, one core)\n"
    )
    print(
        table(
            ["check_motions", "proved or found free", "µs per motion", "motions per second"],
            [
                [
                    "bound (proof)",
                    f"{int(proved.sum())} of {n_motions}",
                    fmt_us(1e6 / per_second["bound"]),
                    f"{per_second['bound']:,.0f}",
                ],
                [
                    "0.02 rad steps",
                    f"{int(stepped.sum())} of {n_motions}",
                    fmt_us(1e6 / per_second["0.02 rad steps"]),
                    f"{per_second['0.02 rad steps']:,.0f}",
                ],
            ],
        )
    )

    print("\n## Sphere model: first call in a new process (seconds)\n")
    first = []
    if not settings.quick:  # compiling from an empty cache takes a while
        with tempfile.TemporaryDirectory() as cache:
            first.append(("empty (compiles)", first_call(cache)))
            first.append(("written by the run above", first_call(cache)))
    else:
        first.append(("the package's (written by this run)", first_call(None)))
    for label, (check_s, motion_s) in first:
        figures.add(f"{prefix}first call, cache {label}: check", check_s * 1e6)
        figures.add(f"{prefix}first call, cache {label}: check_motions", motion_s * 1e6)
    print(
        table(
            ["numba cache", "first check(Q)", "first check_motions"],
            [[label, f"{a:.2f}", f"{b:.2f}"] for label, (a, b) in first],
        )
    )

    lines = []
    for name, (vs_pin, vs_exact) in ratios.items():
        for text, measured, limit in (
            (f"{prefix}{name}: pinocchio / spheres", vs_pin, TARGET_PINOCCHIO),
            (f"{prefix}{name}: mesh check / spheres", vs_exact, TARGET_EXACT),
        ):
            inverse = None if measured is None else 1.0 / measured
            verdict = figures.target(text, f"1 / ({text}) <= 1 / {limit:g}", inverse, 1 / limit)
            lines.append(f"{verdict}: {text} = {fmt_ratio(measured)} (target >= {limit:g}x)")
    for k, label in (("bound", "proved"), ("0.02 rad steps", "at 0.02 rad steps")):
        rate = per_second[k]
        name = f"{prefix}free motions per second, {label}"
        verdict = figures.target(
            name, "1e6 / rate <= 1e6 / 50000", 1e6 / rate, 1e6 / TARGET_MOTIONS
        )
        lines.append(f"{verdict}: {name} = {rate:,.0f} (target >= {TARGET_MOTIONS:,.0f})")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse_settings(__doc__.splitlines()[0], argv, repeat=7)
    figures = Figures("bench_spheres", ["spatialcontact", "coal", "numpy", "numba", "pin"])
    print("# Sphere-model Panda: compiled kernel\n")
    for line in figures.machine:
        print(f"- {line}")
    print(
        f"- {settings.repeat} timings per case, each at least {settings.min_time * 1e3:g} ms; "
        "µs per configuration (median); ratios are medians of side-by-side ratios"
    )
    lines = sphere_section(settings, figures)
    print("\n## Targets\n")
    for line in lines:
        print(f"- {line}")
    figures.write(settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
