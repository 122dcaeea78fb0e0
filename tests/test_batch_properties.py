"""The closed-form paths of the batch queries against Coal, on random shapes and poses
(hypothesis): distances and witness points to 1e-9, yes/no exactly away from touching.

The reference is the shape query with ``b.T`` set to each pose, which Coal answers. In
degenerate overlaps that hypothesis finds (two coaxial capsules whose segments overlap) Coal's
depth is off by up to about 6e-8 from the exact one: where the two differ by more than 1e-9,
the batch's answer is checked on its own (witness points on both surfaces, ``|d|`` apart).
Where witness points are not unique (parallel segments or faces), the batch's are checked to
lie on both surfaces at the distance found.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from conftest import rigid_poses
from hypothesis import given, settings
from hypothesis import strategies as st
from test_batch import per_pose

import spatialcontact as sc
from spatialcontact import batch
from spatialcontact.batch._fast import capsule_box_collides, segment_box_distance

size = st.floats(0.05, 1.0)
PRIMITIVES = ("sphere", "box", "capsule", "cylinder", "halfspace")
FAST_PAIRS = [
    ("sphere", "sphere"),
    ("sphere", "box"),
    ("sphere", "capsule"),
    ("capsule", "capsule"),
    ("sphere", "cylinder"),
    ("sphere", "halfspace"),
    ("capsule", "halfspace"),
    ("box", "halfspace"),
    ("cylinder", "halfspace"),
]
YES_NO_PAIRS = [("capsule", "box")]
"""Pairs with a closed yes/no only: Coal measures their distance by GJK, to about 1e-6 m."""


@st.composite
def primitives(draw: Any, kind: str) -> sc.CollisionShape:
    T = draw(rigid_poses(reach=0.5))
    if kind == "sphere":
        return sc.Sphere(draw(size), pose=T)
    if kind == "box":
        return sc.Cuboid([draw(size), draw(size), draw(size)], pose=T)
    if kind == "capsule":
        return sc.Capsule(draw(size), draw(size), pose=T)
    if kind == "cylinder":
        return sc.Cylinder(draw(size), draw(size), pose=T)
    normal = draw(st.tuples(size, size, size))
    return sc.HalfSpace(normal, draw(st.floats(-0.5, 0.5)), pose=T)


@st.composite
def cases(draw: Any) -> tuple[sc.CollisionShape, sc.CollisionShape, np.ndarray]:
    first, second = draw(st.sampled_from(FAST_PAIRS))
    if draw(st.booleans()):
        first, second = second, first
    a, b = draw(primitives(first)), draw(primitives(second))
    P = np.stack(draw(st.lists(rigid_poses(reach=1.5), min_size=1, max_size=8)))
    return a, b, P


def on_surfaces(
    a: sc.CollisionShape, b: sc.CollisionShape, M: np.ndarray, d: float, p1: Any, p2: Any
) -> bool:
    """Whether ``p1`` and ``p2`` are witness points of ``a`` and ``b`` (at pose ``M``) at the
    signed distance ``d``: each on its shape's surface, ``d`` apart."""
    saved = b.T
    b.T = M
    try:
        on_a = abs(batch.point_distance(a, [p1])[0]) <= 1e-9
        on_b = abs(batch.point_distance(b, [p2])[0]) <= 1e-9
    finally:
        b.T = saved
    return on_a and on_b and abs(np.linalg.norm(p2 - p1) - abs(d)) <= 1e-9


@given(cases())
def test_closed_forms_agree_with_coal(case: tuple[Any, Any, np.ndarray]) -> None:
    a, b, P = case
    # Coal solves sphere/cylinder by GJK (witness points to about 1e-8 on a flat cap), and the
    # batch hands their overlaps to the shape queries (Coal ignores the caps there).
    gjk = {a.stype, b.stype} == {"sphere", "cylinder"}
    d_ref = np.array(per_pose(a, b, P, lambda: a.distance(b)))
    d_all = batch.distance(a, b, P)
    d, p1, p2 = batch.closest_point(a, b, P, inf_dist=math.inf)
    np.testing.assert_allclose(d, d_all, rtol=0.0, atol=1e-12)  # two closed forms, one answer
    for i, dd in enumerate(d_ref):
        if abs(d[i] - dd) > 1e-9:
            # Only an overlap in a degenerate pose (coaxial capsules), where Coal's depth is
            # off: the batch's is then checked on its own, its witness points on both surfaces.
            assert dd < 0.0 and abs(d[i] - dd) <= 1e-6, (i, d[i], dd)
            assert on_surfaces(a, b, P[i], d[i], p1[i], p2[i]), i
    away = np.abs(d_ref) > 1e-9
    hit = batch.iscollided(a, b, P)
    ref_hit = np.array(per_pose(a, b, P, lambda: a.iscollided(b)))
    np.testing.assert_array_equal(hit[away], ref_hit[away])
    for i, (dd, q1, q2) in enumerate(per_pose(a, b, P, lambda: a.closest_point(b, math.inf))):
        if gjk and dd <= 0.0:  # the shape query's own answer
            assert (d[i], p1[i].tolist(), p2[i].tolist()) == (dd, q1.tolist(), q2.tolist())
            continue
        same = np.allclose(p1[i], q1, rtol=0.0, atol=1e-6 if gjk else 1e-9) and np.allclose(
            p2[i], q2, rtol=0.0, atol=1e-6 if gjk else 1e-9
        )
        # Where the witness points are not unique (parallel segments or faces, concentric
        # shapes), the batch's must still be witness points.
        assert same or on_surfaces(a, b, P[i], d[i], p1[i], p2[i])


@st.composite
def yes_no_cases(draw: Any) -> tuple[sc.CollisionShape, sc.CollisionShape, np.ndarray]:
    first, second = draw(st.sampled_from(YES_NO_PAIRS))
    if draw(st.booleans()):
        first, second = second, first
    a, b = draw(primitives(first)), draw(primitives(second))
    P = np.stack(draw(st.lists(rigid_poses(reach=1.5), min_size=1, max_size=8)))
    return a, b, P


@given(yes_no_cases())
def test_closed_yes_no_agrees_with_coal(case: tuple[Any, Any, np.ndarray]) -> None:
    a, b, P = case
    d_ref = np.array(per_pose(a, b, P, lambda: a.distance(b)))
    away = np.abs(d_ref) > 1e-6
    hit = batch.iscollided(a, b, P)
    ref_hit = np.array(per_pose(a, b, P, lambda: a.iscollided(b)))
    np.testing.assert_array_equal(hit[away], ref_hit[away])
    np.testing.assert_array_equal(batch.distance(a, b, P), d_ref)  # Coal's own distances


@given(
    st.tuples(*[st.floats(-1.5, 1.5)] * 3),
    st.tuples(*[st.floats(-1.5, 1.5)] * 3),
    rigid_poses(reach=0.5),
    st.tuples(size, size, size),
)
def test_segment_box_distance_is_coals_capsule_distance(
    start: Any, end: Any, T: np.ndarray, sides: Any
) -> None:
    a, b = np.array(start), np.array(end)
    got = segment_box_distance(a, b, T, np.array(sides))[0]
    box = sc.Cuboid(sides, pose=T)
    r = 1e-3
    axis = b - a
    length = float(np.linalg.norm(axis))
    if length < 1e-3:
        return
    R = np.eye(4)
    z = axis / length
    x = np.cross(z, [1.0, 0, 0] if abs(z[0]) < 0.9 else [0, 1.0, 0])
    x /= np.linalg.norm(x)
    R[:3, :3] = np.column_stack([x, np.cross(z, x), z])
    R[:3, 3] = 0.5 * (a + b)
    capsule = sc.Capsule(r, length, pose=R)
    d = capsule.distance(box)
    if d > 1e-5:  # apart: Coal's GJK distance, to its tolerance
        assert got == pytest.approx(d + r, abs=1e-5)
    else:
        assert got <= r + 1e-5


@given(
    st.lists(st.tuples(*[st.floats(-1.5, 1.5)] * 6), min_size=1, max_size=20),
    rigid_poses(reach=0.5),
    st.tuples(size, size, size),
    st.floats(0.0, 0.5),
)
def test_capsule_box_slab_tests_agree_with_the_distance(
    ends: list[tuple[float, ...]], T: np.ndarray, sides: Any, radius: float
) -> None:
    e = np.array(ends)
    a, b = e[:, :3], e[:, 3:]
    d = segment_box_distance(a, b, T, np.array(sides))
    hit = capsule_box_collides(0.5 * (a + b), 0.5 * (b - a), radius, T, np.array(sides), len(e))
    clear = np.abs(d - radius) > 1e-9
    np.testing.assert_array_equal(hit[clear], (d <= radius)[clear])


@given(
    st.sampled_from(PRIMITIVES).flatmap(primitives),
    st.lists(st.tuples(*[st.floats(-1.5, 1.5)] * 3), min_size=1, max_size=10),
)
def test_point_distance_is_the_distance_to_a_tiny_sphere(
    a: sc.CollisionShape, points: list[tuple[float, float, float]]
) -> None:
    x = np.array(points)
    d = batch.point_distance(a, x)
    r = 1e-5  # the smallest sphere; Coal's distance to it, plus its radius
    probe = sc.Sphere(r)
    ref = np.array(per_pose(a, probe, np.array([_at(p) for p in x]), lambda: a.distance(probe)))
    inside = np.zeros(len(x), dtype=bool)
    if isinstance(a, sc.Cylinder):
        # Inside a cylinder the shape query is not an oracle: Coal ignores the caps there, and
        # a sphere at the very centre gets distance 0. The closed form is checked against the
        # cylinder's signed distance worked out by hand, in its frame.
        local = (x - a.T[:3, 3]) @ a.T[:3, :3]
        radial = np.hypot(local[:, 0], local[:, 1])
        inside = (radial < a.radius) & (np.abs(local[:, 2]) < 0.5 * a.length)
        by_hand = -np.minimum(a.radius - radial, 0.5 * a.length - np.abs(local[:, 2]))
        np.testing.assert_allclose(d[inside], by_hand[inside], rtol=0.0, atol=1e-12)
    np.testing.assert_allclose(d[~inside], ref[~inside] + r, rtol=0.0, atol=1e-9)


def _at(point: np.ndarray) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = point
    return T


@st.composite
def perturbed_batches(draw: Any) -> np.ndarray:
    """Rigid poses with some entries pushed by up to a few times the rotation tolerance (or
    given a NaN, or a translation out of range, or a last row off): poses on both sides of
    the line :func:`~spatialcontact.pose.as_poses` draws."""
    poses = draw(st.lists(rigid_poses(reach=2.0), min_size=1, max_size=6))
    P = np.stack(poses)
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(P) - 1))
        r, c = draw(st.integers(0, 3)), draw(st.integers(0, 3))
        kind = draw(st.sampled_from(["nudge", "nan", "far", "set"]))
        if kind == "nudge":
            P[i, r, c] += draw(st.floats(-3e-6, 3e-6))
        elif kind == "nan":
            P[i, r, c] = math.nan
        elif kind == "far":
            P[i, r, c] = draw(st.sampled_from([1e6, -1e6, 1.0000001e6, math.inf]))
        else:
            P[i, r, c] = draw(st.sampled_from([0.0, 1.0, -1.0]))
    return P


@settings(max_examples=300)
@given(perturbed_batches())
def test_the_batch_check_decides_as_as_poses(P: np.ndarray) -> None:
    from spatialcontact.batch._poses import check_poses
    from spatialcontact.pose import as_poses

    try:
        as_poses(P, "poses")
    except sc.InvalidPoseError as error:
        with pytest.raises(sc.InvalidPoseError) as refused:
            check_poses(P, "poses")
        first = str(error).split(" ", 1)[0]  # "poses[i]": the same first bad row
        assert str(refused.value).startswith(first), (str(refused.value), str(error))
    else:
        assert check_poses(P, "poses")[0] is P
