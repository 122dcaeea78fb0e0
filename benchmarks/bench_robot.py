"""The Panda's collision checks: spatialcontact.robot against pinocchio and raw Coal loops.

Run ``python benchmarks/bench_robot.py`` (a few minutes) or add ``--quick`` (under a minute,
rough figures); ``--json PATH`` writes every figure. Everything uses the shipped Panda
(``geometry="mesh"``: the same STL meshes pinocchio loads, and the same link pairs after the
SRDF), in three worlds: the robot alone (self-collision), a 6-box shelf in front of it, and
200 boxes of 0.1 m spread over 4 m x 4 m x 1.5 m around it. For each it times, in µs per
configuration (the median over repeats of the mean over a fixed set of random
configurations):

- ``RobotModel.in_collision(q, scene)``, one call per configuration;
- ``RobotModel.check(Q, scene)`` over 10,000 configurations at once;
- pinocchio's ``computeCollisions(model, data, geom, geom_data, q, True)`` (forward
  kinematics, placements and every pair until the first collision, in C++), with the boxes
  added as geometry objects paired with every robot geometry;
- a naive Python loop of raw Coal calls (cached ``ComputeCollision`` functors, persistent
  transforms set from poses computed beforehand, until the first collision);

and ``check_motions`` on 1-radian free motions in the shelf (the largest joint change is 1
radian, and a 0.005 rad discretisation finds no collision), all in one call and one
``check_motion`` call per motion, against pinocchio checking the same motion at 0.05 rad
steps (100 motions: a motion's cost varies tenfold with how close it passes to the shelf,
and the slowest tenth take about 40% of the time, so a small sample misleads).
``geometry="convex"`` figures are printed beside the mesh ones, and the sphere
model's (``geometry="spheres"``: the kernel against computeCollisions and the exact check,
free motions per second, the false-positive rate and the first call in a new process; see
``bench_spheres.py``) after them.
Every answer is compared with pinocchio's (or the loop's) before anything is timed. Compare
the ratios (medians of side-by-side ratios), not the absolute times: the machine is shared.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import coal
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

from spatialcontact import Cuboid, Scene, meshes
from spatialcontact.robot import RobotModel

try:
    import pinocchio as pin
except ImportError:  # the pinocchio columns and targets then read n/a
    pin = None
NUMBA = importlib.util.find_spec("numba") is not None
"""Whether the sphere kernel can run (else the sphere-prefilter rows read n/a)."""

TARGET_SINGLE = 1.5
"""One in_collision call may cost at most this many times pinocchio's computeCollisions."""
TARGET_MANY = 1.0
"""check per configuration may cost at most this many times pinocchio's."""
TARGET_NAIVE = 30.0
"""Panda vs 200 boxes: in_collision at least this many times faster than the naive loop."""
TARGET_MOTION = 5.0
"""check_motion, one call per motion, at least this many times faster than pinocchio at
0.05 rad steps (the batched check_motions is printed beside it)."""

PREFILTER_COUNT = 16
"""Covering spheres a link in the motion prefilter (RobotModel.set_motion_prefilter)."""

STEP = 0.05
"""Radians: pinocchio's discretisation of a motion (largest joint change per step)."""
FINE = 0.005
"""Radians: the discretisation that decides which motions are free."""


def pose(x: float, y: float, z: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def shelf() -> Scene:
    scene = Scene()
    x, depth, width, height = 0.6, 0.3, 0.8, 0.9
    scene.add(Cuboid([depth, 0.02, height], pose=pose(x, -width / 2, height / 2)), "side_left")
    scene.add(Cuboid([depth, 0.02, height], pose=pose(x, width / 2, height / 2)), "side_right")
    scene.add(Cuboid([0.02, width, height], pose=pose(x + depth / 2, 0, height / 2)), "back")
    for name, z in (("board_low", 0.2), ("board_mid", 0.5), ("board_top", 0.85)):
        scene.add(Cuboid([depth, width, 0.02], pose=pose(x, 0.0, z)), name)
    return scene


def boxes(n: int, rng: np.random.Generator) -> Scene:
    """``n`` boxes of 0.1 m over 4 m x 4 m x 1.5 m, none within 0.3 m of the base's axis."""
    scene = Scene()
    while len(scene) < n:
        x, y, z = rng.uniform([-2, -2, 0], [2, 2, 1.5])
        if x * x + y * y > 0.09:
            scene.add(Cuboid([0.1, 0.1, 0.1], pose=pose(x, y, z)), f"box{len(scene)}")
    return scene


# ----------------------------------------------------------------------------- peers


class Pinocchio:
    """pinocchio's model of the same URDF, SRDF and scene boxes."""

    def __init__(self, scene: Scene | None) -> None:
        folder = meshes.path("panda")
        urdf = str(folder / "panda.urdf")
        self.model = pin.buildModelFromUrdf(urdf)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # about package dirs given twice
            geom = pin.buildGeomFromUrdf(
                self.model, urdf, pin.GeometryType.COLLISION, [str(folder)]
            )
        geom.addAllCollisionPairs()
        pin.removeCollisionPairs(self.model, geom, str(folder / "panda.srdf"))
        n_robot = geom.ngeoms
        for name in () if scene is None else scene.names:
            box = scene[name]  # type: ignore[index]
            assert isinstance(box, Cuboid)
            W = box.world_T
            placement = pin.SE3(W[:3, :3], W[:3, 3])
            index = geom.addGeometryObject(
                pin.GeometryObject(name, 0, placement, coal.Box(*box.scale))
            )
            for i in range(n_robot):
                geom.addCollisionPair(pin.CollisionPair(i, index))
        self.geom = geom
        self.data = self.model.createData()
        self.geom_data = pin.GeometryData(geom)

    @staticmethod
    def q(q: np.ndarray) -> np.ndarray:
        """pinocchio's configuration: its second finger joint is a joint of its own."""
        return np.append(q, q[-1])

    def collides(self, q: np.ndarray) -> bool:
        return bool(
            pin.computeCollisions(self.model, self.data, self.geom, self.geom_data, q, True)
        )


class NaiveLoop:
    """Raw Coal: one cached functor per checked pair, persistent transforms, first hit."""

    def __init__(self, robot: RobotModel, scene: Scene | None) -> None:
        leaves = robot.group.leaves()
        geometries = []
        for leaf in leaves:
            g = leaf._build_geometry()  # a geometry of its own, shared with nothing
            g.computeLocalAABB()
            geometries.append(g)
        self.tfs = [coal.Transform3s() for _ in leaves]
        request = coal.CollisionRequest()
        request.distance_upper_bound = 0.0
        self.pairs = [
            (coal.ComputeCollision(geometries[a], geometries[b]), a, b, request)
            for a, b in zip(robot._pair_a.tolist(), robot._pair_b.tolist(), strict=True)
        ]
        self.obstacles = []
        self.geometries = geometries  # the functors hold raw pointers: keep every geometry
        for name in () if scene is None else scene.names:
            box = scene[name]  # type: ignore[index]
            g = box._build_geometry()
            geometries.append(g)
            W = box.world_T
            tf = coal.Transform3s(W[:3, :3], W[:3, 3])
            self.obstacles += [
                (coal.ComputeCollision(geometries[e], g), e, tf, request)
                for e in range(len(leaves))
            ]
        self.result = coal.CollisionResult()
        self.robot = robot

    def poses(self, Q: np.ndarray) -> np.ndarray:
        """Every leaf's world pose (N, E, 4, 4), computed before timing."""
        robot = self.robot
        T = robot._kin.body_poses_many(Q)
        return T[:, robot._element_body] @ robot._T_body_element

    def collides(self, P: np.ndarray) -> bool:
        tfs, result = self.tfs, self.result
        for tf, T in zip(tfs, P, strict=True):
            tf.setTransform(T[:3, :3], T[:3, 3])
        for functor, a, b, request in self.pairs:
            result.clear()
            if functor(tfs[a], tfs[b], request, result):
                return True
        for functor, e, tf, request in self.obstacles:
            result.clear()
            if functor(tfs[e], tf, request, result):
                return True
        return False


# ------------------------------------------------------------------------- the worlds


def per_config(f: Callable[[Any], object], items: Sequence[Any]) -> Callable[[], None]:
    def run() -> None:
        for item in items:
            f(item)

    return run


def world_rows(
    name: str,
    scene: Scene | None,
    robots: dict[str, RobotModel],
    settings: Settings,
    figures: Figures,
    checks: list[str],
    n_many: int,
    n_single: int,
) -> dict[str, float | None]:
    """Time one world; returns the ratios the targets need."""
    mesh, convex = robots["mesh"], robots["convex"]
    Q = mesh.sample(n_many, np.random.default_rng(len(name)))
    single = Q[:n_single]
    ours = np.array([mesh.in_collision(q, scene) for q in single])
    assert mesh.check(single, scene).tolist() == ours.tolist()
    line = f"{name}: {ours.mean():.1%} of {n_single} configurations collide"
    peer = Pinocchio(scene) if pin is not None else None
    if peer is not None:
        theirs = [peer.collides(peer.q(q)) for q in single]
        mismatch = int(np.sum(ours != np.array(theirs)))
        line += f"; pinocchio disagrees on {mismatch}"
        assert mismatch == 0, f"{name}: {mismatch} configurations differ from pinocchio"
    naive = NaiveLoop(mesh, scene)
    P = naive.poses(single)
    assert [naive.collides(p) for p in P] == ours.tolist()
    checks.append(line + "; the naive loop agrees")
    cases: dict[str, Callable[[], object]] = {
        "mesh single": per_config(lambda q: mesh.in_collision(q, scene), list(single)),
        "mesh many": lambda: mesh.check(Q, scene),
        "convex single": per_config(lambda q: convex.in_collision(q, scene), list(single)),
        "convex many": lambda: convex.check(Q, scene),
        "naive loop": per_config(naive.collides, list(P)),
    }
    if peer is not None:
        QQ = [peer.q(q) for q in single]
        cases["pinocchio"] = per_config(peer.collides, QQ)
    samples = interleaved_samples(cases, repeat=settings.repeat, min_time=settings.min_time)
    counts = {k: (n_many if k.endswith("many") else n_single) for k in cases}
    us = {k: [t / counts[k] for t in v] for k, v in samples.items()}
    for k, v in us.items():
        figures.add(
            f"{name}: {k}", statistics.median(v), reference=k in ("pinocchio", "naive loop")
        )
    pin_us = us.get("pinocchio")
    ratios: dict[str, float | None] = {
        "single": paired_ratio(us["mesh single"], pin_us),
        "many": paired_ratio(us["mesh many"], pin_us),
        "naive": paired_ratio(us["naive loop"], us["mesh single"]),
    }
    for k, r in ratios.items():
        figures.ratio(f"{name}: {k}", r)
    return {
        **{f"{k} µs": statistics.median(v) for k, v in us.items()},
        **ratios,
        "convex single ratio": paired_ratio(us["convex single"], pin_us),
        "convex many ratio": paired_ratio(us["convex many"], pin_us),
    }


def free_motions(
    robot: RobotModel, scene: Scene, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` motions from free starts whose largest joint change is 1 radian (the fingers
    still) and that a 0.005 rad discretisation finds free."""
    Q0: list[np.ndarray] = []
    Q1: list[np.ndarray] = []
    low, high = robot.limits[:, 0], robot.limits[:, 1]
    while len(Q0) < n:
        q0 = robot.sample(1, rng)[0]
        change = rng.normal(size=robot.dof)
        change[-1] = 0.0
        q1 = q0 + change / np.abs(change).max()
        if (q1 < low).any() or (q1 > high).any() or robot.in_collision(q0, scene):
            continue
        steps = int(np.ceil(1.0 / FINE))
        if not robot.check(q0 + np.linspace(0, 1, steps + 1)[:, None] * (q1 - q0), scene).any():
            Q0.append(q0)
            Q1.append(q1)
    return np.array(Q0), np.array(Q1)


def motion_rows(
    robots: dict[str, RobotModel],
    settings: Settings,
    figures: Figures,
    checks: list[str],
    n: int,
) -> dict[str, float | None]:
    scene = shelf()
    mesh, convex = robots["mesh"], robots["convex"]
    Q0, Q1 = free_motions(mesh, scene, n, np.random.default_rng(7))
    proved = mesh.check_motions(Q0, Q1, scene)
    proved_convex = convex.check_motions(Q0, Q1, scene)
    checks.append(
        f"motions: {int(proved.sum())} of {n} free 1-radian motions proved free (mesh), "
        f"{int(proved_convex.sum())} (convex, whose hulls fill the links' hollows)"
    )
    pairs = list(zip(Q0, Q1, strict=True))
    cases: dict[str, Callable[[], object]] = {
        "mesh check_motion": lambda: mesh.check_motions(Q0, Q1, scene),
        "mesh one by one": lambda: [mesh.check_motion(a, b, scene) for a, b in pairs],
        "convex check_motion": lambda: convex.check_motions(Q0, Q1, scene),
    }
    if NUMBA:
        # The same mesh robot, with PREFILTER_COUNT covering spheres per link proving the
        # motions they can (set_motion_prefilter), the exact bounds the others.
        filtered = robots["mesh, prefiltered"]
        filtered.set_motion_prefilter(filtered.spheres(PREFILTER_COUNT))
        filtered.check_motion(Q0[0], Q1[0], scene)  # the kernel compiled or loaded
        answers = filtered.check_motions(Q0, Q1, scene)
        assert answers.all(), "the prefilter calls a free motion not free"
        checks.append(
            f"motions with the prefilter: {int(answers.sum())} of {n} proved free, "
            f"{int(filtered._prefilter._proved_free(Q0, Q1, scene, 1e-3).sum())} of them by "
            "the spheres alone"
        )
        cases["prefiltered check_motion"] = lambda: filtered.check_motions(Q0, Q1, scene)
        cases["prefiltered one by one"] = lambda: [
            filtered.check_motion(a, b, scene) for a, b in pairs
        ]
    steps = int(np.ceil(1.0 / STEP))
    grid = np.linspace(0.0, 1.0, steps + 1)[:, None]
    if pin is not None:
        peer = Pinocchio(scene)
        paths = [[peer.q(q) for q in q0 + grid * (q1 - q0)] for q0, q1 in zip(Q0, Q1, strict=True)]
        assert not any(peer.collides(q) for path in paths for q in path)

        def discretised() -> None:
            for path in paths:
                for q in path:
                    if peer.collides(q):
                        break

        cases["pinocchio at 0.05 rad"] = discretised
    samples = interleaved_samples(cases, repeat=settings.repeat, min_time=settings.min_time)
    us = {k: [t / n for t in v] for k, v in samples.items()}
    for k, v in us.items():
        figures.add(f"motion: {k}", statistics.median(v), reference=k.startswith("pinocchio"))
    theirs = us.get("pinocchio at 0.05 rad")
    ratio = paired_ratio(theirs, us["mesh check_motion"])
    figures.ratio("motion: pinocchio / mesh", ratio)
    one_by_one = paired_ratio(theirs, us["mesh one by one"])
    figures.ratio("motion: pinocchio / mesh one by one", one_by_one)
    return {
        **{f"{k} µs": statistics.median(v) for k, v in us.items()},
        "ratio": ratio,
        "one by one ratio": one_by_one,
        "convex ratio": paired_ratio(theirs, us["convex check_motion"]),
        **{
            f"{k} ratio": paired_ratio(theirs, us[k])
            for k in ("prefiltered check_motion", "prefiltered one by one")
            if k in us
        },
    }


# ------------------------------------------------------------------------------- main


def at_most(figures: Figures, name: str, text: str, measured: float | None, limit: float) -> str:
    """A PASS/FAIL line for a ratio that must be at most ``limit``."""
    result = figures.target(name, f"{text} <= {limit:g}", measured, limit)
    return f"{result}: {text} = {fmt_ratio(measured)} (target <= {limit:g}x)"


def at_least(figures: Figures, name: str, text: str, measured: float | None, limit: float) -> str:
    """A PASS/FAIL line for a speed-up that must be at least ``limit`` (recorded inverted)."""
    inverse = None if measured is None else 1.0 / measured
    result = figures.target(name, f"1 / ({text}) <= 1 / {limit:g}", inverse, 1.0 / limit)
    return f"{result}: {text} = {fmt_ratio(measured)} (target >= {limit:g}x)"


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse_settings(__doc__.splitlines()[0], argv, repeat=9)
    n_many = 1_000 if settings.quick else 10_000
    n_single = 50 if settings.quick else 300
    n_motions = 10 if settings.quick else 100
    figures = Figures("bench_robot", ["spatialcontact", "coal", "numpy", "numba", "pin"])
    print("# Robot collision checks (Franka Panda)\n")
    for line in figures.machine:
        print(f"- {line}")
    print(
        f"- {settings.repeat} timings per case, each at least {settings.min_time * 1e3:g} ms; "
        "µs per configuration (median); ratios are medians of side-by-side ratios"
    )
    folder = meshes.path("panda")
    robots = {
        "mesh": RobotModel.from_urdf(folder / "panda.urdf", srdf=folder / "panda.srdf"),
        "convex": RobotModel.from_urdf(
            folder / "panda.urdf", srdf=folder / "panda.srdf", geometry="convex"
        ),
        "mesh, prefiltered": RobotModel.from_urdf(
            folder / "panda.urdf", srdf=folder / "panda.srdf"
        ),
    }
    checks: list[str] = []
    worlds = {
        "self": None,
        "shelf (6 boxes)": shelf(),
        "200 boxes": boxes(200, np.random.default_rng(200)),
    }
    results = {
        name: world_rows(name, scene, robots, settings, figures, checks, n_many, n_single)
        for name, scene in worlds.items()
    }
    motion = motion_rows(robots, settings, figures, checks, n_motions)
    print()
    for line in checks:
        print(f"- {line}")

    print("\n## Configurations (µs per configuration)\n")
    print(
        f"single: one in_collision call per configuration ({n_single} configurations); many: "
        f"check over {n_many:,} at once; pinocchio: computeCollisions, stopping "
        "at the first collision; naive: a Python loop of raw Coal calls to the first hit.\n"
    )
    rows = []
    for name, r in results.items():
        rows.append([
            name,
            fmt_us(r["mesh single µs"]),
            fmt_us(r["mesh many µs"]),
            fmt_us(r.get("pinocchio µs")),
            fmt_us(r["naive loop µs"]),
            fmt_ratio(r["single"]),
            fmt_ratio(r["many"]),
            fmt_us(r["convex single µs"]),
            fmt_us(r["convex many µs"]),
        ])  # fmt: skip
    headers = ["world", "mesh single", "mesh many", "pinocchio", "naive loop", "single / pin",
               "many / pin", "convex single", "convex many"]  # fmt: skip
    print(table(headers, rows))

    print(f"\n## Motions (µs per motion, {n_motions} free 1-radian motions in the shelf)\n")
    print(
        "check_motions proves each motion free with distance bounds (the motions of one call "
        "share the numpy work of each round); pinocchio checks the "
        f"motion's {int(np.ceil(1 / STEP)) + 1} configurations at {STEP} rad steps.\n"
    )
    print(
        table(
            ["check", "µs per motion", "pinocchio / this"],
            [
                [
                    "mesh check_motions (all at once)",
                    fmt_us(motion["mesh check_motion µs"]),
                    fmt_ratio(motion["ratio"]),
                ],
                [
                    "mesh check_motion (one call each)",
                    fmt_us(motion["mesh one by one µs"]),
                    fmt_ratio(motion["one by one ratio"]),
                ],
                [
                    "convex check_motions (all at once)",
                    fmt_us(motion["convex check_motion µs"]),
                    fmt_ratio(motion["convex ratio"]),
                ],
                [
                    f"mesh + sphere prefilter ({PREFILTER_COUNT} a link), check_motions",
                    fmt_us(motion.get("prefiltered check_motion µs")),
                    fmt_ratio(motion.get("prefiltered check_motion ratio")),
                ],
                [
                    f"mesh + sphere prefilter ({PREFILTER_COUNT} a link), one call each",
                    fmt_us(motion.get("prefiltered one by one µs")),
                    fmt_ratio(motion.get("prefiltered one by one ratio")),
                ],
                ["pinocchio at 0.05 rad", fmt_us(motion.get("pinocchio at 0.05 rad µs")), "1.00×"],
            ],
        )
    )
    from bench_spheres import sphere_section  # it imports this module: not at the top

    sphere_lines = sphere_section(settings, figures, prefix="spheres: ")
    print("\n## Targets\n")
    lines = []
    for name in ("self", "shelf (6 boxes)"):
        r = results[name]
        lines.append(
            at_most(
                figures,
                f"{name}: single",
                f"{name}: in_collision / pinocchio",
                r["single"],
                TARGET_SINGLE,
            )
        )
        lines.append(
            at_most(
                figures,
                f"{name}: many",
                f"{name}: check per configuration / pinocchio",
                r["many"],
                TARGET_MANY,
            )
        )
    lines.append(
        at_least(
            figures,
            "200 boxes: naive",
            "200 boxes: naive loop / in_collision",
            results["200 boxes"]["naive"],
            TARGET_NAIVE,
        )
    )
    lines.append(
        at_least(
            figures,
            "motion",
            f"shelf motions: pinocchio at {STEP} rad / check_motion (one call each)",
            motion["one by one ratio"],
            TARGET_MOTION,
        )
    )
    lines.append(
        at_least(
            figures,
            "motion, prefiltered",
            f"shelf motions: pinocchio at {STEP} rad / check_motion with the sphere prefilter "
            "(one call each)",
            motion.get("prefiltered one by one ratio"),
            TARGET_MOTION,
        )
    )
    for line in lines + sphere_lines:
        print(f"- {line}")
    figures.write(settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
