"""Cost of group queries: spatialcontact groups against a Python loop of raw Coal calls.

Run ``python benchmarks/bench_group.py`` (under a minute) or add ``--quick`` (a few seconds,
rough figures). It prints, as Markdown tables, the median microseconds per call of

1. a group of 50 primitives (spheres, boxes, cylinders, ellipsoids spread over a 10 x 5 grid)
   against a small sphere touching one of them: ``iscollided``, ``closest_point`` and
   ``contacts``, next to a loop over the 50 leaves calling Coal's cached functors (one
   ``ComputeCollision`` / ``ComputeDistance`` per pair, persistent transforms, request and
   result, ``result.clear()`` before each call) and next to spatialgeometry 1.4.2's
   ``CollisionShapeGroup``; once with the sphere still and once moved to another leaf before
   every call;
2. a 7-link arm (7 capsules in a chain) against 200 boxes spread over a 5 m x 5 m x 2 m region,
   a few of them within the arm's reach: group-vs-group ``iscollided`` and
   ``closest_point(inf_dist=inf)`` for random arm configurations (the 7 link poses, or the
   arm group's own pose, set before each call from poses computed beforehand), next to the
   loop over the 7 x 200 leaf pairs with raw Coal calls,

and checks the target: the arm-vs-boxes queries at least 5x faster than the loop (PASS/FAIL).
Before timing, every answer is compared with the loop's. The machine is usually shared:
compare the ratios (timed side by side in the same run), not the absolute times.
"""

from __future__ import annotations

import itertools
import math
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import coal
import numpy as np
from _poses import random_rigid
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

import spatialcontact as sc

try:
    import spatialgeometry as sg
except ImportError:  # an optional peer: its columns then read n/a
    sg = None

TARGET_ARM = 5.0
"""The arm-vs-boxes group queries must be at least this many times faster than the loop."""

N_LINKS = 7
LINK_LENGTH = 0.15
"""Metres between two joints of the arm."""
LINK_RADIUS = 0.04
N_BOXES = 200
BOX_REGION = ((-2.5, 2.5), (-2.5, 2.5), (0.0, 2.0))
"""x, y, z ranges in metres of the box centres; the arm's base is at the origin."""
BASE_CLEARANCE = 0.6
"""No box centre lies closer than this (metres) to the arm's base."""
TOUCH = 1e-3
"""How far in metres the probe sphere reaches into the leaf it touches."""

Pose = np.ndarray


def rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=np.float64)


def rot_y(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s, 0], [0, 1, 0, 0], [-s, 0, c, 0], [0, 0, 0, 1]], dtype=np.float64)


def translation(x: float, y: float, z: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


# ------------------------------------------------------------------- raw Coal loops


@dataclass
class RawLeaf:
    """One leaf for the raw loops: its Coal geometry and persistent world transform."""

    geometry: Any
    tf: Any

    @classmethod
    def of(cls, shape: sc.CollisionShape) -> RawLeaf:
        """A separate Coal geometry and transform equal to ``shape``'s (nothing shared)."""
        geometry = shape._build_geometry()
        geometry.computeLocalAABB()
        W = shape.world_T
        return cls(geometry, coal.Transform3s(W[:3, :3], W[:3, 3]))

    def place(self, W: np.ndarray) -> None:
        self.tf.setTransform(W[:3, :3], W[:3, 3])


class RawPairs:
    """Cached Coal functors, requests and results for every pair of two leaf lists."""

    def __init__(self, a: Sequence[RawLeaf], b: Sequence[RawLeaf]) -> None:
        self.pairs = [(la, lb) for la in a for lb in b]
        yes_no = coal.CollisionRequest()  # as spatialcontact asks (see query._collide_entry)
        yes_no.distance_upper_bound = 0.0
        contact = coal.CollisionRequest()
        signed = coal.DistanceRequest()
        signed.enable_signed_distance = True
        self.collide = [
            (coal.ComputeCollision(la.geometry, lb.geometry), la.tf, lb.tf, yes_no,
             coal.CollisionResult())
            for la, lb in self.pairs
        ]  # fmt: skip
        self.contact = [
            (coal.ComputeCollision(la.geometry, lb.geometry), la.tf, lb.tf, contact,
             coal.CollisionResult(), k)
            for k, (la, lb) in enumerate(self.pairs)
        ]  # fmt: skip
        self.distance = [
            (coal.ComputeDistance(la.geometry, lb.geometry), la.tf, lb.tf, signed,
             coal.DistanceResult())
            for la, lb in self.pairs
        ]  # fmt: skip

    def iscollided(self) -> bool:
        """True at the first pair that collides."""
        for functor, tf1, tf2, request, result in self.collide:
            result.clear()
            if functor(tf1, tf2, request, result):
                return True
        return False

    def closest_point(self, inf_dist: float) -> tuple[Any, Any, Any]:
        """The smallest signed distance over every pair, with its witness points."""
        best = math.inf
        best_result = None
        for functor, tf1, tf2, request, result in self.distance:
            result.clear()
            functor(tf1, tf2, request, result)
            d = result.min_distance
            if d < best:
                best, best_result = d, result
        if best_result is None or best > inf_dist:
            return None, None, None
        return best, best_result.getNearestPoint1(), best_result.getNearestPoint2()

    def contacts(self) -> list[tuple[Any, ...]]:
        """One tuple (pair, normal, point 1, point 2, depth) per colliding pair, deepest first."""
        found = []
        for functor, tf1, tf2, request, result, k in self.contact:
            result.clear()
            if functor(tf1, tf2, request, result):
                c = result.getContact(0)
                found.append(
                    (k, c.normal, c.getNearestPoint1(), c.getNearestPoint2(), c.penetration_depth)
                )
        found.sort(key=lambda t: t[4])
        return found


# ----------------------------------------------------------------- scene 1: 50 leaves


@dataclass
class Scene50:
    group: sc.CollisionShapeGroup
    probe: sc.Sphere
    probe_poses: list[np.ndarray]
    """Probe poses, each touching another leaf."""
    raw_probe: RawLeaf
    raw: RawPairs
    sg_group: Any
    sg_probe: Any


def make_scene50(rng: np.random.Generator, n_poses: int) -> Scene50:
    leaves: list[sc.CollisionShape] = []
    sg_leaves: list[Any] = []
    for i in range(50):
        T = translation(1.5 * (i % 10), 1.5 * (i // 10), 0.0) @ random_rigid(rng)
        kind = i % 4
        if kind == 0:
            r = rng.uniform(0.2, 0.5)
            leaves.append(sc.Sphere(r, pose=T))
            sg_leaves.append(sg and sg.Sphere(r, pose=T))
        elif kind == 1:
            scale = rng.uniform(0.3, 0.8, 3)
            leaves.append(sc.Cuboid(scale, pose=T))
            sg_leaves.append(sg and sg.Cuboid(scale, pose=T))
        elif kind == 2:
            r, length = rng.uniform(0.15, 0.35), rng.uniform(0.3, 0.8)
            leaves.append(sc.Cylinder(r, length, pose=T))
            sg_leaves.append(sg and sg.Cylinder(r, length, pose=T))
        else:
            radii = rng.uniform(0.15, 0.4, 3)
            leaves.append(sc.Ellipsoid(radii, pose=T))
            sg_leaves.append(sg and sg.Ellipsoid(radii, pose=T))
    group = sc.CollisionShapeGroup(leaves)
    # The probe touches one leaf: placed along a random direction from the leaf's centre at
    # the leaf's surface distance, found with a distance query and corrected once.
    probe_radius = 0.1
    poses = []
    for k in range(n_poses):
        leaf = leaves[(37 + 13 * k) % 50]
        direction = rng.normal(size=3)
        direction /= np.linalg.norm(direction)
        centre = leaf.world_T[:3, 3] + direction * 1.0
        probe = sc.Sphere(probe_radius, pose=translation(*centre))
        for _ in range(50):  # walk the probe in until it reaches about TOUCH into the leaf
            d = leaf.distance(probe)
            if -1.5 * TOUCH < d < -0.5 * TOUCH:
                break
            centre = centre - direction * (d + TOUCH)
            probe.T = translation(*centre)
        else:
            raise RuntimeError(f"could not place the probe against {leaf!r}")
        poses.append(translation(*centre))
    probe = sc.Sphere(probe_radius, pose=poses[0])
    raw_leaves = [RawLeaf.of(leaf) for leaf in leaves]
    raw_probe = RawLeaf.of(probe)
    sg_group = sg_probe = None
    if sg is not None:
        sg_group = sg.CollisionShapeGroup(sg_leaves)
        sg_probe = sg.Sphere(probe_radius, pose=poses[0])
    return Scene50(group, probe, poses, raw_probe, RawPairs(raw_leaves, [raw_probe]),
                   sg_group, sg_probe)  # fmt: skip


def check_scene50(s: Scene50, report: list[str]) -> None:
    """Compare every answer with the loop's (and spatialgeometry's) at every probe pose."""
    bad = 0
    sg_bad = 0
    for T in s.probe_poses:
        s.probe.T = T
        s.raw_probe.place(T)
        if s.group.iscollided(s.probe) != s.raw.iscollided():
            bad += 1
        d, _, _ = s.group.closest_point(s.probe, inf_dist=1.0)
        d_raw, _, _ = s.raw.closest_point(1.0)
        if d is None or d_raw is None or abs(d - d_raw) > 1e-9:
            bad += 1
        depths = [round(c.penetration_depth, 9) for c in s.group.contacts(s.probe)]
        if depths != [round(t[4], 9) for t in s.raw.contacts()]:
            bad += 1
        if s.sg_group is not None:
            s.sg_probe.T = T
            d_sg, _, _ = s.sg_group.closest_point(s.sg_probe, 1.0)
            if d_sg is None or abs(d_sg - d_raw) > 1e-6 or not s.sg_group.iscollided(s.sg_probe):
                sg_bad += 1
    report.append(
        f"50-leaf group: {len(s.probe_poses)} probe poses checked, {bad} answers differ from "
        f"the loop's" + ("" if s.sg_group is None else f", {sg_bad} from spatialgeometry's")
    )


def scene50_rows(settings: Settings, s: Scene50, figures: Figures) -> list[list[str]]:
    cycle = itertools.cycle(s.probe_poses)
    probe, group, raw, raw_probe = s.probe, s.group, s.raw, s.raw_probe
    sg_group, sg_probe = s.sg_group, s.sg_probe
    probe.T = s.probe_poses[0]
    raw_probe.place(s.probe_poses[0])
    if sg_probe is not None:
        sg_probe.T = s.probe_poses[0]

    def moved(query: Callable[[], Any], place: Callable[[np.ndarray], None]) -> Callable[[], Any]:
        def call() -> Any:
            place(next(cycle))
            return query()

        return call

    def place_sc(T: np.ndarray) -> None:
        probe.T = T

    def place_sg(T: np.ndarray) -> None:
        sg_probe.T = T

    queries: dict[str, tuple[Callable[[], Any], Callable[[], Any], Callable[[], Any] | None]] = {
        "iscollided": (
            lambda: group.iscollided(probe),
            raw.iscollided,
            None if sg_group is None else lambda: sg_group.iscollided(sg_probe),
        ),
        "closest_point": (
            lambda: group.closest_point(probe),
            lambda: raw.closest_point(1.0),
            None if sg_group is None else lambda: sg_group.closest_point(sg_probe),
        ),
        "contacts": (lambda: group.contacts(probe), raw.contacts, None),
    }
    rows = []
    for motion in ("still", "moved"):
        cases: dict[str, Callable[[], Any]] = {}
        for name, (mine, loop, peer) in queries.items():
            if motion == "moved":
                cases[f"{name}/sc"] = moved(mine, place_sc)
                cases[f"{name}/loop"] = moved(loop, raw_probe.place)
                if peer is not None:
                    cases[f"{name}/sg"] = moved(peer, place_sg)
            else:
                cases[f"{name}/sc"] = mine
                cases[f"{name}/loop"] = loop
                if peer is not None:
                    cases[f"{name}/sg"] = peer
        samples = interleaved_samples(cases, repeat=settings.repeat, min_time=settings.min_time)
        for name in queries:
            t_ours, t_loop = samples[f"{name}/sc"], samples[f"{name}/loop"]
            t_peer = samples.get(f"{name}/sg")
            where = f"50 leaves, {name} ({motion})"
            figures.add(f"{where}: spatialcontact", statistics.median(t_ours))
            figures.add(f"{where}: raw Coal loop", statistics.median(t_loop), reference=True)
            figures.add(
                f"{where}: spatialgeometry",
                None if t_peer is None else statistics.median(t_peer),
                reference=True,
            )
            figures.relate(
                f"{where}: spatialcontact", f"{where}: raw Coal loop", paired_ratio(t_ours, t_loop)
            )
            rows.append([
                f"{name} ({motion})",
                fmt_us(statistics.median(t_ours)),
                fmt_us(statistics.median(t_loop)),
                fmt_us(None if t_peer is None else statistics.median(t_peer)),
                fmt_ratio(paired_ratio(t_loop, t_ours)),
                fmt_ratio(paired_ratio(t_peer, t_ours)),
            ])  # fmt: skip
    return rows


# ------------------------------------------------------------- scene 2: arm vs boxes


@dataclass
class ArmScene:
    arm: sc.CollisionShapeGroup
    boxes: sc.CollisionShapeGroup
    link_poses: list[list[np.ndarray]]
    """Per configuration, the 7 link poses (4, 4) in the arm group's frame."""
    base_poses: list[np.ndarray]
    """Arm group poses (4, 4) in the world, for the runs that move the whole arm."""
    raw_links: list[RawLeaf]
    raw: RawPairs


def arm_link_poses(q: np.ndarray) -> list[np.ndarray]:
    """Capsule poses of a chain whose joints turn about z and y in turn, links along z."""
    T = np.eye(4)
    poses = []
    for i, angle in enumerate(q):
        T = T @ (rot_z(angle) if i % 2 == 0 else rot_y(angle))
        poses.append(T @ translation(0.0, 0.0, LINK_LENGTH / 2))
        T = T @ translation(0.0, 0.0, LINK_LENGTH)
    return poses


def make_arm_scene(rng: np.random.Generator, n_configs: int) -> ArmScene:
    configs = [rng.uniform(-1.2, 1.2, N_LINKS) for _ in range(n_configs)]
    link_poses = [arm_link_poses(q) for q in configs]
    links = [
        sc.Capsule(LINK_RADIUS, LINK_LENGTH - 0.01, pose=T, name=f"link{i}")
        for i, T in enumerate(link_poses[0])
    ]
    arm = sc.CollisionShapeGroup(links, name="arm")
    boxes: list[sc.CollisionShape] = []
    while len(boxes) < N_BOXES:
        centre = [rng.uniform(lo, hi) for lo, hi in BOX_REGION]
        if math.dist(centre, (0.0, 0.0, 0.0)) < BASE_CLEARANCE:
            continue  # keep the arm's base free
        T = translation(*centre) @ rot_z(rng.uniform(-math.pi, math.pi))
        boxes.append(sc.Cuboid(rng.uniform(0.1, 0.3, 3), pose=T))
    box_group = sc.CollisionShapeGroup(boxes, name="boxes")
    base_poses = [
        translation(rng.uniform(-0.4, 0.4), rng.uniform(-0.4, 0.4), 0.0)
        @ rot_z(rng.uniform(-math.pi, math.pi))
        for _ in range(n_configs)
    ]
    raw_links = [RawLeaf.of(link) for link in links]
    raw_boxes = [RawLeaf.of(box) for box in boxes]
    return ArmScene(arm, box_group, link_poses, base_poses, raw_links,
                    RawPairs(raw_links, raw_boxes))  # fmt: skip


def set_links(s: ArmScene, poses: list[np.ndarray]) -> None:
    for link, T in zip(s.arm, poses, strict=True):
        link.T = T


def set_raw_links(s: ArmScene, world: np.ndarray, poses: list[np.ndarray]) -> None:
    for raw, T in zip(s.raw_links, poses, strict=True):
        raw.place(world @ T)


def check_arm(s: ArmScene, report: list[str]) -> None:
    bad = hits = 0
    near: list[float] = []
    for k, poses in enumerate(s.link_poses):
        for world in (np.eye(4), s.base_poses[k]):
            s.arm.T = world
            set_links(s, poses)
            set_raw_links(s, world, poses)
            hit = s.arm.iscollided(s.boxes)
            hits += hit
            if hit != s.raw.iscollided():
                bad += 1
            d, _, _ = s.arm.closest_point(s.boxes, inf_dist=math.inf)
            d_raw, _, _ = s.raw.closest_point(math.inf)
            near.append(math.inf if d is None else d)
            if d is None or abs(d - d_raw) > 1e-9:
                bad += 1
    s.arm.T = np.eye(4)
    total = 2 * len(s.link_poses)
    report.append(
        f"arm vs boxes: {total} configurations checked, {bad} answers differ from the loop's; "
        f"{hits} of {total} collide; median closest distance {np.median(near):.3f} m"
    )


def arm_rows(
    settings: Settings, s: ArmScene, figures: Figures
) -> tuple[list[list[str]], list[float]]:
    arm, boxes, raw = s.arm, s.boxes, s.raw
    configs = itertools.cycle(range(len(s.link_poses)))
    identity = np.eye(4)
    fixed = s.link_poses[0]

    def links_sc(query: Callable[[], Any]) -> Callable[[], Any]:
        def call() -> Any:
            set_links(s, s.link_poses[next(configs)])
            return query()

        return call

    def links_raw(query: Callable[[], Any]) -> Callable[[], Any]:
        def call() -> Any:
            set_raw_links(s, identity, s.link_poses[next(configs)])
            return query()

        return call

    def base_sc(query: Callable[[], Any]) -> Callable[[], Any]:
        def call() -> Any:
            arm.T = s.base_poses[next(configs)]
            return query()

        return call

    def base_raw(query: Callable[[], Any]) -> Callable[[], Any]:
        def call() -> Any:
            set_raw_links(s, s.base_poses[next(configs)], fixed)
            return query()

        return call

    def collide() -> bool:
        return arm.iscollided(boxes)

    def nearest() -> Any:
        return arm.closest_point(boxes, inf_dist=math.inf)

    def raw_collide() -> bool:
        return raw.iscollided()

    def raw_nearest() -> Any:
        return raw.closest_point(math.inf)

    rows = []
    ratios = []
    for motion, mine, loop in (
        ("7 link poses set", links_sc, links_raw),
        ("arm group pose set", base_sc, base_raw),
    ):
        if motion.startswith("arm"):
            arm.T = identity
            set_links(s, fixed)
        cases = {
            "iscollided/sc": mine(collide),
            "iscollided/loop": loop(raw_collide),
            "closest_point/sc": mine(nearest),
            "closest_point/loop": loop(raw_nearest),
        }
        samples = interleaved_samples(cases, repeat=settings.repeat, min_time=settings.min_time)
        for name in ("iscollided", "closest_point"):
            ours, theirs = samples[f"{name}/sc"], samples[f"{name}/loop"]
            figures.add(f"arm vs boxes, {name} ({motion}): spatialcontact", statistics.median(ours))
            figures.add(
                f"arm vs boxes, {name} ({motion}): raw Coal loop",
                statistics.median(theirs),
                reference=True,
            )
            figures.relate(
                f"arm vs boxes, {name} ({motion}): spatialcontact",
                f"arm vs boxes, {name} ({motion}): raw Coal loop",
                paired_ratio(ours, theirs),
            )
            r = paired_ratio(theirs, ours)
            assert r is not None
            ratios.append(r)
            rows.append([
                f"{name} ({motion})",
                fmt_us(statistics.median(ours)),
                fmt_us(statistics.median(theirs)),
                fmt_ratio(r),
                "PASS" if r >= TARGET_ARM else "FAIL",
            ])  # fmt: skip
    arm.T = identity
    return rows, ratios


# ------------------------------------------------------------------------------ main


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse_settings(__doc__.splitlines()[0], argv)
    n_configs = 16 if settings.quick else 64
    figures = Figures("bench_group", ["spatialcontact", "coal", "numpy", "spatialgeometry"])
    print("# CollisionShapeGroup queries\n")
    for line in figures.machine:
        print(f"- {line}")
    print(
        f"- {settings.repeat} timings per case, each at least {settings.min_time * 1e3:g} ms; "
        "µs per call (median); ratios are medians of side-by-side ratios"
    )
    checks: list[str] = []
    scene50 = make_scene50(np.random.default_rng(50), n_configs)
    check_scene50(scene50, checks)
    arm = make_arm_scene(np.random.default_rng(7), n_configs)
    check_arm(arm, checks)
    print()
    for line in checks:
        print(f"- {line}")

    print("\n## 50-primitive group vs a sphere touching one leaf\n")
    print(
        "sc: spatialcontact group query; loop: Python loop over the 50 leaves with cached raw "
        "Coal functors (iscollided stops at the first hit, the touched leaf is 38th); sg: "
        'spatialgeometry 1.4.2 CollisionShapeGroup (no contacts). "moved": the sphere is '
        "moved to touch another leaf before every call.\n"
    )
    rows = scene50_rows(settings, scene50, figures)
    print(table(["query", "sc µs", "loop µs", "sg µs", "loop / sc", "sg / sc"], rows))

    print("\n## 7-capsule arm vs 200 boxes (group vs group)\n")
    print(
        f"loop: the {N_LINKS} x {N_BOXES} leaf pairs with cached raw Coal functors (iscollided "
        "stops at the first hit); poses are computed beforehand and set before every call, on "
        "both sides. spatialgeometry 1.4.2 has no capsule: no sg column. closest_point uses "
        "inf_dist=inf.\n"
    )
    arm_table, ratios = arm_rows(settings, arm, figures)
    print(table(["query", "sc µs", "loop µs", "loop / sc", f">= {TARGET_ARM:g}x"], arm_table))
    worst = min(ratios)
    verdict = "PASS" if worst >= TARGET_ARM else "FAIL"
    print(
        f"\nTarget: arm-vs-boxes group queries at least {TARGET_ARM:g}x faster than the loop: "
        f"worst {fmt_ratio(worst)} -> {verdict}"
    )
    figures.write(settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
