"""Cost of one query between two shapes: spatialcontact against raw Coal and other libraries.

Run ``python benchmarks/bench_queries.py`` (about a minute) or add ``--quick`` (a few seconds,
rough figures). It prints, as Markdown tables, the median microseconds per call of

1. ``a.iscollided(b)`` and ``a.closest_point(b)`` at fixed poses, next to the same query made
   with Coal's cached functors directly (persistent transforms, request and result, with
   ``result.clear()`` before each call) and next to spatialgeometry 1.4.2;
2. the same with ``b``'s pose set from a 4x4 array before every call;
3. ``a.contacts(b)`` next to ``a.iscollided(b)`` and to a raw Coal collide whose deepest contact
   is copied into a Python tuple by hand;
4. python-fcl and pybullet (DIRECT mode), when they are installed (``pip install .[bench]``);
5. ``a.closest_point(b)`` and ``a.contacts(b)`` on the pairs with a closed form, separated and
   overlapping, next to raw Coal and to the plain-float closed form called alone (what the
   query would cost if it used the closed form instead of Coal),

then checks the performance targets and prints PASS or FAIL for each. The machine these run on
is usually shared, so compare the ratios (measured in the same run, interleaved), not the
absolute times.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import operator
import os
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import coal
import numpy as np
import trimesh
from _timing import (
    Figures,
    Settings,
    fmt_ratio,
    fmt_us,
    interleaved_samples,
    machine_lines,
    paired_ratio,
    parse_settings,
    table,
)

import spatialcontact as sc

try:
    import spatialgeometry as sg
except ImportError:  # an optional peer: its columns then read n/a
    sg = None
try:
    import fcl
except ImportError:  # optional peer (python-fcl)
    fcl = None
try:
    import pybullet
except ImportError:  # optional peer
    pybullet = None

GAP = 0.5
"""Distance in metres between the two shapes of a separated pair."""
OVERLAP = 0.25
"""How far in metres the two shapes of an overlapping pair reach into each other."""
ROLL = math.radians(30.0)
"""Rotation of the second shape about x: it keeps the gap along x and makes the pose general."""

MESH_SUBDIVISIONS = 4
"""Icosphere subdivisions of the mesh/mesh pair: 5,120 triangles."""
CONTACT_MESH_SUBDIVISIONS = 3
"""Icosphere subdivisions of the mesh/sphere contact pair: 1,280 triangles."""

PRIMITIVE_PAIRS = ("sphere/sphere", "box/box", "capsule/capsule")

DISTRIBUTIONS = ["spatialcontact", "coal", "numpy", "spatialgeometry", "python-fcl", "pybullet"]

TARGET_COLLIDE = 1.5
TARGET_POSE = 3.0
TARGET_SG_PRIMITIVE = 4.0
TARGET_SG_MESH = 20.0
TARGET_CONTACTS = 2.0

TARGETS = [
    (
        "T1",
        f"iscollided at fixed poses on a primitive pair within {TARGET_COLLIDE}x of the raw "
        "Coal functor call",
    ),
    (
        "T2",
        f"pose set from a 4x4 before each call (primitive pairs, both queries) within "
        f"{TARGET_POSE}x of raw Coal doing the same pose update",
    ),
    (
        "T3",
        f"iscollided at least {TARGET_SG_PRIMITIVE}x faster than spatialgeometry on primitive "
        f"pairs and {TARGET_SG_MESH}x on separated meshes, at fixed or set poses",
    ),
    (
        "T4",
        f"contacts(...) within {TARGET_CONTACTS}x of raw Coal collide with the same contacts "
        "extracted by hand",
    ),
    (
        "T4f",
        f"the same with every field of every record read as well, within {TARGET_CONTACTS}x "
        "(a record copies its arrays out of Coal, read-only, on first read)",
    ),
]

_depth = operator.attrgetter("penetration_depth")


def pose(offset: float) -> np.ndarray:
    """(4, 4) pose of the second shape: roll ``ROLL`` about x, then ``offset`` along world x."""
    c, s = math.cos(ROLL), math.sin(ROLL)
    return np.array(
        [
            [1.0, 0.0, 0.0, offset],
            [0.0, c, -s, 0.0],
            [0.0, s, c, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


def quaternion_xyzw(R: np.ndarray) -> list[float]:
    """Unit quaternion ``[x, y, z, w]`` of the rotation matrix ``R`` (3, 3)."""
    M = np.eye(4)
    M[:3, :3] = R
    w, x, y, z = trimesh.transformations.quaternion_from_matrix(M)
    return [float(x), float(y), float(z), float(w)]


def coal_bvh(vertices: np.ndarray, faces: np.ndarray) -> Any:
    """A finished Coal ``BVHModelOBBRSS`` of a triangle mesh (vertices (n, 3), faces (m, 3))."""
    model = coal.BVHModelOBBRSS()
    model.beginModel(len(faces), len(vertices))
    model.addVertices(np.ascontiguousarray(vertices, dtype=np.float64))
    model.addTriangles(np.ascontiguousarray(faces, dtype=np.int64))
    model.endModel()
    return model


# ----------------------------------------------------------------------------- the pairs


@dataclass
class Kind:
    """One kind of shape, built the same way in every library.

    ``half`` is its half extent along x, so two of them side by side at ``2 * half + GAP`` are
    ``GAP`` apart whatever the roll about x.
    """

    name: str
    half: float
    ours: Callable[[], sc.CollisionShape]
    coal_geometry: Callable[[], Any]
    sg_shape: Callable[[], Any] | None = None
    fcl_geometry: Callable[[], Any] | None = None
    pyb_shape: Callable[[int], int] | None = None


@dataclass
class Pair:
    """Two shapes of one kind in every library; the second one's pose can be changed."""

    kind: Kind
    a: sc.CollisionShape
    b: sc.CollisionShape
    g1: Any
    g2: Any
    t1: Any
    t2: Any
    sa: Any = None
    sb: Any = None
    fa: Any = None
    fb: Any = None
    pa: int | None = None
    pb: int | None = None
    pyb_client: int | None = None

    @property
    def name(self) -> str:
        return f"{self.kind.name}/{self.kind.name}"

    def offset(self, state: str) -> float:
        half = self.kind.half
        return 2.0 * half + GAP if state == "separated" else 2.0 * half - OVERLAP

    def place(self, M: np.ndarray) -> None:
        """Put the second shape at ``M`` (4, 4) in every library."""
        self.b.T = M
        self.t2.setTransform(M[:3, :3], M[:3, 3])
        if self.sb is not None:
            self.sb.T = M
        if self.fb is not None:
            self.fb.setTransform(fcl.Transform(M[:3, :3], M[:3, 3]))
        if self.pb is not None:
            pybullet.resetBasePositionAndOrientation(
                self.pb, M[:3, 3].tolist(), quaternion_xyzw(M[:3, :3]), self.pyb_client
            )


def _pyb_sphere(client: int) -> int:
    return int(
        pybullet.createCollisionShape(pybullet.GEOM_SPHERE, radius=0.5, physicsClientId=client)
    )


def _pyb_box(client: int) -> int:
    return int(
        pybullet.createCollisionShape(
            pybullet.GEOM_BOX, halfExtents=[0.5, 0.5, 0.5], physicsClientId=client
        )
    )


def fcl_bvh(vertices: np.ndarray, faces: np.ndarray) -> Any:
    """A python-fcl ``BVHModel`` of a triangle mesh (vertices (n, 3), faces (m, 3))."""
    model = fcl.BVHModel()
    model.beginModel(len(vertices), len(faces))
    model.addSubModel(vertices, faces)
    model.endModel()
    return model


def make_kinds(mesh_file: str) -> dict[str, Kind]:
    """The sphere, box, capsule and mesh used by every pair.

    Every library reads the mesh from the same STL file: Coal's mesh queries depend on the
    order of the triangles (the icosphere as trimesh makes it is up to 4x slower to measure
    distances on than the same surface written to STL and read back).
    """
    loaded: Any = trimesh.load(mesh_file, force="mesh")
    vertices = np.asarray(loaded.vertices, dtype=np.float64)
    faces = np.asarray(loaded.faces, dtype=np.int64)
    have_sg, have_fcl, have_pyb = sg is not None, fcl is not None, pybullet is not None
    return {
        "sphere": Kind(
            "sphere",
            0.5,
            lambda: sc.Sphere(0.5),
            lambda: coal.Sphere(0.5),
            (lambda: sg.Sphere(0.5)) if have_sg else None,
            (lambda: fcl.Sphere(0.5)) if have_fcl else None,
            _pyb_sphere if have_pyb else None,
        ),
        "box": Kind(
            "box",
            0.5,
            lambda: sc.Cuboid([1.0, 1.0, 1.0]),
            lambda: coal.Box(1.0, 1.0, 1.0),
            (lambda: sg.Cuboid([1.0, 1.0, 1.0])) if have_sg else None,
            (lambda: fcl.Box(1.0, 1.0, 1.0)) if have_fcl else None,
            _pyb_box if have_pyb else None,
        ),
        "capsule": Kind(
            "capsule",
            0.25,
            lambda: sc.Capsule(0.25, 1.0),
            lambda: coal.Capsule(0.25, 1.0),
        ),
        "mesh": Kind(
            "mesh",
            1.0,
            lambda: sc.Mesh(mesh_file),
            lambda: coal_bvh(vertices, faces),
            (lambda: sg.Mesh(mesh_file)) if have_sg else None,
            (lambda: fcl_bvh(vertices, faces)) if have_fcl else None,
            None,  # Bullet finds no contact between two concave triangle meshes
        ),
    }


def make_pair(kind: Kind, pyb_client: int | None) -> Pair:
    g1, g2 = kind.coal_geometry(), kind.coal_geometry()
    g1.computeLocalAABB()
    g2.computeLocalAABB()
    pair = Pair(kind, kind.ours(), kind.ours(), g1, g2, coal.Transform3s(), coal.Transform3s())
    if kind.sg_shape is not None:
        pair.sa, pair.sb = kind.sg_shape(), kind.sg_shape()
    if kind.fcl_geometry is not None:
        pair.fa = fcl.CollisionObject(kind.fcl_geometry(), fcl.Transform())
        pair.fb = fcl.CollisionObject(kind.fcl_geometry(), fcl.Transform())
    if kind.pyb_shape is not None and pyb_client is not None:
        pair.pyb_client = pyb_client
        pair.pa = pybullet.createMultiBody(
            baseMass=0.0,
            baseCollisionShapeIndex=kind.pyb_shape(pyb_client),
            physicsClientId=pyb_client,
        )
        pair.pb = pybullet.createMultiBody(
            baseMass=0.0,
            baseCollisionShapeIndex=kind.pyb_shape(pyb_client),
            physicsClientId=pyb_client,
        )
    return pair


# ------------------------------------------------------------------------ the statements


def namespace(pair: Pair, M: np.ndarray) -> dict[str, Any]:
    """Everything the timed statements of ``pair`` refer to, with ``M`` the second pose."""
    qc = coal.CollisionRequest()  # the request spatialcontact uses (see query._collide_entry)
    qc.distance_upper_bound = 0.0
    qd = coal.DistanceRequest()
    qd.enable_signed_distance = True
    ns: dict[str, Any] = {
        "a": pair.a,
        "b": pair.b,
        "t1": pair.t1,
        "t2": pair.t2,
        "fc": coal.ComputeCollision(pair.g1, pair.g2),
        "qc": qc,
        "rc": coal.CollisionResult(),
        "fd": coal.ComputeDistance(pair.g1, pair.g2),
        "qd": qd,
        "rd": coal.DistanceResult(),
        "M": M,
        "sa": pair.sa,
        "sb": pair.sb,
        "fa": pair.fa,
        "fb": pair.fb,
        "pa": pair.pa,
        "pb": pair.pb,
        "cid": pair.pyb_client,
    }
    if fcl is not None:
        ns["fcl"] = fcl
        ns["fq"] = fcl.CollisionRequest(enable_contact=False)
        ns["fdq"] = fcl.DistanceRequest(enable_nearest_points=True, enable_signed_distance=True)
    if pybullet is not None:
        ns["gcp"] = pybullet.getClosestPoints
    # The geometries must outlive the functors that point at them.
    ns["_keep"] = (pair.g1, pair.g2)
    return ns


OURS = {"iscollided": "a.iscollided(b)", "closest_point": "a.closest_point(b)"}
RAW = {
    "iscollided": "rc.clear(); fc(t1, t2, qc, rc) > 0",
    "closest_point": (
        "rd.clear(); fd(t1, t2, qd, rd); (rd.min_distance, rd.getNearestPoint1(), "
        "rd.getNearestPoint2())"
    ),
}
SG = {"iscollided": "sa.iscollided(sb)", "closest_point": "sa.closest_point(sb)"}
FCL = {
    "iscollided": "fcl.collide(fa, fb, fq) > 0",
    "closest_point": (
        "res = fcl.DistanceResult(); fcl.distance(fa, fb, fdq, res); "
        "(res.min_distance, res.nearest_points)"
    ),
}
PYB = {
    "iscollided": "len(gcp(pa, pb, 0.0, physicsClientId=cid)) > 0",
    "closest_point": "gcp(pa, pb, 10.0, physicsClientId=cid)",
}
POSE_OURS = "b.T = M; "
POSE_RAW = "t2.setTransform(M[:3, :3], M[:3, 3]); "
POSE_SG = "sb.T = M; "


def measure(
    cases: dict[str, str], ns: dict[str, Any], settings: Settings
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Time ``cases`` in turn: the timings of each repeat, and the median of each case."""
    samples = interleaved_samples(cases, ns, repeat=settings.repeat, min_time=settings.min_time)
    return samples, {k: statistics.median(v) for k, v in samples.items()}


def evaluate(stmt: str, ns: dict[str, Any]) -> Any:
    """Run a statement once and return the value of its last expression."""
    *head, last = stmt.split("; ")
    if head:
        exec("; ".join(head), ns)
    return eval(last, ns)


# ------------------------------------------------------------------------------ results


@dataclass
class Row:
    """One line of a results table."""

    cells: list[str]
    checks: list[tuple[str, float, float, bool]] = field(default_factory=list)
    """(target, measured ratio, limit, True when the ratio must be at most the limit)."""

    def verdicts(self) -> str:
        parts = []
        for target, value, limit, at_most in self.checks:
            ok = value <= limit if at_most else value >= limit
            parts.append(f"{target} {'PASS' if ok else 'FAIL'}")
        return ", ".join(parts) or "-"


class Report:
    """Collects rows, target checks and notes while the benchmark runs."""

    def __init__(self) -> None:
        self.checks: list[tuple[str, str, float, float, bool]] = []
        self.notes: list[str] = []
        self.errors: list[str] = []
        self.figures = Figures("bench_queries", DISTRIBUTIONS)

    def check(
        self, row: Row, target: str, where: str, value: float | None, limit: float, at_most: bool
    ) -> None:
        """Check ``value`` against ``limit`` (skipped when a figure is missing)."""
        if value is None:
            return
        row.checks.append((target, value, limit, at_most))
        self.checks.append((target, where, value, limit, at_most))

    def summary(self) -> str:
        rows = []
        for target, text in TARGETS:
            mine = [c for c in self.checks if c[0] == target]
            if not mine:
                rows.append([target, text, "0", "n/a", "n/a"])
                continue
            at_most = mine[0][4]
            worst = max(mine, key=lambda c: c[2]) if at_most else min(mine, key=lambda c: c[2])
            failed = [c for c in mine if not (c[2] <= c[3] if at_most else c[2] >= c[3])]
            verdict = "PASS" if not failed else f"FAIL ({len(failed)} of {len(mine)})"
            rows.append(
                [target, text, str(len(mine)), f"{fmt_ratio(worst[2])} ({worst[1]})", verdict]
            )
        return table(["target", "what", "rows", "worst ratio (where)", "verdict"], rows)


def close(x: Any, y: Any, tol: float) -> bool:
    if x is None or y is None:
        return x is None and y is None
    return bool(np.allclose(np.asarray(x, dtype=float), np.asarray(y, dtype=float), atol=tol))


def same_answer(query: str, ours: Any, raw: Any, hollow: bool = False) -> bool:
    """True when spatialcontact's answer is raw Coal's (up to rounding).

    ``hollow``: an overlapping mesh pair, whose distance is the deepest triangle contact's
    (docs/conventions-distance.md) where Coal's distance reads 0: only the signs are compared.
    """
    if query == "iscollided":
        return bool(ours == raw)
    if hollow:
        return bool(ours[0] <= 0.0 and raw[0] <= 0.0)
    d, p1, p2 = ours
    rd, r1, r2 = raw
    return close(d, rd, 1e-9) and close(p1, r1, 1e-9) and close(p2, r2, 1e-9)


def peer_distance(library: str, value: Any) -> float | None:
    if library == "sg":
        return value[0]
    if library == "fcl":
        return float(value[0])
    if library == "pyb":
        return min(p[8] for p in value) if value else None
    raise ValueError(library)


def compare_peer(
    report: Report, where: str, library: str, query: str, ours: Any, theirs: Any
) -> None:
    """Note (not fail) when another library answers differently (meshes are hollow in Coal)."""
    if query == "iscollided":
        if bool(ours) != bool(theirs):
            report.notes.append(f"{library} says iscollided={theirs} at {where}, we say {ours}")
        return
    d_theirs = peer_distance(library, theirs)
    d_ours = ours[0]
    if d_ours is None or d_theirs is None or abs(d_ours - d_theirs) > 1e-3:
        report.notes.append(f"{library} distance at {where} is {d_theirs!r}, ours is {d_ours!r}")


# ------------------------------------------------------------------------------- sections

QUERY_HEADERS = [
    "pair",
    "state",
    "query",
    "spatialcontact µs",
    "raw Coal µs",
    "sc / raw",
    "spatialgeometry µs",
    "sg / sc",
    "targets",
]


def query_rows(
    pairs: Sequence[Pair], settings: Settings, report: Report, set_pose: bool
) -> list[Row]:
    """Sections 1 (fixed poses) and 2 (pose set from a 4x4 before each call)."""
    rows = []
    for pair in pairs:
        for state in ("separated", "overlapping"):
            M = pose(pair.offset(state))
            pair.place(M)
            ns = namespace(pair, M)
            for query in ("iscollided", "closest_point"):
                where = f"{pair.name} {state} {query}{' + pose' if set_pose else ''}"
                cases = {
                    "ours": (POSE_OURS if set_pose else "") + OURS[query],
                    "raw": (POSE_RAW if set_pose else "") + RAW[query],
                }
                if pair.sa is not None:
                    cases["sg"] = (POSE_SG if set_pose else "") + SG[query]
                answers = {k: evaluate(v, ns) for k, v in cases.items()}
                hollow = pair.kind.name == "mesh" and state == "overlapping"
                if not same_answer(query, answers["ours"], answers["raw"], hollow):
                    report.errors.append(
                        f"{where}: spatialcontact {answers['ours']!r} != raw Coal "
                        f"{answers['raw']!r}"
                    )
                if "sg" in answers:
                    compare_peer(report, where, "sg", query, answers["ours"], answers["sg"])
                samples, us = measure(cases, ns, settings)
                t_sg = us.get("sg")
                report.figures.add(f"{where}: spatialcontact", us["ours"])
                report.figures.add(f"{where}: raw Coal", us["raw"], reference=True)
                report.figures.add(f"{where}: spatialgeometry", t_sg, reference=True)
                over_raw = paired_ratio(samples["ours"], samples["raw"])
                sg_over = paired_ratio(samples.get("sg"), samples["ours"])
                report.figures.relate(f"{where}: spatialcontact", f"{where}: raw Coal", over_raw)
                row = Row(
                    [
                        pair.name,
                        state,
                        query,
                        fmt_us(us["ours"]),
                        fmt_us(us["raw"]),
                        fmt_ratio(over_raw),
                        fmt_us(t_sg),
                        fmt_ratio(sg_over),
                    ]
                )
                primitive = pair.name in PRIMITIVE_PAIRS
                if primitive and not set_pose and query == "iscollided":
                    report.check(row, "T1", where, over_raw, TARGET_COLLIDE, True)
                if primitive and set_pose:
                    report.check(row, "T2", where, over_raw, TARGET_POSE, True)
                if query == "iscollided" and sg_over is not None:
                    if primitive:
                        report.check(row, "T3", where, sg_over, TARGET_SG_PRIMITIVE, False)
                    elif state == "separated":
                        report.check(row, "T3", where, sg_over, TARGET_SG_MESH, False)
                row.cells.append(row.verdicts())
                rows.append(row)
    return rows


def extract_one(c: Any) -> tuple[Any, ...]:
    """A Coal contact copied into a tuple with the fields of a spatialcontact Contact: normal,
    pos, depth, the (2, 3) nearest points, b1, b2."""
    return (
        c.normal,
        c.pos,
        c.penetration_depth,
        np.array((c.getNearestPoint1(), c.getNearestPoint2())),
        c.b1,
        c.b2,
    )


def raw_contacts(
    functor: Any, t1: Any, t2: Any, request: Any, result: Any, deepest: bool
) -> Callable[[], list[tuple[Any, ...]]]:
    """The raw Coal collide and contact extraction, written as a user would by hand."""
    get = result.getContact
    clear = result.clear

    if not deepest:

        def first() -> list[tuple[Any, ...]]:
            clear()
            if functor(t1, t2, request, result) == 0:
                return []
            return [extract_one(get(0))]

        return first

    def best() -> list[tuple[Any, ...]]:
        clear()
        n = functor(t1, t2, request, result)
        if n == 0:
            return []
        return [extract_one(min([get(i) for i in range(n)], key=_depth))]

    return best


CONTACT_HEADERS = [
    "pair (overlapping)",
    "contacts() µs",
    "contacts() + every field read µs",
    "iscollided() µs",
    "raw Coal + extraction µs",
    "contacts / raw",
    "(+ fields) / raw",
    "contacts / iscollided",
    "targets",
]


def contact_rows(settings: Settings, report: Report) -> list[Row]:
    """Section 3: ``a.contacts(b)`` against iscollided and a hand-written raw Coal version."""
    ico = trimesh.creation.icosphere(subdivisions=CONTACT_MESH_SUBDIVISIONS)
    setups = [
        (
            "sphere/sphere",
            sc.Sphere(0.5),
            sc.Sphere(0.5, pose=pose(1.0 - OVERLAP)),
            coal.Sphere(0.5),
            coal.Sphere(0.5),
            False,
        ),
        (
            f"mesh ({len(ico.faces):,} triangles)/sphere",
            sc.Mesh.from_trimesh(ico),
            # off the icosphere's vertex at (1, 0, 0): a sphere centred exactly on triangles'
            # planes gets Coal's undefined (zero) normals, which spatialcontact then re-asks for
            sc.Sphere(0.3, pose=pose(1.0) + np.outer([0.0, 0.05, 0.02, 0.0], [0, 0, 0, 1])),
            coal_bvh(np.asarray(ico.vertices), np.asarray(ico.faces)),
            coal.Sphere(0.3),
            True,
        ),
    ]
    rows = []
    for name, a, b, g1, g2, many in setups:
        g1.computeLocalAABB()
        g2.computeLocalAABB()
        M = np.array(b.T)
        t1, t2 = coal.Transform3s(), coal.Transform3s(M[:3, :3], M[:3, 3])
        request = coal.CollisionRequest()
        request.num_max_contacts = sc.query.ALL_CONTACTS if many else 1
        functor = coal.ComputeCollision(g1, g2)
        raw = raw_contacts(functor, t1, t2, request, coal.CollisionResult(), many)
        ns = {"a": a, "b": b, "raw": raw, "_keep": (g1, g2, functor)}
        cases = {
            "contacts": "a.contacts(b)",
            "fields": "[(c.normal, c.pos, c.penetration_depth, c.nearest_points, c.b1, c.b2)"
            " for c in a.contacts(b)]",
            "iscollided": "a.iscollided(b)",
            "raw": "raw()",
        }
        ours, theirs = a.contacts(b), raw()
        if len(ours) != 1 or len(theirs) != 1:
            report.errors.append(f"{name}: {len(ours)} contacts, raw Coal {len(theirs)}")
        else:
            c, (normal, pos, depth, points, b1, b2) = ours[0], theirs[0]
            if not (
                close(c.normal, normal, 1e-9)
                and close(c.pos, pos, 1e-9)
                and close(c.penetration_depth, depth, 1e-9)
                and close(c.nearest_points, points, 1e-9)
                and (c.b1, c.b2) == (b1, b2)
            ):
                report.errors.append(f"{name}: contact {c!r} differs from raw Coal {theirs[0]!r}")
        samples, us = measure(cases, ns, settings)
        raw_name = f"{name} overlapping: raw Coal + extraction"
        report.figures.add(raw_name, us["raw"], reference=True)
        for label, text in (
            ("contacts", "contacts()"),
            ("fields", "contacts() + every field read"),
            ("iscollided", "iscollided()"),
        ):
            report.figures.add(f"{name} overlapping: {text}", us[label])
            report.figures.relate(
                f"{name} overlapping: {text}",
                raw_name,
                paired_ratio(samples[label], samples["raw"]),
            )
        over_raw = paired_ratio(samples["contacts"], samples["raw"])
        with_fields = paired_ratio(samples["fields"], samples["raw"])
        row = Row(
            [
                name,
                fmt_us(us["contacts"]),
                fmt_us(us["fields"]),
                fmt_us(us["iscollided"]),
                fmt_us(us["raw"]),
                fmt_ratio(over_raw),
                fmt_ratio(with_fields),
                fmt_ratio(paired_ratio(samples["contacts"], samples["iscollided"])),
            ]
        )
        report.check(row, "T4", f"{name} contacts", over_raw, TARGET_CONTACTS, True)
        report.check(row, "T4f", f"{name} contacts + fields", with_fields, TARGET_CONTACTS, True)
        row.cells.append(row.verdicts())
        rows.append(row)
    return rows


FORM_HEADERS = [
    "pair",
    "state",
    "query",
    "spatialcontact µs",
    "raw Coal µs",
    "closed form alone µs",
    "sc / raw",
    "form / sc",
    "overlap answer",
]

FORM_SHAPES: dict[str, Callable[[np.ndarray], sc.CollisionShape]] = {
    "sphere": lambda T: sc.Sphere(0.5, pose=T),
    "box": lambda T: sc.Cuboid([1.0, 0.8, 0.6], pose=T),
    "capsule": lambda T: sc.Capsule(0.3, 1.0, pose=T),
    "cylinder": lambda T: sc.Cylinder(0.3, 1.0, pose=T),
    "cone": lambda T: sc.Cone(0.5, 1.0, pose=T),
    "halfspace": lambda T: sc.HalfSpace([0.0, 0.0, 1.0], 0.0, pose=T),
}
FORM_PAIRS = [
    "sphere/sphere",
    "sphere/box",
    "sphere/capsule",
    "capsule/capsule",
    "sphere/cylinder",
    "sphere/cone",
    "sphere/halfspace",
    "capsule/halfspace",
    "box/halfspace",
    "cylinder/halfspace",
]
"""The pairs with a closed form (``spatialcontact._closed_form_scalar``)."""
FORM_OVERLAP = {"sphere/capsule", "capsule/capsule", "sphere/cylinder", "sphere/cone"}
"""Those whose overlaps the package answers with the closed form (Coal is wrong there)."""


def _form_poses(pair: str) -> dict[str, np.ndarray]:
    """The second shape's pose per state: turned about x and y, apart or overlapping."""
    turn = np.eye(4)
    (cx, sx), (cy, sy) = (math.cos(0.5), math.sin(0.5)), (math.cos(0.3), math.sin(0.3))
    turn[:3, :3] = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]]) @ np.array(
        [[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]]
    )
    out = {}
    for state, (x, z) in {"separated": (1.8, -1.5), "overlapping": (0.5, 0.1)}.items():
        T = turn.copy()
        T[:3, 3] = (0.0, 0.0, z) if pair.endswith("halfspace") else (x, 0.1, 0.05)
        out[state] = T
    return out


def form_rows(settings: Settings, report: Report) -> list[Row]:
    """Section 5: the closed-form pairs, with the plain-float closed form timed alone."""
    scalar: Any = None
    # An older package (compare.py) may lack the module: its rows are then missing. Looked for
    # in the package's folder, since an editable install would supply the working tree's.
    if (Path(sc.__file__).parent / "_closed_form_scalar.py").exists():
        scalar = importlib.import_module("spatialcontact._closed_form_scalar")
    rows = []
    for pair in FORM_PAIRS:
        first, second = pair.split("/")
        for state, T in _form_poses(pair).items():
            a, b = FORM_SHAPES[first](np.eye(4)), FORM_SHAPES[second](T)
            g1, g2 = a._geometry, b._geometry
            form = None if scalar is None else scalar.pair_form(a, b)
            qd = coal.DistanceRequest()
            qd.enable_signed_distance = True
            ns: dict[str, Any] = {
                "a": a,
                "b": b,
                "form": form,
                "t1": a._tf,
                "t2": b._tf,
                "fd": coal.ComputeDistance(g1, g2),
                "qd": qd,
                "rd": coal.DistanceResult(),
                "_keep": (g1, g2),
            }
            cases = {
                "closest_point": "a.closest_point(b, 10.0)",
                "contacts": "a.contacts(b)",
                "raw": RAW["closest_point"],
            }
            if form is not None:
                cases["form"] = "form(t1, t2)"
            d = a.closest_point(b, 10.0)[0]
            assert d is not None  # the cut-off is far beyond these placements
            raw_d = evaluate(RAW["closest_point"], ns)[0]
            agreed = "Coal (kept)"
            if form is not None:
                exact = form(a._tf, b._tf)[0]
                if abs(d - exact) > 1e-9:
                    report.errors.append(f"{pair} {state}: d = {d!r}, closed form {exact!r}")
                if abs(raw_d - exact) > 1e-9:
                    agreed = f"closed form (Coal {raw_d - exact:+.3g} m off)"
                elif pair in FORM_OVERLAP and state == "overlapping":
                    agreed = "closed form"
            if state == "separated":
                agreed = "-"
            samples, us = measure(cases, ns, settings)
            raw_name = f"{pair} {state} closed-form pairs: raw Coal"
            report.figures.add(raw_name, us["raw"], reference=True)
            for query in ("closest_point", "contacts"):
                name = f"{pair} {state} closed-form pairs: {query}"
                report.figures.add(name, us[query])
                report.figures.relate(name, raw_name, paired_ratio(samples[query], samples["raw"]))
            report.figures.add(f"{pair} {state} closed-form pairs: form alone", us.get("form"))
            for query in ("closest_point", "contacts"):
                rows.append(
                    Row(
                        [
                            pair,
                            state,
                            query,
                            fmt_us(us[query]),
                            fmt_us(us["raw"]) if query == "closest_point" else "",
                            fmt_us(us.get("form")) if query == "closest_point" else "",
                            fmt_ratio(paired_ratio(samples[query], samples["raw"]))
                            if query == "closest_point"
                            else "",
                            fmt_ratio(paired_ratio(samples.get("form"), samples[query]))
                            if query == "closest_point"
                            else "",
                            agreed if query == "closest_point" else "",
                        ]
                    )
                )
    return rows


PEER_HEADERS = [
    "pair",
    "state",
    "query",
    "spatialcontact µs",
    "python-fcl µs",
    "fcl / sc",
    "pybullet µs",
    "pybullet / sc",
]


def peer_rows(pairs: Sequence[Pair], settings: Settings, report: Report) -> list[Row]:
    """Section 4: python-fcl and pybullet, n/a when not installed."""
    rows = []
    for pair in pairs:
        if pair.name == "capsule/capsule":
            continue
        for state in ("separated", "overlapping"):
            M = pose(pair.offset(state))
            pair.place(M)
            ns = namespace(pair, M)
            for query in ("iscollided", "closest_point"):
                where = f"{pair.name} {state} {query}"
                cases = {"ours": OURS[query]}
                if pair.fa is not None:
                    cases["fcl"] = FCL[query]
                if pair.pa is not None:
                    cases["pyb"] = PYB[query]
                answers = {k: evaluate(v, ns) for k, v in cases.items()}
                for library in ("fcl", "pyb"):
                    if library in answers:
                        compare_peer(
                            report, where, library, query, answers["ours"], answers[library]
                        )
                samples, us = measure(cases, ns, settings)
                report.figures.add(f"peers, {where}: spatialcontact", us["ours"])
                report.figures.add(f"peers, {where}: python-fcl", us.get("fcl"), reference=True)
                report.figures.add(f"peers, {where}: pybullet", us.get("pyb"), reference=True)
                rows.append(
                    Row(
                        [
                            pair.name,
                            state,
                            query,
                            fmt_us(us["ours"]),
                            fmt_us(us.get("fcl")),
                            fmt_ratio(paired_ratio(samples.get("fcl"), samples["ours"])),
                            fmt_us(us.get("pyb")),
                            fmt_ratio(paired_ratio(samples.get("pyb"), samples["ours"])),
                        ]
                    )
                )
    return rows


# ---------------------------------------------------------------------------------- main


@contextlib.contextmanager
def mesh_file() -> Iterator[str]:
    """An STL file of the mesh/mesh icosphere, for spatialgeometry (which loads files only)."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "icosphere.stl")
        trimesh.creation.icosphere(subdivisions=MESH_SUBDIVISIONS).export(path)
        yield path


@contextlib.contextmanager
def bullet() -> Iterator[int | None]:
    """A pybullet DIRECT client, or None without pybullet."""
    if pybullet is None:
        yield None
        return
    client = pybullet.connect(pybullet.DIRECT)
    try:
        yield client
    finally:
        pybullet.disconnect(client)


def section(title: str, headers: Sequence[str], rows: Sequence[Row]) -> None:
    print(f"\n{title}\n")
    print(table(headers, [r.cells for r in rows]), flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse_settings(__doc__.splitlines()[0] if __doc__ else "", argv)
    print("# spatialcontact query benchmark\n")
    for text in machine_lines(DISTRIBUTIONS):
        print(f"- {text}")
    print(
        f"- µs per call: median of {settings.repeat} timings of at least "
        f"{settings.min_time * 1e3:g} ms each; the implementations in a row are timed in turn "
        "and a ratio is the median of the ratios of the timings taken side by side"
        + (" (--quick: rough figures)" if settings.quick else "")
    )
    print(
        f"- pairs of equal shapes {GAP} m apart (separated) or {OVERLAP} m into each other "
        f"(overlapping), the second rolled {math.degrees(ROLL):g}° about x; meshes are "
        f"icospheres of 5,120 triangles"
    )
    print("\nTargets:")
    for target, text in TARGETS:
        print(f"- {target}: {text}")
    report = Report()
    with mesh_file() as path, bullet() as client:
        kinds = make_kinds(path)
        pairs = [make_pair(kinds[k], client) for k in ("sphere", "box", "capsule", "mesh")]
        section(
            "## 1. Queries at fixed poses",
            QUERY_HEADERS,
            query_rows(pairs, settings, report, set_pose=False),
        )
        section(
            "## 2. Pose set from a 4x4 before every call (`b.T = M`; raw Coal: "
            "`tf.setTransform(M[:3, :3], M[:3, 3])`)",
            QUERY_HEADERS,
            query_rows(pairs, settings, report, set_pose=True),
        )
        section("## 3. Contacts", CONTACT_HEADERS, contact_rows(settings, report))
        section(
            "## 4. Other libraries (optional: `pip install .[bench]`)",
            PEER_HEADERS,
            peer_rows(pairs, settings, report),
        )
    section(
        "## 5. Closed-form pairs (`a.closest_point(b)`, `a.contacts(b)`; the closed form alone: "
        "`form(tf_a, tf_b)` from `_closed_form_scalar.pair_form`)",
        FORM_HEADERS,
        form_rows(settings, report),
    )
    print("\n## Targets\n")
    print(report.summary())
    print(
        "\nRaw Coal: cached `ComputeCollision`/`ComputeDistance` functors with persistent "
        "transforms, request and result, `result.clear()` before each call; collide with "
        "`distance_upper_bound=0` (with `enable_contact=False` Coal 3.0.3 misses some deep "
        "overlaps, so neither side uses it); distance reads the distance and both "
        "points. spatialgeometry answers iscollided with a distance query and has no capsule. "
        "python-fcl gets a new DistanceResult per call (it only keeps a smaller distance). "
        "pybullet: getClosestPoints in DIRECT mode (no mesh/mesh: Bullet finds no contact "
        "between two concave triangle meshes)."
    )
    for note in report.notes:
        print(f"- note: {note}")
    for error in report.errors:
        print(f"- ERROR: {error}", file=sys.stderr)
    report.figures.write(settings)
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(main())
