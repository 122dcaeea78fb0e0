"""The pair queries (``iscollided``, ``closest_point``, ``distance``, ``contacts``) and the
contact records: hostile arguments, and random pairs of every shape type checked against
closed forms and invariants."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import spatialcontact as sc
from spatialcontact._closed_form_scalar import pair_form

from .. import values as V
from ..core import Case, close, finite, target
from .common import case, point_box_distance, r, trans, zoo
from .shapes import _other_pick

KINDS: tuple[str, ...] = ("sphere", "box", "cylinder", "capsule", "cone", "ellipsoid", "hull")
KINDS += ("mesh", "halfspace", "octree")


def _unsupported(a: Any, b: Any, query: str) -> bool:
    pair = {type(a).__name__, type(b).__name__}
    if pair == {"Ellipsoid", "OcTree"}:
        return True
    both_half = isinstance(a, sc.HalfSpace) and isinstance(b, sc.HalfSpace)
    return both_half and query in ("distance", "closest_point")


# ---------------------------------------------------------------------- hostile arguments


@target(
    "query arguments",
    covers=[
        "CollisionShape.iscollided",
        "CollisionShape.closest_point",
        "CollisionShape.distance",
        "CollisionShape.contacts",
    ],
    weight=3,
)
def query_arguments(rng: np.random.Generator, env: Any) -> Case:
    gap = float(rng.uniform(-0.5, 0.5))  # centre distance 2 + gap for two unit spheres
    a, b = sc.Sphere(1.0), sc.Sphere(1.0, pose=trans(2.0 + gap))
    which = ("other", "inf_dist", "max_contacts", "security_margin")[int(rng.integers(4))]
    if which == "other":
        pick = _other_pick(rng)
        query = ("iscollided", "closest_point", "distance", "contacts")[int(rng.integers(4))]
        label = f"Sphere(1).{query}({r(pick.value)})"

        def check_any(result: Any, number: Any) -> None:
            if query == "distance":
                finite(result)

        return case(
            label,
            lambda: getattr(a, query)(pick.value),
            pick,
            "other",
            check_any,
            shows_value=False,
        )
    if which == "inf_dist":
        pick = V.real(rng, lambda x: not math.isnan(x), V.uniform(-1.0, 3.0))
        if isinstance(pick.value, float) and math.isinf(pick.value) and pick.expect == "error":
            pick.expect = "answer"

        def check_cp(result: Any, number: Any) -> None:
            d, p1, p2 = result
            if gap <= float(np.asarray(number).reshape(-1)[0]):
                close(d, gap, 1e-9, "closest_point distance")
                assert np.allclose(p1, [1.0, 0, 0]) and np.allclose(p2, [1.0 + gap, 0, 0])
            else:
                assert (d, p1, p2) == (None, None, None), f"beyond inf_dist: {result}"

        label = f"Sphere(1).closest_point(Sphere(1) at x={2 + gap}, inf_dist={r(pick.value)})"
        return case(
            label, lambda: a.closest_point(b, inf_dist=pick.value), pick, "inf_dist", check_cp
        )
    if which == "max_contacts":
        pick = V.integer(rng, 1)
        label = f"Sphere(1).contacts(Sphere(1) at x={2 + gap}, max_contacts={r(pick.value)})"

        def check_n(result: Any, number: Any) -> None:
            assert len(result) == (1 if gap < 0 else 0), f"{len(result)} contacts at gap {gap}"
            if gap < 0:
                close(result[0].penetration_depth, gap, 1e-9, "depth")

        return case(
            label, lambda: a.contacts(b, max_contacts=pick.value), pick, "max_contacts", check_n
        )
    pick = V.real(rng, V.in_range(-1e6, 1e6), V.uniform(-1.0, 1.0))
    label = f"Sphere(1).contacts(Sphere(1) at x={2 + gap}, security_margin={r(pick.value)})"

    def check_margin(result: Any, number: Any) -> None:
        margin = float(np.asarray(number).reshape(-1)[0])
        want = gap < margin if margin >= 0 else gap <= margin
        if abs(gap - margin) > 1e-9:
            assert bool(len(result)) == want, f"{len(result)} contacts, gap {gap}, margin {margin}"
        for c in result:
            close(c.penetration_depth, gap, 1e-9, "depth")

    return case(
        label,
        lambda: a.contacts(b, security_margin=pick.value),
        pick,
        "security_margin",
        check_margin,
    )


# ------------------------------------------------------------------------ closed forms


def _segment_point(p: np.ndarray, half: float) -> float:
    """Distance of ``p`` (capsule frame) to the capsule's axis segment."""
    z = min(max(p[2], -half), half)
    return float(np.linalg.norm(p - [0.0, 0.0, z]))


@target("query closed forms", covers=[], weight=3)
def closed_forms(rng: np.random.Generator, env: Any) -> Case:
    """A sphere against a sphere, box, capsule or half-space, at random poses: the signed
    distance in closed form, with every query agreeing with it."""
    kind = ("sphere", "box", "capsule", "halfspace")[int(rng.integers(4))]
    other: Any = zoo(rng, (kind,))
    radius = float(10 ** rng.uniform(-2, 0.3))
    centre = rng.uniform(-2.5, 2.5, 3)
    ball = sc.Sphere(radius, pose=trans(*centre))
    T = other.T
    local = T[:3, :3].T @ (centre - T[:3, 3])
    if kind == "sphere":
        d = float(np.linalg.norm(local)) - radius - other.radius
    elif kind == "box":
        d = point_box_distance(local, np.asarray(other.scale) / 2) - radius
    elif kind == "capsule":
        d = _segment_point(local, other.length / 2) - radius - other.radius
    else:
        d = float(np.asarray(other.normal) @ local) - other.offset - radius
    first = rng.random() < 0.5
    x, y = (ball, other) if first else (other, ball)
    label = f"{r(x)} vs {r(y)}: closed-form d = {d:.6g}"

    def run() -> Any:
        return x.distance(y), x.iscollided(y), x.contacts(y), x.closest_point(y, inf_dist=math.inf)

    def check(result: Any) -> None:
        dist, hit, contacts, (cd, p1, p2) = result
        tol = 1e-6
        close(dist, d, tol, "distance")
        close(cd, d, tol, "closest_point distance")
        if abs(d) > 1e-6:
            assert hit == (d < 0), f"iscollided {hit} at d = {d}"
            assert bool(len(contacts)) == (d < 0), f"{len(contacts)} contacts at d = {d}"
        for c in contacts:
            close(c.penetration_depth, d, 1e-5, "contact depth")
            close(float(np.linalg.norm(c.normal)), 1.0, 1e-9, "normal length")
            gap_vec = c.nearest_points[1] - c.nearest_points[0]
            assert np.allclose(gap_vec, c.penetration_depth * c.normal, atol=1e-6), (
                f"nearest points {c.nearest_points} do not differ by depth * normal"
            )
        if kind != "halfspace":
            close(float(np.linalg.norm(np.asarray(p1) - p2)), abs(d), 1e-5, "witness gap")

    return Case(label, run, "answer", check=check)


# -------------------------------------------------------------------------- invariants


def _placement(rng: np.random.Generator, a: Any, b: Any) -> None:
    """Move ``b`` near ``a``: random, touching, concentric or far."""
    roll = rng.random()
    T = b.T.copy()
    if roll < 0.15:
        T[:3, 3] = a.T[:3, 3]  # concentric
    elif roll < 0.25:
        T[:3, 3] = a.T[:3, 3] + rng.normal(size=3) * 1e-7  # nearly concentric
    elif roll < 0.35:
        T[:3, 3] = rng.uniform(-1e5, 1e5, 3)  # far
    elif roll < 0.45:
        T[:3, :3] = a.T[:3, :3]  # aligned
    b.T = T


@target("query invariants", covers=[], weight=6)
def invariants(rng: np.random.Generator, env: Any) -> Case:
    """Random pairs of every type: both orders agree, ``iscollided`` agrees with the sign of
    the distance and with ``contacts``, witness points are ``|d|`` apart and finite."""
    a, b = zoo(rng, KINDS), zoo(rng, KINDS)
    _placement(rng, a, b)
    label = f"{r(a)} vs {r(b)}"
    query = "distance" if rng.random() < 0.5 else "all"
    if isinstance(a, sc.OcTree) and isinstance(b, sc.OcTree):
        query = "distance"  # contacts between two octrees: UnsupportedPairError (documented)
    if _unsupported(a, b, "distance") or _unsupported(a, b, "iscollided"):
        names = tuple({type(a).__name__, type(b).__name__})
        call = (
            (lambda: a.distance(b)) if _unsupported(a, b, "distance") else (lambda: a.contacts(b))
        )
        return Case(label + " (no algorithm)", call, "error", names, None, shows_value=False)

    def run() -> Any:
        out: dict[str, Any] = {"d_ab": a.distance(b), "d_ba": b.distance(a)}
        if query == "all":
            out["hit_ab"], out["hit_ba"] = a.iscollided(b), b.iscollided(a)
            out["c_ab"], out["c_ba"] = a.contacts(b), b.contacts(a)
            out["cp"] = a.closest_point(b, inf_dist=math.inf)
        return out

    hollow = {"Mesh", "OcTree"} & {type(a).__name__, type(b).__name__}
    curved = {"Ellipsoid", "Cone", "Cylinder", "ConvexHull", "Mesh", "OcTree"}
    loose = bool(curved & {type(a).__name__, type(b).__name__})

    def check(out: dict[str, Any]) -> None:
        d_ab, d_ba = out["d_ab"], out["d_ba"]
        finite([d_ab, d_ba], "distance")
        scale = max(1.0, abs(d_ab))
        # GJK stops at 1e-6 m (twice that between the two orders); EPA's depths of curved
        # pairs differ between the orders by up to 3e-3 m (docs), 4.2e-3 m seen here
        tol = (5e-3 if loose else 1e-5) if min(d_ab, d_ba) < 1e-3 else 3e-6 * scale
        if not hollow or min(d_ab, d_ba) > 0:
            assert abs(d_ab - d_ba) <= tol, f"d(a, b) = {d_ab} but d(b, a) = {d_ba}"
        if query != "all":
            return
        hit_ab, hit_ba = out["hit_ab"], out["hit_ba"]
        assert hit_ab == hit_ba, f"iscollided {hit_ab} one way, {hit_ba} the other (d = {d_ab})"
        if d_ab > 1e-5 and d_ba > 1e-5:
            assert not hit_ab, f"iscollided True at distance {d_ab}"
        if d_ab < -1e-5 and d_ba < -1e-5 and not hollow:
            assert hit_ab, f"iscollided False at distance {d_ab}"
        for key, hit in (("c_ab", hit_ab), ("c_ba", hit_ba)):
            assert bool(len(out[key])) == hit, f"{key}: {len(out[key])} contacts, iscollided {hit}"
            for c in out[key]:
                finite([*c.normal, *c.pos, *c.nearest_points.reshape(-1), c.penetration_depth])
                close(float(np.linalg.norm(c.normal)), 1.0, 1e-6, "normal length")
                assert c.penetration_depth <= 1e-6, f"a contact at depth {c.penetration_depth}"
        cd, p1, p2 = out["cp"]
        finite([cd, *p1, *p2], "closest_point")
        close(cd, d_ab, 1e-9, "closest_point and distance")
        if cd > 1e-4 and not isinstance(a, sc.HalfSpace) and not isinstance(b, sc.HalfSpace):
            gap = float(np.linalg.norm(np.asarray(p1) - p2))
            assert abs(gap - cd) <= 1e-4 * max(1.0, cd), f"witness points {gap} apart, d = {cd}"

    return Case(label + f" [{query}]", run, "answer", check=check)


@target("query extremes", covers=[], weight=2)
def extremes(rng: np.random.Generator, env: Any) -> Case:
    """Shapes at the ends of the size range, near-touching and far: finite, symmetric answers,
    equal to the closed form where the pair has one."""
    size = float(10 ** rng.choice([-5.0, -4.5, -3.0, 3.0, 5.5, 6.0]))
    other = float(10 ** rng.uniform(-5, 6))
    kinds = ("sphere", "box", "capsule", "cylinder")
    a_kind, b_kind = kinds[int(rng.integers(4))], kinds[int(rng.integers(4))]

    def reach_of(kind: str, s: float) -> float:
        """The radius of a ball about the shape's centre holding it."""
        return {"sphere": s, "box": s * 0.87, "capsule": 1.5 * s, "cylinder": 1.12 * s}[kind]

    def make(kind: str, s: float, T: np.ndarray) -> Any:
        if kind == "sphere":
            return sc.Sphere(s, pose=T)
        if kind == "box":
            return sc.Cuboid([s, s, s], pose=T)
        if kind == "capsule":
            return sc.Capsule(s, s, pose=T)
        return sc.Cylinder(s, s, pose=T)

    T = V.rigid(rng, 0.0)
    a = make(a_kind, size, T)
    reach = 2 * (size + other)
    U = V.rigid(rng, 0.0)
    U[:3, 3] = T[:3, 3] + rng.normal(size=3) / math.sqrt(3) * reach * rng.uniform(0.3, 1.5)
    U[:3, 3] = np.clip(U[:3, 3], -1e6, 1e6)
    b = make(b_kind, other, U)
    label = f"{r(a)} vs {r(b)}"

    form = pair_form(a, b)

    def run() -> Any:
        exact = None if form is None else form(a._tf, b._tf)[0]
        return a.distance(b), b.distance(a), a.iscollided(b), b.iscollided(a), exact

    def check(out: Any) -> None:
        d_ab, d_ba, hit_ab, hit_ba, exact = out
        finite([d_ab, d_ba])
        if exact is not None:  # a pair with a closed form: both orders give it
            tolerance = 1e-9 * max(1.0, size, other, abs(exact))
            for d in (d_ab, d_ba):
                assert abs(d - exact) <= tolerance, f"distance {d}, closed form {exact}"
        small = min(size, other)
        deepest = reach_of(a_kind, size) + reach_of(b_kind, other)
        assert d_ab >= -deepest * 1.01, f"distance {d_ab}: deeper than the shapes reach"
        # GJK stops at a tolerance relative to the shapes: 1e-6 of the larger one
        large = max(size, other)
        assert abs(d_ab - d_ba) <= 1e-3 * small + 1e-6 * large + 1e-5 * max(1.0, abs(d_ab)), (
            f"d(a, b) = {d_ab}, d(b, a) = {d_ba}"
        )
        if abs(d_ab) > 1e-5 * max(1.0, size, other):
            assert hit_ab == hit_ba == (d_ab < 0), f"iscollided {hit_ab}/{hit_ba} at d = {d_ab}"

    return Case(label, run, "answer", check=check)


# ------------------------------------------------------------------------ contact records


@target(
    "contact records",
    covers=[
        "Contact",
        "Contact.distance_to_collision",
        "Contact.report",
        "Contacts",
        "Contacts.reports",
        "ContactReport",
    ],
    weight=2,
)
def records(rng: np.random.Generator, env: Any) -> Case:
    a, b = sc.Sphere(1.0), sc.Sphere(1.0, pose=trans(1.5))
    good = {
        "o1": a,
        "o2": b,
        "b1": -1,
        "b2": -1,
        "normal": [1.0, 0.0, 0.0],
        "nearest_points": [[1.0, 0.0, 0.0], [0.5, 0.0, 0.0]],
        "pos": [0.75, 0.0, 0.0],
        "penetration_depth": -0.5,
    }
    which = int(rng.integers(5))
    if which == 0:
        key = list(good)[int(rng.integers(len(good)))]
        if key in ("o1", "o2"):
            pick = _other_pick(rng)
            if isinstance(pick.value, sc.CollisionShape) and not isinstance(pick.value, sc.Sphere):
                pick = V.Pick(pick.value, "answer")
            if isinstance(pick.value, sc.Sphere):
                pick = V.Pick(pick.value, "answer")  # a record may name any shape
        elif key in ("b1", "b2"):
            pick = V.integer(rng, -1)
            if isinstance(pick.value, np.ndarray) and pick.value.ndim == 0:
                pick.expect = "either"
        elif key == "penetration_depth":
            pick = V.real(rng, math.isfinite, V.uniform(-1.0, 1.0))
        elif key == "normal":
            pick = V.vector3(
                rng,
                lambda v: abs(float(np.linalg.norm(v)) - 1.0) <= 1e-6,
                lambda g: (lambda n: n / np.linalg.norm(n))(g.normal(size=3)),
            )
        elif key == "pos":
            pick = V.vector3(
                rng, lambda v: bool(np.all(np.isfinite(v))), lambda g: g.normal(size=3)
            )
        else:
            pts = rng.normal(size=(2, 3))
            options: list[tuple[Any, str]] = [
                (pts, "answer"),
                (pts.tolist(), "answer"),
                (pts[0], "error"),
                (pts * np.nan, "error"),
                (pts.astype(object), "error"),
                ("pts", "error"),
                (np.zeros((3, 3)), "error"),
                (None, "error"),
            ]
            value, verdict = options[int(rng.integers(len(options)))]
            pick = V.Pick(value, verdict)
        args = {**good, key: pick.value}
        return case(
            f"Contact({key}={r(pick.value)})",
            lambda: sc.Contact(**args),
            pick,
            key,
            shows_value=key not in ("o1", "o2"),
        )
    contact = a.contacts(b)[0]
    if which == 1:
        pick = V.real(rng, math.isfinite, V.uniform(-1.0, 1.0))

        def check_dtc(result: Any, number: Any) -> None:
            finite(result)

        return case(
            f"contact.distance_to_collision({r(pick.value)})",
            lambda: contact.distance_to_collision(pick.value),
            pick,
            "security_margin",
            check_dtc,
        )
    if which == 2:
        pick = _other_pick(rng)
        if isinstance(pick.value, sc.CollisionShape) or pick.value is None:
            pick = V.Pick(pick.value, "either")  # a shape of neither side is refused

        def check_report(result: Any, number: Any) -> None:
            close(result.depth, 0.5, 1e-9, "report depth")

        for_shape = [a, b][int(rng.integers(2))] if rng.random() < 0.4 else pick.value
        if for_shape is a or for_shape is b:
            pick = V.Pick(for_shape, "answer")
        return case(
            f"contact.report({r(for_shape)})",
            lambda: contact.report(for_shape),
            pick,
            "shape",
            check_report,
            shows_value=False,
        )
    if which == 3:
        items: list[Any] = [
            [contact],
            [contact, contact],
            [],
            [None],
            [5],
            contact,
            None,
            "ab",
            (c for c in [contact]),
            [a],
        ]
        value = items[int(rng.integers(len(items)))]
        ok = isinstance(value, list) and all(isinstance(c, sc.Contact) for c in value)
        expect = "answer" if ok or not isinstance(value, (list, type(None), str)) else "error"
        if not isinstance(value, list) and value is not None and not isinstance(value, str):
            expect = "either"
        return Case(
            f"Contacts({r(value)})",
            lambda: sc.Contacts(value),
            expect,
            "contacts",
            value,
            shows_value=False,
        )
    contacts = a.contacts(b)
    pick = _other_pick(rng)
    shape = [a, b, pick.value][int(rng.integers(3))]
    expect = "answer" if shape is a or shape is b else "either"
    if not isinstance(shape, sc.CollisionShape):
        expect = "error"
    kwargs = {
        "shape": a,
        "other": b,
        "point": np.zeros(3),
        "normal": np.array([1.0, 0.0, 0.0]),
        "depth": 0.5,
        "b_self": -1,
        "b_other": -1,
    }
    if rng.random() < 0.5:
        key = list(kwargs)[int(rng.integers(len(kwargs)))]
        bad: list[Any] = [None, "x", np.nan, [1.0, 2.0], True]
        value = bad[int(rng.integers(len(bad)))]
        return Case(
            f"ContactReport({key}={r(value)})",
            lambda: sc.ContactReport(**{**kwargs, key: value}),
            "either",
            key,
            value,
        )
    return Case(
        f"contacts.reports({r(shape)})",
        lambda: contacts.reports(shape),
        expect,
        "shape",
        shape,
        shows_value=False,
    )
