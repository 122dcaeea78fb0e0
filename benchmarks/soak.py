"""Soak: millions of mixed queries, checking that memory stays flat and dropped objects are freed.

Run ``python benchmarks/soak.py`` (10 million queries; ``--queries N`` for another count). It
prints the resident set size (RSS) at the start, after the warm-up, at every tenth of the run
and at the end, the growth after the warm-up, and how many dropped shapes, scenes and robots
were still alive after a garbage collection. It exits with 1 when the RSS grew by more than
``--limit`` MB (20 by default) after the warm-up, or when a dropped object was not freed.
``tests/test_soak.py`` runs the same code on fewer queries.

What one round does (each call of a query method counts as one query):

- pair queries between shapes of every type (sphere, cuboid, cylinder, capsule, cone,
  ellipsoid, half-space, mesh, convex hull, octree, a group of two): one of the pair moves to
  a new pose, then ``iscollided``, ``distance``, ``closest_point`` or ``contacts`` in turn;
  once over every pair, then 8 times over the pairs of primitives (sphere to ellipsoid), as
  a planner asks many more cheap queries than mesh and octree ones;
- a scene of 29 objects (copies of the shapes above but the ellipsoid, a floor and a Panda
  arm's group), one of them and a probe capsule moved before each of ``in_collision``,
  ``collisions``, ``contacts``, ``collide(probe)`` and ``distance(probe)``;
- adds and removes: a new shape (a sphere, a mesh from arrays or a group, in turn) is added to
  the scene, queried and removed, then dropped;
- a Panda arm (``spatialcontact.meshes.path("panda")``, mesh geometry) asked
  ``self_collision(q)`` at random configurations, and in every 2nd, 8th and 32nd round
  ``in_collision(q, scene)``, ``colliding_pairs(q, scene)`` and ``check_motion``;
- every 50 rounds a scene of its own is made, queried and dropped; at every tenth of the run
  the robot is replaced by a copy (pickle) and the old one dropped.

Each dropped shape, scene and robot is watched with a ``weakref``; at every tenth of the run a
``gc.collect()`` runs and every watched object must be gone.

RSS is read from ``/proc/self/statm`` (Linux).
"""

from __future__ import annotations

import argparse
import copy
import gc
import os
import pickle
import sys
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import spatialcontact as sc
from spatialcontact import meshes

QUERIES = 10_000_000
WARMUP_FRACTION = 0.05
"""Share of the queries run before the reference RSS is taken (caches reach their size)."""
LIMIT_MB = 20.0
POSES = 256
"""Random poses drawn once; shapes move among them."""
SCENE_EVERY = 50
"""Rounds between two scenes made, queried and dropped."""
PRIMITIVE_SWEEPS = 8
"""Passes over the pairs of primitives (the cheap queries) per round, after one over every pair."""

_PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 2**20 if hasattr(os, "sysconf") else 4096 / 2**20


def rss_mb() -> float:
    """The resident set size of this process in MiB (Linux ``/proc/self/statm``)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE_MB


def _poses(count: int, spread: float, rng: np.random.Generator) -> list[np.ndarray]:
    """``count`` rigid poses: translations in a cube of side ``2 * spread``, random rotations."""
    out = []
    for _ in range(count):
        q = rng.normal(size=4)
        w, x, y, z = q / np.linalg.norm(q)
        T = np.eye(4)
        T[:3, :3] = [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
        T[:3, 3] = rng.uniform(-spread, spread, 3)
        out.append(T)
    return out


def _trans(x: float, y: float, z: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def _icosphere() -> tuple[np.ndarray, np.ndarray]:
    """An icosahedron of radius 0.2 m: vertices (12, 3) and faces (20, 3)."""
    p = (1.0 + 5.0**0.5) / 2.0
    v = np.array(
        [
            [-1, p, 0],
            [1, p, 0],
            [-1, -p, 0],
            [1, -p, 0],
            [0, -1, p],
            [0, 1, p],
            [0, -1, -p],
            [0, 1, -p],
            [p, 0, -1],
            [p, 0, 1],
            [-p, 0, -1],
            [-p, 0, 1],
        ],
        dtype=float,
    )
    v *= 0.2 / np.linalg.norm(v[0])
    f = np.array(
        [
            [0, 11, 5],
            [0, 5, 1],
            [0, 1, 7],
            [0, 7, 10],
            [0, 10, 11],
            [1, 5, 9],
            [5, 11, 4],
            [11, 10, 2],
            [10, 7, 6],
            [7, 1, 8],
            [3, 9, 4],
            [3, 4, 2],
            [3, 2, 6],
            [3, 6, 8],
            [3, 8, 9],
            [4, 9, 5],
            [2, 4, 11],
            [6, 2, 10],
            [8, 6, 7],
            [9, 8, 1],
        ]
    )
    return v, f


VERTICES, FACES = _icosphere()


def shapes_of_every_type() -> list[sc.CollisionShape]:
    """One shape of each type, each about 0.4 m across, at the origin."""
    rng = np.random.default_rng(7)
    return [
        sc.Sphere(0.2),
        sc.Cuboid([0.3, 0.4, 0.2]),
        sc.Cylinder(0.15, 0.4),
        sc.Capsule(0.1, 0.3),
        sc.Cone(0.2, 0.4),
        sc.Ellipsoid([0.2, 0.15, 0.1]),
        sc.HalfSpace([0.0, 0.0, 1.0], -1.5),
        sc.Mesh.from_arrays(VERTICES, FACES),
        sc.ConvexHull(rng.uniform(-0.2, 0.2, (20, 3))),
        sc.OcTree(rng.uniform(-0.2, 0.2, (30, 3)), 0.1),
        sc.CollisionShapeGroup(
            [sc.Sphere(0.1), sc.Cuboid([0.2, 0.2, 0.2], pose=_trans(0.2, 0.0, 0.0))]
        ),
    ]


def _supported(a: sc.CollisionShape, b: sc.CollisionShape) -> bool:
    """False for the pairs Coal answers nothing for (ellipsoid-octree, half-space pairs).

    Pairs with a half-space are left to ``iscollided`` and the scene: two half-spaces have no
    signed distance.
    """
    kinds = {type(a), type(b)}
    return not ({sc.Ellipsoid, sc.OcTree} <= kinds or sc.HalfSpace in kinds)


def panda(geometry: str = "mesh") -> sc.RobotModel:
    """The Panda arm shipped with spatialcontact, with its SRDF."""
    folder = meshes.path("panda")
    return sc.RobotModel.from_urdf(
        folder / "panda.urdf",
        srdf=folder / "panda.srdf",
        geometry=geometry,  # type: ignore[arg-type]
    )


@dataclass
class Checkpoint:
    """One point of the RSS curve."""

    label: str
    queries: int
    rss_mb: float
    seconds: float
    alive: int
    """Watched dropped objects still alive after ``gc.collect()``."""


@dataclass
class SoakResult:
    """What :func:`run` measured."""

    queries: int
    seconds: float
    curve: list[Checkpoint]
    dropped: dict[str, int] = field(default_factory=dict)
    """How many shapes, scenes and robots were dropped and watched, by kind."""
    alive: list[str] = field(default_factory=list)
    """The watched dropped objects found alive (repr), at any checkpoint."""

    @property
    def warm(self) -> Checkpoint:
        return next(c for c in self.curve if c.label == "warm-up")

    @property
    def growth_mb(self) -> float:
        """Largest RSS after the warm-up minus the RSS at the end of the warm-up."""
        after = self.curve[self.curve.index(self.warm) :]
        return max(c.rss_mb for c in after) - self.warm.rss_mb


class Soak:
    """The objects of a soak run and one round of queries on them (:meth:`round`)."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.poses = _poses(POSES, 0.5, self.rng)
        self.far_poses = _poses(POSES, 2.0, self.rng)
        self.shapes = shapes_of_every_type()
        self.pairs = [
            (a, b)
            for i, a in enumerate(self.shapes)
            for b in self.shapes[i + 1 :]
            if _supported(a, b)
        ]
        primitives = self.shapes[:6]
        self.primitive_pairs = [
            (a, b) for i, a in enumerate(primitives) for b in primitives[i + 1 :]
        ]
        self.halfspace_pairs = [
            (a, b)
            for a in self.shapes
            for b in self.shapes
            if isinstance(b, sc.HalfSpace) and a is not b
        ]
        self.robot = panda()
        self.configurations = self.robot.sample(64, self.rng)
        self.scene = sc.Scene()
        self.movers: list[sc.CollisionShape] = []
        kinds = shapes_of_every_type()
        # no ellipsoid (Coal has nothing for it and an octree), one octree (two have no
        # contacts), one half-space (the floor: two have no distance)
        for i in range(27):
            shape = copy.copy(kinds[(0, 1, 2, 3, 4, 7, 8, 10)[i % 8] if i else 9])
            shape.T = self.far_poses[i]
            self.scene.add(shape)
            self.movers.append(shape)
        self.scene.add(sc.HalfSpace([0.0, 0.0, 1.0], -2.5), "floor")
        arm = copy.copy(self.robot.group)  # the arm's links, as shapes of their own
        arm.T = self.far_poses[40]
        self.scene.add(arm, "arm")
        self.probe = sc.Capsule(0.1, 0.4)
        self.watched: list[tuple[str, weakref.ref[Any]]] = []
        self.dropped: dict[str, int] = {"shape": 0, "scene": 0, "robot": 0}
        self.step = 0

    def _pose(self) -> np.ndarray:
        self.step += 1
        return self.poses[(self.step * 2654435761) % POSES]

    def _far_pose(self) -> np.ndarray:
        self.step += 1
        return self.far_poses[(self.step * 40503) % POSES]

    def watch(self, kind: str, obj: Any) -> None:
        """Watch ``obj``, about to be dropped, to check at the next checkpoint that it is freed."""
        self.dropped[kind] += 1
        self.watched.append((kind, weakref.ref(obj)))

    def round(self, k: int) -> int:
        """Round number ``k``; returns the number of queries asked."""
        n = 0
        # pair queries over every type
        for sweep, pairs in enumerate([self.pairs] + [self.primitive_pairs] * PRIMITIVE_SWEEPS):
            for a, b in pairs:
                b.T = self._pose()
                which = (k + sweep + n) % 4
                if which == 0:
                    a.iscollided(b)
                elif which == 1:
                    a.distance(b)
                elif which == 2:
                    a.closest_point(b, 10.0)
                else:
                    a.contacts(b, max_contacts=2)
                n += 1
        for a, b in self.halfspace_pairs[k % 2 :: 2]:
            a.T = self._far_pose()
            b.iscollided(a)
            n += 1
        # the scene, with objects moving
        scene = self.scene
        queries: tuple[Callable[[], object], ...] = (
            scene.in_collision,
            scene.collisions,
            scene.contacts,
            lambda: scene.collide(self.probe),
            lambda: scene.distance(self.probe),
        )
        for j, query in enumerate(queries):
            self.movers[(k * 5 + j) % len(self.movers)].T = self._far_pose()
            self.probe.T = self._far_pose()
            query()
            n += 1
        # adds and removes
        kind = k % 3
        if kind == 0:
            new: sc.CollisionShape = sc.Sphere(0.1 + 0.01 * (k % 7), pose=self._far_pose())
        elif kind == 1:
            new = sc.Mesh.from_arrays(VERTICES, FACES, pose=self._far_pose())
        else:
            new = sc.CollisionShapeGroup(
                [sc.Capsule(0.05, 0.2), sc.Sphere(0.1, pose=self._pose())], pose=self._far_pose()
            )
        name = scene.add(new)
        scene.collide(new)
        scene.in_collision()
        n += 2
        scene.remove(name)
        self.watch("shape", new)
        del new
        # the robot
        robot = self.robot
        q = self.configurations[k % len(self.configurations)]
        robot.self_collision(q)
        n += 1
        if k % 2 == 0:
            robot.in_collision(q, scene)
            n += 1
        if k % 8 == 0:
            robot.colliding_pairs(q, scene)
            n += 1
        if k % 32 == 0:
            robot.check_motion(q, self.configurations[(k + 1) % len(self.configurations)], scene)
            n += 1
        # a scene made and dropped
        if k % SCENE_EVERY == 0:
            other = sc.Scene()
            for shape in (sc.Sphere(0.2), sc.Cuboid([0.3, 0.3, 0.3], pose=self._pose())):
                other.add(shape)
                self.watch("shape", shape)
            other.add(self.shapes[k % 6])  # a shape shared with the pair queries
            other.in_collision()
            other.contacts()
            n += 2
            self.watch("scene", other)
            del other, shape
        return n

    def replace_robot(self) -> None:
        """Drop the robot for a copy of it (a pickle round trip)."""
        old = self.robot
        self.robot = pickle.loads(pickle.dumps(old))
        self.watch("robot", old)
        del old

    def alive(self) -> list[str]:
        """Collect garbage; the watched objects still alive (``kind: repr``). Forgets the rest."""
        gc.collect()
        alive = [f"{kind}: {ref()!r}" for kind, ref in self.watched if ref() is not None]
        self.watched = []
        return alive


def run(
    queries: int = QUERIES,
    *,
    seed: int = 0,
    warmup_fraction: float = WARMUP_FRACTION,
    report: Callable[[Checkpoint], None] | None = None,
) -> SoakResult:
    """Run about ``queries`` queries (whole rounds) and measure RSS and freed objects.

    ``report`` is called with each checkpoint as it is taken.
    """
    gc.collect()
    start = time.perf_counter()
    curve: list[Checkpoint] = []
    alive_found: list[str] = []

    def mark(label: str, done: int, soak: Soak | None) -> None:
        alive = soak.alive() if soak is not None else []
        alive_found.extend(alive)
        point = Checkpoint(label, done, rss_mb(), time.perf_counter() - start, len(alive))
        curve.append(point)
        if report is not None:
            report(point)

    mark("start", 0, None)
    soak = Soak(seed)
    marks = _marks(queries, warmup_fraction)
    label, target = next(marks)
    done = 0
    k = 0
    while True:
        done += soak.round(k)
        k += 1
        while done >= target:
            if label != "warm-up":
                soak.replace_robot()
            mark(label, done, soak)
            if label == "end":
                return SoakResult(
                    done, time.perf_counter() - start, curve, dict(soak.dropped), alive_found
                )
            label, target = next(marks)


def _marks(queries: int, warmup_fraction: float) -> Iterator[tuple[str, int]]:
    """The checkpoints: after the warm-up, at every tenth of the run, at the end."""
    yield "warm-up", max(1, int(queries * warmup_fraction))
    for tenth in range(1, 10):
        yield f"{10 * tenth}%", queries * tenth // 10
    yield "end", queries


def _print_point(point: Checkpoint) -> None:
    print(
        f"| {point.label:>7} | {point.queries:>11,} | {point.seconds:>9.1f} | "
        f"{point.rss_mb:>8.1f} | {point.alive:>5} |",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=QUERIES, help="queries to run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--warmup", type=float, default=WARMUP_FRACTION, help="share of the run before reference"
    )
    parser.add_argument(
        "--limit", type=float, default=LIMIT_MB, help="RSS growth allowed after warm-up, MB"
    )
    args = parser.parse_args(argv)
    if args.queries < 1 or not 0.0 < args.warmup < 1.0:
        parser.error("--queries must be >= 1 and --warmup in (0, 1)")
    print(f"soak: {args.queries:,} queries, seed {args.seed}, python {sys.version.split()[0]}")
    print("| point   |     queries |   seconds | RSS, MiB | alive |")
    print("|---------|-------------|-----------|----------|-------|")
    result = run(args.queries, seed=args.seed, warmup_fraction=args.warmup, report=_print_point)
    start, warm, end = result.curve[0], result.warm, result.curve[-1]
    print(
        f"RSS start {start.rss_mb:.1f} MiB, after warm-up {warm.rss_mb:.1f} MiB, end "
        f"{end.rss_mb:.1f} MiB; largest growth after warm-up {result.growth_mb:+.1f} MiB "
        f"(limit {args.limit:g}); {result.queries:,} queries in {result.seconds:.0f} s "
        f"({1e6 * result.seconds / result.queries:.1f} µs per query)"
    )
    dropped = ", ".join(f"{n:,} {kind}s" for kind, n in result.dropped.items())
    print(f"dropped and watched: {dropped}; alive after gc: {len(result.alive)}")
    for line in result.alive[:10]:
        print("  alive:", line)
    ok = result.growth_mb < args.limit and not result.alive
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
