"""The per-call path of robots and planners: setting poses and asking a scene, against raw Coal.

Run ``python benchmarks/bench_core.py`` (under a minute) or add ``--quick`` (a few seconds,
rough figures); ``--json PATH`` also writes every figure and ratio to PATH. It prints, as
Markdown tables, the median microseconds per call of

1. ``leaf.T = M`` on a sphere in no group, M a different rigid (4, 4) float64 array at every
   call (64 made beforehand, taken in turn), next to raw Coal's
   ``tf.setRotation(R); tf.setTranslation(t)`` on a ``coal.Transform3s`` with (3, 3) and (3,)
   arrays made beforehand;
2. ``group.set_poses(P, check=False)`` on a group of 7 capsules (P a (7, 4, 4) array of the
   element poses relative to the group, 16 made beforehand), per leaf, next to the raw
   setters per leaf with the world poses computed beforehand (n/a when the package has no
   ``set_poses``);
3. ``group.T = M`` on a group of 7 spheres, next to one raw leaf update;
4. a scene of two spheres: one sphere's pose set, then ``scene.in_collision()``, next to the
   same pose update and ``a.iscollided(b)`` on a pair in no scene, and to Coal's own
   ``DynamicAABBTreeCollisionManager`` doing the same from Python (the two
   ``CollisionObject``\\ s registered once; ``setTransform``, ``computeAABB``, ``update()`` and
   ``collide`` with a ``CollisionCallBackDefault`` per call); half of the 16 poses collide;
5. a 7-capsule arm (one ``CollisionShapeGroup`` added to a scene) among 10, 200 and 2,000
   static 5 cm boxes on a regular grid filling the same 2 m cube around it, so that more boxes
   are closer together and give more candidate pairs: per configuration, every link moved
   (each link's ``T``, or ``set_poses`` when the package has it), then
   ``scene.in_collision()``; 16 configurations made beforehand are taken in turn, half of them
   colliding,

then checks the targets, ratios measured in the same run, and prints PASS or FAIL for each.
Before timing, each way of setting a pose is checked to put the shapes where it should (by
collision probes) and each scene answer against another way of getting it.

``benchmarks/baseline.json`` holds the figures of a full run of this script against
spatialcontact 0.1.0 (commit 099a697). When it is there, the tables show its figures in a
"0.1.0 (baseline)" column: they come from another run, on a machine that may have been busier
or quieter then, so its absolute times are only indicative and its ratios a better guide. It
was made with::

    git worktree add /tmp/sc_base 099a697
    PYTHONPATH=/tmp/sc_base python benchmarks/bench_core.py --json benchmarks/baseline.json
    git worktree remove --force /tmp/sc_base
"""

from __future__ import annotations

import math
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import coal
import numpy as np
from _poses import random_rigid
from _timing import (
    Figures,
    Settings,
    Statement,
    fmt_ratio,
    fmt_us,
    interleaved_samples,
    paired_ratio,
    parse_settings,
    read_figures,
    table,
)

import spatialcontact as sc

BASELINE = Path(__file__).with_name("baseline.json")
DISTRIBUTIONS = ["spatialcontact", "coal", "numpy"]

POSES = 64
"""Distinct poses a pose-setting statement goes through, one per call."""
GROUP_POSES = 16
"""Distinct (7, 4, 4) pose arrays the bulk placement goes through."""
SCENE_POSES = 16
"""Poses of the moving sphere of the two-object scene, every other one colliding."""

LINKS = 7
LINK_RADIUS = 0.04
LINK_LENGTH = 0.14
"""Length of a capsule's cylinder, metres (``sc.Capsule(radius, length)``)."""
PITCH = 0.15
"""Distance between two joints of the arm, metres: the capsules' ends overlap."""
BOX = 0.05
"""Side of the static boxes, metres."""
CUBE = 2.0
"""Side of the cube, centred on the arm's base, that the boxes' grid fills, metres."""
CLEARANCE = 0.3
"""No box centre within this distance of the arm's base (a base never touches its
surroundings), metres."""
SIZES = (10, 200, 2000)
ARM_CONFIGS = 16
"""Configurations the arm goes through at each size: half colliding when the pool allows."""
POOL = 3000
"""Random configurations the colliding and free ones are picked from (600 with --quick): at
10 boxes about 1 in 150 collides, at 2,000 about 1 in 250 is free."""

TARGET_LEAF = 4.0
TARGET_BULK = 1.5
TARGET_GROUP = 15.0
TARGET_SCENE = 5.0
TARGET_SCALE = 3.0


# --------------------------------------------------------------------------------- poses


def rot(axis: int, angle: float) -> np.ndarray:
    """(4, 4) rotation about z (``axis=2``) or y (``axis=1``)."""
    c, s = math.cos(angle), math.sin(angle)
    T = np.eye(4)
    if axis == 2:
        T[:2, :2] = [[c, -s], [s, c]]
    else:
        T[0, 0], T[0, 2], T[2, 0], T[2, 2] = c, s, -s, c
    return T


def link_poses(q: np.ndarray) -> np.ndarray:
    """(7, 4, 4) capsule poses of a chain along z, joints turning about z and y in turn."""
    T = np.eye(4)
    out = np.empty((len(q), 4, 4))
    for i, angle in enumerate(q):
        T = T @ rot(2 if i % 2 == 0 else 1, float(angle))
        out[i] = T
        out[i, :3, 3] = T[:3, 3] + T[:3, 2] * (PITCH / 2)
        T[:3, 3] = T[:3, 3] + T[:3, 2] * PITCH
    return out


def split(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Contiguous copies of the rotation (3, 3) and translation (3,) of ``M`` (4, 4)."""
    return np.ascontiguousarray(M[:3, :3]), M[:3, 3].copy()


# ------------------------------------------------------------------------------ sections


@dataclass
class Case:
    """One timed statement of a section.

    ``stmt`` is None when the imported package lacks the feature it times (its figures are
    then n/a); a statement makes ``calls`` calls, and figures are per call.
    """

    label: str
    stmt: Statement | None
    calls: int
    reference: bool = False


@dataclass
class Line:
    """A row of a table: µs per call, ratio to the table's denominator, and, for a row of the
    package, the reference (raw Coal) row it is also given relative to, with that ratio."""

    label: str
    us: float | None
    ratio: float | None
    reference: bool
    ref: str | None = None
    vs_ref: float | None = None


@dataclass
class Section:
    """A table: its lines, what their ratio is to, and notes printed under it."""

    key: str
    title: str
    unit: str
    ratio_to: str
    lines: list[Line]
    notes: list[str] = field(default_factory=list)

    def line(self, label: str) -> Line:
        return next(line for line in self.lines if line.label == label)


def stable_name(section: Section, label: str) -> str:
    """The stable name of the figure of a line (its label without Markdown)."""
    return f"{section.key}: {label.replace('`', '')}"


def name_of(section: Section, line: Line) -> str:
    return stable_name(section, line.label)


def ratio_name(section: Section, line: Line) -> str:
    return f"{name_of(section, line)} {section.ratio_to.replace('`', '')}"


def time_cases(
    cases: Sequence[Case], namespace: Mapping[str, Any] | None, settings: Settings
) -> dict[str, list[float] | None]:
    """Microseconds per call of each case in each repeat (timed in turn), None for n/a."""
    live = {c.label: c.stmt for c in cases if c.stmt is not None}
    samples = interleaved_samples(
        live, namespace, repeat=settings.repeat, min_time=settings.min_time
    )
    out: dict[str, list[float] | None] = {}
    for c in cases:
        values = samples.get(c.label)
        out[c.label] = None if values is None else [v / c.calls for v in values]
    return out


def lines_of(
    cases: Sequence[Case], per_call: Mapping[str, list[float] | None], denominator: str
) -> list[Line]:
    """One line per case, with its ratio to the case labelled ``denominator``; a case of the
    package is also given relative to the first reference case."""
    ref = next(c.label for c in cases if c.reference)
    lines = []
    for c in cases:
        values = per_call[c.label]
        us = None if values is None else statistics.median(values)
        r = paired_ratio(values, per_call[denominator])
        if c.reference:
            lines.append(Line(c.label, us, r, True))
        else:
            vs_ref = paired_ratio(values, per_call[ref])
            lines.append(Line(c.label, us, r, False, ref, vs_ref))
    return lines


def check(condition: bool, what: str) -> None:
    """Stop the benchmark when an answer is wrong: a fast wrong answer is worth nothing."""
    if not condition:
        raise AssertionError(what)


def check_placed(
    shape: sc.CollisionShape,
    W: np.ndarray,
    inside: Sequence[float],
    outside: Sequence[float],
    what: str,
) -> None:
    """Check that Coal has ``shape`` at the world pose ``W`` (4, 4), not only its ``T``: a
    small probe at the local point ``inside`` collides with it, one at ``outside`` does not."""
    for local, expected in ((inside, True), (outside, False)):
        at = np.eye(4)
        at[:3, 3] = (W @ [*local, 1.0])[:3]
        probe = sc.Sphere(1e-3, pose=at)
        check(shape.iscollided(probe) == expected, f"{what}: {shape!r} is not at its pose")


# ---------------------------------------------------------------------- 1. leaf pose


def leaf_pose(settings: Settings) -> Section:
    rng = np.random.default_rng(1)
    Ms = [random_rigid(rng, 1.0) for _ in range(POSES)]
    leaf = sc.Sphere(0.1)
    tf = coal.Transform3s()
    RT = [split(M) for M in Ms]
    for M in Ms[:3]:
        leaf.T = M
        check(np.array_equal(leaf.T, M), "leaf.T does not read back the pose set")
        check_placed(leaf, M, (0.0, 0.0, 0.0), (0.0, 0.0, 0.2), "leaf.T = M")
    cases = [
        Case("`leaf.T = M`", "for M in Ms: leaf.T = M", POSES),
        Case(
            "raw: `tf.setRotation(R); tf.setTranslation(t)`",
            "for R, t in RT: tf.setRotation(R); tf.setTranslation(t)",
            POSES,
            reference=True,
        ),
        Case(
            "raw: `tf.setTransform(M[:3, :3], M[:3, 3])`",
            "for M in Ms: tf.setTransform(M[:3, :3], M[:3, 3])",
            POSES,
            reference=True,
        ),
    ]
    ns = {"Ms": Ms, "RT": RT, "leaf": leaf, "tf": tf}
    per_call = time_cases(cases, ns, settings)
    return Section(
        "leaf pose",
        "## 1. A leaf's pose from a 4x4 array (a sphere in no group)",
        "µs per call",
        "/ raw setters",
        lines_of(cases, per_call, cases[1].label),
        [
            f"M: {POSES} different rigid float64 arrays, one per call; raw Coal: the rotation "
            "and translation as separate arrays made beforehand, on one `coal.Transform3s`."
        ],
    )


# ---------------------------------------------------------------- 2. bulk placement


def bulk_placement(settings: Settings) -> Section:
    rng = np.random.default_rng(2)
    G = random_rigid(rng, 1.0)
    group = sc.CollisionShapeGroup(
        [sc.Capsule(LINK_RADIUS, LINK_LENGTH) for _ in range(LINKS)], pose=G
    )
    links = list(group)
    Ps = [link_poses(rng.uniform(-1.2, 1.2, LINKS)) for _ in range(GROUP_POSES)]
    tfs = [coal.Transform3s() for _ in range(LINKS)]
    raw_rows = [[(tf, *split(G @ M)) for tf, M in zip(tfs, P, strict=True)] for P in Ps]
    link_rows = [list(zip(links, [np.array(M) for M in P], strict=True)) for P in Ps]
    bulk = hasattr(group, "set_poses")

    def check_links(P: np.ndarray, what: str) -> None:
        for link, M in zip(links, P, strict=True):
            check(np.allclose(link.T, M, atol=1e-12), f"{what}: a link's T is not its pose")
            check_placed(link, G @ M, (0.0, 0.0, 0.1), (0.1, 0.0, 0.0), what)

    for row, P in list(zip(link_rows, Ps, strict=True))[:3]:
        for link, M in row:
            link.T = M
        check_links(P, "link.T = M in a group")
        if bulk:
            group.set_poses(P[::-1].copy(), check=False)  # somewhere else first
            group.set_poses(P, check=False)
            check_links(P, "set_poses")
    calls = GROUP_POSES * LINKS
    cases = [
        Case(
            "`group.set_poses(P, check=False)`",
            "for P in Ps: group.set_poses(P, check=False)" if bulk else None,
            calls,
        ),
        Case(
            "`group.set_poses(P)` (checked)",
            "for P in Ps: group.set_poses(P)" if bulk else None,
            calls,
        ),
        Case(
            "`link.T = M` on each leaf of the group",
            "for row in link_rows:\n for link, M in row: link.T = M",
            calls,
        ),
        Case(
            "raw: `tf.setRotation(R); tf.setTranslation(t)` per leaf",
            "for row in raw_rows:\n for tf, R, t in row: tf.setRotation(R); tf.setTranslation(t)",
            calls,
            reference=True,
        ),
    ]
    ns = {"Ps": Ps, "group": group, "link_rows": link_rows, "raw_rows": raw_rows}
    per_call = time_cases(cases, ns, settings)
    notes = [
        f"A group of {LINKS} capsules at a general pose; P: {GROUP_POSES} different "
        f"({LINKS}, 4, 4) arrays of element poses relative to the group; µs per leaf. Raw Coal "
        "sets world poses computed beforehand (raw Coal has no groups)."
    ]
    if not bulk:
        notes.append("This version of spatialcontact has no `CollisionShapeGroup.set_poses`.")
    return Section(
        "bulk placement",
        f"## 2. Bulk placement of a {LINKS}-leaf group's elements",
        "µs per leaf",
        "/ raw per leaf",
        lines_of(cases, per_call, cases[3].label),
        notes,
    )


# ------------------------------------------------------------------ 3. group pose


def group_pose(settings: Settings) -> Section:
    rng = np.random.default_rng(3)
    Ms = [random_rigid(rng, 1.0) for _ in range(POSES)]
    P = np.array([np.eye(4) for _ in range(LINKS)])
    P[:, 2, 3] = np.arange(LINKS) * PITCH
    group = sc.CollisionShapeGroup([sc.Sphere(0.05, pose=E) for E in P])
    leaves = list(group)
    tf = coal.Transform3s()
    tfs = [coal.Transform3s() for _ in range(LINKS)]
    RT = [split(M) for M in Ms]
    for M in Ms[:3]:
        group.T = M
        for leaf, E in zip(leaves, P, strict=True):
            check(np.allclose(leaf.world_T, M @ E, atol=1e-12), "group.T does not move a leaf")
            check_placed(leaf, M @ E, (0.0, 0.0, 0.0), (0.0, 0.0, 0.1), "group.T = M")
    cases = [
        Case("`group.T = M`", "for M in Ms: group.T = M", POSES),
        Case(
            "raw: one leaf, `tf.setRotation(R); tf.setTranslation(t)`",
            "for R, t in RT: tf.setRotation(R); tf.setTranslation(t)",
            POSES,
            reference=True,
        ),
        Case(
            f"raw: the {LINKS} leaves, `W = M @ P`, then `setTransform` per leaf",
            "for M in Ms:\n W = M @ P\n for tf, w in zip(tfs, W): "
            "tf.setTransform(w[:3, :3], w[:3, 3])",
            POSES,
            reference=True,
        ),
    ]
    ns = {"Ms": Ms, "RT": RT, "P": P, "group": group, "tf": tf, "tfs": tfs}
    per_call = time_cases(cases, ns, settings)
    return Section(
        "group pose",
        f"## 3. Moving a {LINKS}-sphere group",
        "µs per call",
        "/ one raw leaf update",
        lines_of(cases, per_call, cases[1].label),
        [f"M: {POSES} different rigid arrays, one per call."],
    )


# ------------------------------------------------------------- 4. two-object scene


def scene_pair(settings: Settings) -> Section:
    rng = np.random.default_rng(4)
    Ms = []
    for k in range(SCENE_POSES):
        M = random_rigid(rng, 1.0)
        direction = rng.normal(size=3)
        M[:3, 3] = direction / np.linalg.norm(direction) * (0.8 if k % 2 == 0 else 1.5)
        Ms.append(M)
    scene = sc.Scene()
    scene.add(sc.Sphere(0.5), "a")
    b = sc.Sphere(0.5)
    scene.add(b, "b")
    a2, b2 = sc.Sphere(0.5), sc.Sphere(0.5)
    geometries = (coal.Sphere(0.5), coal.Sphere(0.5))
    manager = coal.DynamicAABBTreeCollisionManager()
    co_a = coal.CollisionObject(geometries[0], coal.Transform3s())
    co_b = coal.CollisionObject(geometries[1], coal.Transform3s())
    for co in (co_a, co_b):
        co.computeAABB()
        manager.registerObject(co)
    manager.setup()
    callback = coal.CollisionCallBackDefault()
    data = callback.data
    data.request.distance_upper_bound = 0.0  # as the shape queries ask
    tfs = [coal.Transform3s(*split(M)) for M in Ms]

    def manager_answer(tf: Any) -> bool:
        co_b.setTransform(tf)
        co_b.computeAABB()
        manager.update()
        data.clear()
        manager.collide(callback)
        return bool(data.result.isCollision())

    for k, (M, tf) in enumerate(zip(Ms, tfs, strict=True)):
        b.T = M
        b2.T = M
        answers = (scene.in_collision(), a2.iscollided(b2), manager_answer(tf))
        check(answers == (k % 2 == 0,) * 3, f"pose {k}: scene, pair, manager say {answers}")
    cases = [
        Case("`b.T = M; scene.in_collision()`", "for M in Ms: b.T = M; scene.in_collision()",
             SCENE_POSES),
        Case("`b.T = M; a.iscollided(b)` (a pair in no scene)",
             "for M in Ms: b2.T = M; a2.iscollided(b2)", SCENE_POSES),
        Case(
            "raw: Coal's DynamicAABBTreeCollisionManager",
            "for tf in tfs: co_b.setTransform(tf); co_b.computeAABB(); manager.update(); "
            "data.clear(); manager.collide(callback); result.isCollision()",
            SCENE_POSES,
            reference=True,
        ),
    ]  # fmt: skip
    ns = {
        "Ms": Ms,
        "tfs": tfs,
        "b": b,
        "scene": scene,
        "a2": a2,
        "b2": b2,
        "co_b": co_b,
        "manager": manager,
        "data": data,
        "callback": callback,
        "result": data.result,
        "_keep": (geometries, co_a),
    }
    per_call = time_cases(cases, ns, settings)
    return Section(
        "two-object scene",
        "## 4. A scene of two spheres: move one, then ask",
        "µs per call",
        "/ the pair",
        lines_of(cases, per_call, cases[1].label),
        [
            f"{SCENE_POSES} poses of the moving sphere, every other one colliding. Coal's "
            "manager: the two `CollisionObject`s registered once; per call `setTransform`, "
            "`computeAABB`, `update()`, `collide` with a `CollisionCallBackDefault` and the "
            "answer read (`distance_upper_bound=0`, as the shape queries ask)."
        ],
    )


# ------------------------------------------------------------------ 5. arm and boxes


@dataclass
class ArmWorld:
    n: int
    scene: sc.Scene
    arm: sc.CollisionShapeGroup
    links: list[sc.CollisionShape]
    configs: list[np.ndarray]
    """The (7, 4, 4) link poses the arm goes through, in the arm group's (world) frame."""
    hits: int
    """How many of ``configs`` collide."""
    step: float
    """Grid step of the boxes, metres."""
    centres: np.ndarray
    """(n, 3) box centres."""


def box_centres(n: int) -> tuple[np.ndarray, float]:
    """(n, 3) box centres evenly spread over the cells of a regular grid filling the cube
    (none within CLEARANCE of its centre), and the grid step."""
    k = math.ceil(n ** (1 / 3))
    while True:
        step = CUBE / k
        g = (np.arange(k) + 0.5) * step - CUBE / 2
        cells = np.array(np.meshgrid(g, g, g, indexing="ij")).reshape(3, -1).T
        cells = cells[np.linalg.norm(cells, axis=1) > CLEARANCE]
        if len(cells) >= n:
            return cells[np.linspace(0, len(cells) - 1, n).round().astype(int)], step
        k += 1


def place(links: Sequence[sc.CollisionShape], P: np.ndarray) -> None:
    for link, M in zip(links, P, strict=True):
        link.T = M


def make_arm_world(n: int, pool: Sequence[np.ndarray]) -> ArmWorld:
    scene = sc.Scene()
    centres, step = box_centres(n)
    for c in centres:
        T = np.eye(4)
        T[:3, 3] = c
        scene.add(sc.Cuboid([BOX, BOX, BOX], pose=T))
    arm = sc.CollisionShapeGroup([sc.Capsule(LINK_RADIUS, LINK_LENGTH) for _ in range(LINKS)])
    scene.add(arm, "arm")
    links = list(arm)
    hit: list[np.ndarray] = []
    free: list[np.ndarray] = []
    for P in pool:
        place(links, P)
        (hit if scene.in_collision() else free).append(P)
    n_hit = min(len(hit), max(ARM_CONFIGS // 2, ARM_CONFIGS - len(free)))
    configs = hit[:n_hit] + free[: ARM_CONFIGS - n_hit]
    return ArmWorld(n, scene, arm, links, configs, n_hit, step, centres)


BY_LINKS = f"`link.T = M` x {LINKS}, `in_collision()`"
BY_SET_POSES = "`arm.set_poses(P, check=False)`, `in_collision()`"


def arm_label(n: int, what: str) -> str:
    return f"{n:,} boxes: {what}"


def arm_cases(world: ArmWorld) -> list[Case]:
    scene, arm, configs = world.scene, world.arm, world.configs
    rows = [list(zip(world.links, [np.array(M) for M in P], strict=True)) for P in configs]

    def by_links() -> None:
        for row in rows:
            for link, M in row:
                link.T = M
            scene.in_collision()

    def by_set_poses() -> None:
        for P in configs:
            arm.set_poses(P, check=False)
            scene.in_collision()

    def moves_only() -> None:
        for row in rows:
            for link, M in row:
                link.T = M

    bulk = hasattr(arm, "set_poses")
    n = len(configs)
    return [
        Case(arm_label(world.n, BY_LINKS), by_links, n),
        Case(arm_label(world.n, BY_SET_POSES), by_set_poses if bulk else None, n),
        Case(arm_label(world.n, f"`link.T = M` x {LINKS} alone"), moves_only, n),
        coal_managers(world),
    ]


class CoalManagers:
    """Coal's own broadphase from Python, for an arm world: the links in one DynamicAABBTree
    manager, the boxes in another; per configuration ``setTransform`` + ``computeAABB`` per
    link, ``update()``, then a manager-against-manager ``collide`` finding every contact, as
    the scene does. Calling it goes through every configuration and gives the answers."""

    def __init__(self, world: ArmWorld) -> None:
        self.box = coal.Box(BOX, BOX, BOX)
        self.capsule = coal.Capsule(LINK_RADIUS, LINK_LENGTH)
        self.rest = coal.DynamicAABBTreeCollisionManager()
        self.box_cos = [
            coal.CollisionObject(self.box, coal.Transform3s(np.eye(3), c.copy()))
            for c in world.centres
        ]
        for co in self.box_cos:
            co.computeAABB()
            self.rest.registerObject(co)
        self.rest.setup()
        self.moving = coal.DynamicAABBTreeCollisionManager()
        self.link_cos = [
            coal.CollisionObject(self.capsule, coal.Transform3s()) for _ in range(LINKS)
        ]
        for co in self.link_cos:
            co.computeAABB()
            self.moving.registerObject(co)
        self.moving.setup()
        self.callback = coal.CollisionCallBackDefault()
        self.data = self.callback.data
        self.data.request.distance_upper_bound = 0.0
        self.data.request.num_max_contacts = 1 << 30
        self.rows = [
            list(zip(self.link_cos, [coal.Transform3s(*split(M)) for M in P], strict=True))
            for P in world.configs
        ]

    def __call__(self) -> list[bool]:
        moving, rest, callback, data = self.moving, self.rest, self.callback, self.data
        found = []
        for row in self.rows:
            for co, tf in row:
                co.setTransform(tf)
                co.computeAABB()
            moving.update()
            data.clear()
            moving.collide(rest, callback)
            found.append(data.result.isCollision())
        return found


def coal_managers(world: ArmWorld) -> Case:
    """The case of :class:`CoalManagers`, its answers checked against the scene's."""
    managers = CoalManagers(world)
    expected = []
    for P in world.configs:
        place(world.links, P)
        expected.append(world.scene.in_collision())
    check(managers() == expected, f"{world.n} boxes: Coal's managers answer otherwise")
    return Case(arm_label(world.n, "raw Coal managers"), managers, len(world.configs), True)


def check_arm(world: ArmWorld) -> None:
    """The scene's answers, by both ways of moving the arm, against a loop of shape queries."""
    boxes = [world.scene[name] for name in world.scene.names if name != "arm"]
    bulk = hasattr(world.arm, "set_poses")
    for k, P in enumerate(world.configs):
        place(world.links, P)
        expected = any(link.iscollided(box) for link in world.links for box in boxes)
        check(world.scene.in_collision() == expected, f"{world.n} boxes, configuration {k}")
        if bulk:
            world.arm.set_poses(P, check=False)
            check(world.scene.in_collision() == expected, f"{world.n} boxes, set_poses, {k}")


def arm_scene(settings: Settings) -> Section:
    rng = np.random.default_rng(5)
    pool_size = 600 if settings.quick else POOL
    pool = [link_poses(q) for q in rng.uniform(-math.pi / 2, math.pi / 2, (pool_size, LINKS))]
    worlds = [make_arm_world(n, pool) for n in SIZES]
    for world in worlds:
        check_arm(world)
    per_world = [arm_cases(world) for world in worlds]
    cases = [c for group in per_world for c in group]
    per_call = time_cases(cases, None, settings)
    lines = []
    for group in per_world:
        raw = group[-1].label
        for c, first in zip(group, per_world[0], strict=True):
            values = per_call[c.label]
            us = None if values is None else statistics.median(values)
            r = paired_ratio(values, per_call[first.label])
            ref = None if c.reference else raw
            vs_ref = None if c.reference else paired_ratio(values, per_call[raw])
            lines.append(Line(c.label, us, r, c.reference, ref, vs_ref))
    spacing = ", ".join(f"{w.step:.2f} m for {w.n:,} boxes" for w in worlds)
    hits = ", ".join(f"{w.hits} of {len(w.configs)} at {w.n:,}" for w in worlds)
    return Section(
        "arm among boxes",
        f"## 5. A {LINKS}-capsule arm among static boxes: move every link, then ask the scene",
        "µs per configuration",
        "/ same at 10 boxes",
        lines,
        [
            f"Capsules of radius {LINK_RADIUS} m and length {LINK_LENGTH} m, {PITCH} m apart "
            f"along the chain, in one group; {BOX * 100:g} cm boxes on a regular grid filling "
            f"a {CUBE:g} m cube centred on the arm's base (none within {CLEARANCE} m of it), "
            f"grid step {spacing}. Configurations colliding: {hits}; picked from the same "
            f"{pool_size:,} random ones, taken in turn. Every answer checked against a loop of "
            "`link.iscollided(box)` first. Raw Coal managers: the links in one "
            "`DynamicAABBTreeCollisionManager`, the boxes in another; per configuration "
            "`setTransform` + `computeAABB` per link, `update()`, then manager against manager "
            "`collide` finding every contact, as the scene does (context, no target).",
        ],
    )


# ---------------------------------------------------------------------------------- main


def baseline_figures() -> dict[str, Any] | None:
    """The figures of benchmarks/baseline.json, or None when the file is not there."""
    return read_figures(BASELINE) if BASELINE.exists() else None


def baseline_label(baseline: Mapping[str, Any]) -> str:
    version = baseline.get("package", {}).get("version") or "baseline"
    return f"{version} (baseline)"


def print_section(section: Section, baseline: Mapping[str, Any] | None) -> None:
    print(f"\n{section.title}\n")
    headers = ["operation", section.unit, section.ratio_to]
    if baseline is not None:
        label = baseline_label(baseline)
        headers += [f"{label} µs", f"{label} ratio"]
    rows = []
    for line in section.lines:
        cells = [line.label, fmt_us(line.us), fmt_ratio(line.ratio)]
        if baseline is not None:
            name = name_of(section, line)
            figures = baseline["reference"] if line.reference else baseline["rows"]
            cells += [
                fmt_us(figures.get(name)),
                fmt_ratio(baseline["ratios"].get(ratio_name(section, line))),
            ]
        rows.append(cells)
    print(table(headers, rows, right=[False] + [True] * (len(headers) - 1)))
    for note in section.notes:
        print(f"\n{note}")


def record(figures: Figures, section: Section) -> None:
    for line in section.lines:
        figures.add(name_of(section, line), line.us, reference=line.reference)
        figures.ratio(ratio_name(section, line), line.ratio)
    for line in section.lines:
        if line.ref is not None:
            figures.relate(name_of(section, line), stable_name(section, line.ref), line.vs_ref)


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse_settings(
        __doc__.splitlines()[0] if __doc__ else "", argv, repeat=21, min_time=0.02
    )
    figures = Figures("bench_core", DISTRIBUTIONS)
    baseline = baseline_figures()
    print("# spatialcontact core benchmark: poses and small scenes against raw Coal\n")
    for text in figures.machine:
        print(f"- {text}")
    print(f"- spatialcontact imported from {Path(sc.__file__).resolve().parent}")
    print(
        f"- µs per call: median of {settings.repeat} timings of at least "
        f"{settings.min_time * 1e3:g} ms each; the statements of a table are timed in turn "
        "and a ratio is the median of the ratios of the timings taken side by side"
        + (" (--quick: rough figures)" if settings.quick else "")
    )
    if baseline is not None:
        print(
            f"- {baseline_label(baseline)}: figures of {BASELINE.name}, a full run at another "
            "time: its absolute times are only indicative, its ratios a better guide"
        )
    sections = []
    for make in (leaf_pose, bulk_placement, group_pose, scene_pair, arm_scene):
        section = make(settings)
        print_section(section, baseline)
        record(figures, section)
        sections.append(section)
    leaf, bulk, group, pair, arm = sections
    # The first line of each of the first four tables is the one with a target.
    largest = arm.line(arm_label(SIZES[-1], BY_SET_POSES))
    bulk_moves = largest.us is not None  # set_poses when the package has it
    if not bulk_moves:
        largest = arm.line(arm_label(SIZES[-1], BY_LINKS))
    targets: list[tuple[str, str, float | None, float]] = [
        ("T1", "`leaf.T = M` / raw setters", leaf.lines[0].ratio, TARGET_LEAF),
        ("T2", "`group.set_poses(P, check=False)` / raw setters, per leaf",
         bulk.lines[0].ratio, TARGET_BULK),
        ("T3", f"`group.T = M` ({LINKS} spheres) / one raw leaf update", group.lines[0].ratio,
         TARGET_GROUP),
        ("T4", "two-object scene: move + `in_collision()` / move + `a.iscollided(b)`",
         pair.lines[0].ratio, TARGET_SCENE),
        ("T5", f"arm: {SIZES[-1]:,} boxes / {SIZES[0]:,} boxes, link moves included (by "
         + ("`set_poses`)" if bulk_moves else "`link.T`)"), largest.ratio, TARGET_SCALE),
    ]  # fmt: skip
    print("\n## Targets\n")
    headers = ["target", "what", "measured", "wanted", "verdict"]
    if baseline is not None:
        headers.append(f"{baseline_label(baseline)} measured")
    rows = []
    for name, text, measured, limit in targets:
        verdict = figures.target(name, text.replace("`", ""), measured, limit)
        cells = [name, text, fmt_ratio(measured), f"<= {limit:g}×", verdict]
        if baseline is not None:
            old = baseline["targets"].get(name, {}).get("measured")
            cells.append(fmt_ratio(old))
        rows.append(cells)
    print(table(headers, rows))
    figures.write(settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
