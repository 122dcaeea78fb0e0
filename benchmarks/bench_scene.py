"""A 7-capsule arm among static boxes: Scene queries against raw Coal loops and a numpy prefilter.

Run ``python benchmarks/bench_scene.py`` (under a minute) or add ``--quick`` (a few seconds,
rough figures). The world is an arm of 7 capsules (one ``CollisionShapeGroup``, added to the
scene as one object, so its links are not checked against each other) with its base at the
origin, among 10, 200 and 2,000 static boxes that do not overlap: boxes of 0.1-0.3 m on a
jittered 0.5 m grid, the nearest to the base first, none within 0.4 m of it. 300 random joint
configurations are drawn and the link poses of each computed before any timing. For each
configuration the links' poses are set (not timed), then one query is timed:

- ``scene.in_collision()`` and ``scene.collide(arm)``;
- a naive loop of raw Coal calls, ``coal.collide(link, tf, box, tf, request, result)`` with a
  reused request (``distance_upper_bound=0``, as the shape queries) and result, over every
  box and link: to the first hit (the answer of ``in_collision``) or over all boxes (the
  answer of ``collide(arm)``; a box's remaining links are skipped once it is hit);
- a numpy AABB prefilter (link boxes from the capsule end points, one (7, n) overlap test)
  followed by the same Coal calls on the overlapping pairs;
- Coal's own broadphase from Python: the links in one ``DynamicAABBTreeCollisionManager``,
  the boxes in another, ``setTransform`` + ``computeAABB`` per link, ``update()``, then a
  manager-against-manager ``collide`` with ``CollisionCallBackDefault`` (yes/no: the contacts
  are counted, not read).

A figure is the mean time per configuration, the median over the repeats (the variants are
timed in turn within a repeat). The loops' answers are checked against the scene's first.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import coal
import numpy as np
from _timing import Figures, fmt_ratio, fmt_us, parse_settings, table

import spatialcontact as sc

SIZES = (10, 200, 2000)
CONFIGS = 300
LINKS = 7
LINK_LENGTH = 0.3
"""Distance between two joints of the arm, metres."""
LINK_RADIUS = 0.04
SPACING = 0.5
"""Grid step of the boxes, metres; each box is at most 0.3 m wide and moved by up to 0.05 m."""
CLEARANCE = 0.4
"""No box centre within this distance of the arm's base."""
SLOW_BUDGET = 1.0
"""Seconds per repeat given to each naive loop: it runs on fewer configurations when slower
(0.05 s with ``--quick``)."""


# --------------------------------------------------------------------------------- world


def _rot(axis: int, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    if axis == 2:
        return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def link_poses(q: np.ndarray) -> list[np.ndarray]:
    """Forward kinematics: the (4, 4) world pose of each capsule's centre for joint angles q.

    Joints alternate about z and y; each link runs LINK_LENGTH along its joint frame's z.
    """
    T = np.eye(4)
    poses = []
    for i, angle in enumerate(q):
        J = np.eye(4)
        J[:3, :3] = _rot(2 if i % 2 == 0 else 1, float(angle))
        T = T @ J
        M = T.copy()
        M[:3, 3] = T[:3, 3] + T[:3, 2] * (LINK_LENGTH / 2)
        poses.append(M)
        T[:3, 3] = T[:3, 3] + T[:3, 2] * LINK_LENGTH
    return poses


def box_layout(n: int, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """``n`` boxes as (full sizes (3,), centre (3,)), nearest to the origin first."""
    side = math.ceil(n ** (1 / 3)) + 3
    g = (np.arange(side) - (side - 1) / 2) * SPACING
    cells = np.array(np.meshgrid(g, g, g, indexing="ij")).reshape(3, -1).T
    cells = cells[np.linalg.norm(cells, axis=1) > CLEARANCE]
    cells = cells[np.argsort(np.linalg.norm(cells, axis=1), kind="stable")][:n]
    return [(rng.uniform(0.1, 0.3, 3), c + rng.uniform(-0.05, 0.05, 3)) for c in cells]


@dataclass
class World:
    """One arm among ``n`` boxes, with the same world as a scene and as raw Coal objects."""

    n: int
    scene: sc.Scene
    arm: sc.CollisionShapeGroup
    links: list[sc.CollisionShape]
    box_names: list[str]
    configs: list[list[np.ndarray]]
    link_geometries: list[Any]
    link_tfs: list[list[Any]]
    box_geometries: list[Any]
    box_tfs: list[Any]
    box_lo: np.ndarray
    box_hi: np.ndarray
    stacked: list[np.ndarray]


def make_world(n: int, configs: np.ndarray, seed: int) -> World:
    rng = np.random.default_rng(seed)
    layout = box_layout(n, rng)
    order = rng.permutation(n)  # the raw loops see the boxes in no particular order
    layout = [layout[i] for i in order]
    scene = sc.Scene()
    names = []
    for size, centre in layout:
        T = np.eye(4)
        T[:3, 3] = centre
        names.append(scene.add(sc.Cuboid(size, pose=T)))
    arm = sc.CollisionShapeGroup(
        [sc.Capsule(LINK_RADIUS, LINK_LENGTH - 2 * LINK_RADIUS) for _ in range(LINKS)]
    )
    scene.add(arm, "arm")
    poses = [link_poses(q) for q in configs]
    half = np.array([s for s, _ in layout]) / 2
    centres = np.array([c for _, c in layout])
    return World(
        n=n,
        scene=scene,
        arm=arm,
        links=list(arm),
        box_names=names,
        configs=poses,
        link_geometries=[link._geometry for link in arm],
        link_tfs=[[coal.Transform3s(M[:3, :3].copy(), M[:3, 3].copy()) for M in p] for p in poses],
        box_geometries=[box._geometry for box in (scene[name] for name in names)],
        box_tfs=[coal.Transform3s(np.eye(3), c.copy()) for c in centres],
        box_lo=centres - half,
        box_hi=centres + half,
        stacked=[np.array(p) for p in poses],
    )


# ------------------------------------------------------------------------------ queries


def yes_no_request() -> Any:
    """The request the shape queries use (Coal 3.0.3 misses some deep overlaps without
    ``enable_contact``)."""
    request = coal.CollisionRequest()
    request.distance_upper_bound = 0.0
    return request


def naive(world: World, first_only: bool) -> Callable[[int], Any]:
    """The loop over every box and link, to the first hit or over all boxes."""
    request, result = yes_no_request(), coal.CollisionResult()
    boxes = list(zip(world.box_geometries, world.box_tfs, world.box_names, strict=True))
    links = world.link_geometries
    collide = coal.collide

    def query(i: int) -> Any:
        tfs = world.link_tfs[i]
        hits = []
        for gb, tb, name in boxes:
            for gl, tl in zip(links, tfs, strict=True):
                result.clear()
                if collide(gl, tl, gb, tb, request, result):
                    if first_only:
                        return True
                    hits.append(name)
                    break
        return False if first_only else hits

    return query


def prefilter(world: World) -> Callable[[int], Any]:
    """numpy AABB overlap of the links' boxes with every box, then Coal on the survivors."""
    request, result = yes_no_request(), coal.CollisionResult()
    half_length = (LINK_LENGTH - 2 * LINK_RADIUS) / 2
    blo, bhi = world.box_lo, world.box_hi
    collide = coal.collide

    def query(i: int) -> Any:
        P = world.stacked[i]  # (7, 4, 4)
        axis = P[:, :3, 2] * half_length
        ends = np.stack([P[:, :3, 3] + axis, P[:, :3, 3] - axis])  # (2, 7, 3)
        lo = ends.min(axis=0) - LINK_RADIUS
        hi = ends.max(axis=0) + LINK_RADIUS
        overlap = ((lo[:, None, :] <= bhi[None]) & (hi[:, None, :] >= blo[None])).all(axis=2)
        boxes, links = np.nonzero(overlap.T)  # box by box
        tfs = world.link_tfs[i]
        hits: list[str] = []
        for bi, li in zip(boxes.tolist(), links.tolist(), strict=True):
            name = world.box_names[bi]
            if hits and hits[-1] == name:
                continue  # this box is already hit by another link
            result.clear()
            if collide(
                world.link_geometries[li],
                tfs[li],
                world.box_geometries[bi],
                world.box_tfs[bi],
                request,
                result,
            ):
                hits.append(name)
        return sorted(hits, key=world.scene.index_of)

    return query


def coal_managers(world: World) -> Callable[[int], Any]:
    """Coal's DynamicAABBTree managers from Python, links against boxes (yes/no)."""
    rest = coal.DynamicAABBTreeCollisionManager()
    for g, tf in zip(world.box_geometries, world.box_tfs, strict=True):
        co = coal.CollisionObject(g, tf, False)
        co.computeAABB()
        rest.registerObject(co)
    rest.setup()
    moving = coal.DynamicAABBTreeCollisionManager()
    link_cos = []
    for g in world.link_geometries:
        co = coal.CollisionObject(g, coal.Transform3s(), False)
        co.computeAABB()
        moving.registerObject(co)
        link_cos.append(co)
    moving.setup()
    callback = coal.CollisionCallBackDefault()
    data = callback.data
    data.request.distance_upper_bound = 0.0
    data.request.num_max_contacts = 1 << 30
    result = data.result

    def query(i: int) -> Any:
        for co, tf in zip(link_cos, world.link_tfs[i], strict=True):
            co.setTransform(tf)
            co.computeAABB()
        moving.update()
        data.clear()
        moving.collide(rest, callback)
        return result.numContacts() > 0

    return query


def place(world: World, i: int) -> None:
    """Set the arm's links to configuration ``i`` (what a planner does before a query)."""
    for link, M in zip(world.links, world.configs[i], strict=True):
        link.T = M


def scene_query(world: World, which: str) -> Callable[[int], Any]:
    scene, arm = world.scene, world.arm
    if which == "in_collision":
        return lambda i: scene.in_collision()
    return lambda i: scene.collide(arm)


# -------------------------------------------------------------------------------- timing


def sweep(world: World, query: Callable[[int], Any], indices: Sequence[int], moves: bool) -> float:
    """Mean microseconds of ``query(i)`` over ``indices``; the arm is placed first if ``moves``."""
    total = 0.0
    clock = time.perf_counter
    for i in indices:
        if moves:
            place(world, i)
        t0 = clock()
        query(i)
        total += clock() - t0
    return total / len(indices) * 1e6


def pose_cost(world: World, indices: Sequence[int]) -> float:
    """Mean microseconds to set the 7 link poses (``link.T = M``), per configuration."""
    t0 = time.perf_counter()
    for i in indices:
        place(world, i)
    return (time.perf_counter() - t0) / len(indices) * 1e6


def check_answers(world: World, indices: Sequence[int]) -> None:
    """Check every loop's answer against the scene's on ``indices`` (AssertionError if not)."""
    first, every_box = naive(world, True), naive(world, False)
    numpy_loop, managers = prefilter(world), coal_managers(world)
    scene, index_of = world.scene, world.scene.index_of
    for i in indices:
        place(world, i)
        touching = scene.collide(world.arm)
        hit = scene.in_collision()
        expected = sorted(every_box(i), key=index_of)
        answers = {
            "scene.collide(arm)": (touching, expected),
            "scene.in_collision()": (hit, bool(expected)),
            "naive loop to first hit": (first(i), hit),
            "numpy AABB + Coal": (numpy_loop(i), expected),
            "Coal managers": (managers(i), hit),
        }
        for label, (got, wanted) in answers.items():
            if got != wanted:
                raise AssertionError(f"configuration {i}: {label} gives {got}, not {wanted}")


@dataclass
class Row:
    n: int
    hit_rate: float
    figures: dict[str, float]
    configs_slow: int


def measure(world: World, repeat: int, configs: int, budget: float) -> Row:
    every = list(range(configs))
    for i in every[:3]:  # the first queries file the boxes into Coal's trees
        place(world, i)
        world.scene.in_collision()
    variants: dict[str, tuple[Callable[[int], Any], bool]] = {
        "in_collision": (scene_query(world, "in_collision"), True),
        "collide": (scene_query(world, "collide"), True),
        "naive first": (naive(world, True), False),
        "naive all": (naive(world, False), False),
        "prefilter": (prefilter(world), False),
        "coal managers": (coal_managers(world), False),
    }
    # The raw loops grow with the number of boxes: they run on evenly spread configurations,
    # as many as fit in `budget` seconds per repeat.
    probe = sweep(world, variants["naive all"][0], every[:3], False)
    slow_count = max(3, min(configs, int(budget / (probe * 1e-6))))
    slow = every[:: max(1, configs // slow_count)][:slow_count]
    check_answers(world, slow)
    hits = 0
    for i in every:
        place(world, i)
        hits += world.scene.in_collision()
    samples: dict[str, list[float]] = {label: [] for label in [*variants, "set poses"]}
    labels = list(variants)
    for r in range(repeat):
        k = r % len(labels)
        for label in labels[k:] + labels[:k]:
            query, moves = variants[label]
            indices = every if moves or label in ("prefilter", "coal managers") else slow
            samples[label].append(sweep(world, query, indices, moves))
        samples["set poses"].append(pose_cost(world, every))
    figures = {label: statistics.median(v) for label, v in samples.items()}
    return Row(world.n, hits / len(every), figures, len(slow))


# ---------------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse_settings(__doc__.splitlines()[0] if __doc__ else "", argv, repeat=5)
    configs = 60 if settings.quick else CONFIGS
    repeat = min(settings.repeat, 2) if settings.quick else settings.repeat
    figures = Figures("bench_scene", ["spatialcontact", "coal", "numpy"])
    print("# spatialcontact Scene benchmark: a 7-capsule arm among static boxes\n")
    for text in figures.machine:
        print(f"- {text}")
    print(
        f"- {configs} random configurations, link poses computed before timing; µs per "
        f"configuration: mean over the configurations, median of {repeat} repeats"
        + (" (--quick: rough figures)" if settings.quick else "")
    )
    rng = np.random.default_rng(2024)
    q = rng.uniform(-math.pi, math.pi, (configs, LINKS))
    rows = []
    for n in SIZES:
        world = make_world(n, q, seed=n)
        rows.append(measure(world, repeat, configs, 0.05 if settings.quick else SLOW_BUDGET))
    headers = [
        "boxes",
        "hit rate",
        "scene.in_collision()",
        "scene.collide(arm)",
        "naive, first hit",
        "naive, all boxes",
        "numpy AABB + Coal",
        "Coal managers (raw)",
        "in_collision vs naive first",
        "collide vs naive all",
    ]
    table_rows = []
    for row in rows:
        f = row.figures
        table_rows.append(
            [
                f"{row.n:,}",
                f"{row.hit_rate:.0%}",
                fmt_us(f["in_collision"]),
                fmt_us(f["collide"]),
                fmt_us(f["naive first"]),
                fmt_us(f["naive all"]),
                fmt_us(f["prefilter"]),
                fmt_us(f["coal managers"]),
                fmt_ratio(f["naive first"] / f["in_collision"]),
                fmt_ratio(f["naive all"] / f["collide"]),
            ]
        )
    print("\n## µs per configuration\n")
    print(table(headers, table_rows))
    slow = ", ".join(f"{r.configs_slow} at {r.n:,} boxes" for r in rows)
    poses = ", ".join(f"{r.figures['set poses']:.0f}" for r in rows)
    print(
        f"\nThe naive loops ran on evenly spread configurations ({slow}); every other column on "
        f"all of them. Setting the 7 link poses (`link.T = M`, not timed above) took {poses} µs "
        "per configuration. Hit rate: share of configurations in collision."
    )
    by_n = {r.n: r.figures for r in rows}
    mid, small, large = by_n[200], by_n[10], by_n[2000]
    checks = [
        (
            "in_collision at 200 boxes, vs naive loop to first hit",
            mid["naive first"] / mid["in_collision"],
            30.0,
            False,
        ),
        (
            "collide(arm) at 200 boxes, vs naive loop over all boxes",
            mid["naive all"] / mid["collide"],
            30.0,
            False,
        ),
        (
            "in_collision: time at 2,000 boxes / time at 10",
            large["in_collision"] / small["in_collision"],
            3.0,
            True,
        ),
        (
            "collide(arm): time at 2,000 boxes / time at 10",
            large["collide"] / small["collide"],
            3.0,
            True,
        ),
    ]
    print("\n## Targets\n")
    target_rows = []
    for text, value, limit, at_most in checks:
        ok = value <= limit if at_most else value >= limit
        bound = f"<= {limit:g}×" if at_most else f">= {limit:g}×"
        target_rows.append([text, fmt_ratio(value), bound, "PASS" if ok else "FAIL"])
    print(table(["target", "measured", "wanted", "verdict"], target_rows))
    print(
        f"\nRaw Coal's own broadphase at 200 boxes: "
        f"{fmt_ratio(mid['naive first'] / mid['coal managers'])} the naive loop to first hit, "
        f"{fmt_ratio(mid['naive all'] / mid['coal managers'])} the loop over all boxes."
    )
    raw_loops = ("naive first", "naive all", "prefilter", "coal managers")
    for row in rows:
        for label, us in row.figures.items():
            figures.add(f"{row.n} boxes: {label}", us, reference=label in raw_loops)
        for label in ("in_collision", "collide"):  # timed in turn with the managers
            figures.relate(
                f"{row.n} boxes: {label}",
                f"{row.n} boxes: coal managers",
                row.figures[label] / row.figures["coal managers"],
            )
    figures.write(settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
