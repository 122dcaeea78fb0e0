"""Batch queries against the shape queries called pose by pose, and the batch API's checks.

Each comparison sets ``b.T`` to every pose in turn and asks ``a`` the shape query: the batch
must give the same answers, to 1e-9 where the shapes are apart and to Coal's EPA tolerance
(1e-6) where they overlap (see :func:`tolerance`); yes/no answers exactly away from touching.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import math
import subprocess
import sys
from collections.abc import Callable, Generator
from typing import Any, cast

import numpy as np
import pytest
from conftest import (
    LEAF_KINDS,
    UNSUPPORTED_ALL,
    UNSUPPORTED_DISTANCE,
    make_leaf,
    pose,
    quaternion_matrix,
    trans,
)

import spatialcontact as sc
from spatialcontact import batch, meshes
from spatialcontact.batch import _kernels

RNG_SEED = 20240611


def random_poses(n: int, reach: float, seed: int) -> np.ndarray:
    """``n`` random rigid transforms (n, 4, 4), translations in [-reach, reach]^3."""
    rng = np.random.default_rng(seed)
    P = np.tile(np.eye(4), (n, 1, 1))
    for i in range(n):
        P[i, :3, :3] = quaternion_matrix(*rng.normal(size=4))
    P[:, :3, 3] = rng.uniform(-reach, reach, (n, 3))
    return P


def per_pose(a: Any, b: sc.CollisionShape, P: np.ndarray, query: Callable[[], Any]) -> list[Any]:
    """``query()`` with ``b.T`` set to each pose in turn; ``b`` is put back afterwards."""
    saved = b.T
    out = []
    try:
        for M in P:
            b.T = M
            out.append(query())
    finally:
        b.T = saved
    return out


def contact_rows(found: sc.Contacts) -> list[tuple[Any, ...]]:
    return [
        (c.o1, c.o2, c.b1, c.b2, c.penetration_depth, *c.normal, *c.nearest_points.ravel(), *c.pos)
        for c in found
    ]


def assert_close_rows(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g[:4] == w[:4]
        atol = 1e-9 if w[4] > 0.0 else EPA_TOLERANCE  # see tolerance(): w[4] is the depth
        np.testing.assert_allclose(np.array(g[4:]), np.array(w[4:]), rtol=0.0, atol=atol)


EPA_TOLERANCE = 1e-6
"""Coal's GJK and EPA tolerance: an overlap of two curved or mesh shapes is known to this."""


def tolerance(d_ref: np.ndarray) -> np.ndarray:
    """How close a batch answer must be to the per-pose one: 1e-9 where the shapes are apart,
    Coal's EPA tolerance where they overlap. There EPA's answer moves by up to that much with
    the last bits of the poses (a sphere placed with or without its rotation, a group's leaf
    placed by one product of poses or by two) and with the branch Coal's repairs take."""
    return np.where(d_ref > 0.0, 1e-9, EPA_TOLERANCE)


def assert_near(got: Any, want: Any, atol: np.ndarray) -> None:
    """``|got - want| <= atol`` element by element (``atol`` broadcast), NaN where both are."""
    g, w = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert g.shape == w.shape, (g.shape, w.shape)
    close = (np.abs(g - w) <= atol) | (np.isnan(g) & np.isnan(w))
    assert close.all(), (np.flatnonzero(~close.reshape(len(g), -1).all(axis=1)), g, w)


def check_queries(
    a: sc.CollisionShape, b: sc.CollisionShape, P: np.ndarray, *, given: Any = None
) -> None:
    """Every batch query of ``b`` at the poses ``P`` against ``a`` equals the per-pose one.

    ``given`` is what the batch receives (``P`` itself, or the translations of ``P``).
    """
    given = P if given is None else given
    unsupported = (a.stype, b.stype)
    start = b.T
    d_ref = None
    if (type(a).__name__, type(b).__name__) not in UNSUPPORTED_DISTANCE or a._is_group:
        d_ref = np.array(per_pose(a, b, P, lambda: a.distance(b)))
        got = batch.distance(a, b, given)
        assert_near(got, d_ref, tolerance(d_ref))
        for inf_dist in (math.inf, 0.3, 0.0, -0.1):
            d, p1, p2 = batch.closest_point(a, b, given, inf_dist=inf_dist)
            ref = per_pose(a, b, P, lambda: a.closest_point(b, inf_dist))  # noqa: B023
            for i, (dd, q1, q2) in enumerate(ref):
                if dd is None:
                    assert math.isnan(d[i]) and np.isnan(p1[i]).all() and np.isnan(p2[i]).all()
                else:
                    atol = float(tolerance(np.array([dd]))[0])
                    assert d[i] == pytest.approx(dd, abs=atol), (i, unsupported)
                    np.testing.assert_allclose(p1[i], q1, rtol=0.0, atol=atol)
                    np.testing.assert_allclose(p2[i], q2, rtol=0.0, atol=atol)
    if (type(a).__name__, type(b).__name__) not in UNSUPPORTED_ALL or a._is_group:
        hit = batch.iscollided(a, b, given)
        ref_hit = np.array(per_pose(a, b, P, lambda: a.iscollided(b)))
        away = np.ones(len(P), dtype=bool) if d_ref is None else np.abs(d_ref) > 1e-9
        assert hit.dtype == np.bool_ and hit.shape == (len(P),)
        np.testing.assert_array_equal(hit[away], ref_hit[away])
    if (type(a).__name__, type(b).__name__) not in UNSUPPORTED_DISTANCE | {
        ("OcTree", "OcTree")
    } or a._is_group:
        for k, margin in ((1, 0.0), (3, 0.05)):
            found = batch.contacts(a, b, given, max_contacts=k, security_margin=margin)
            ref_contacts = per_pose(a, b, P, lambda: a.contacts(b, k, margin))  # noqa: B023
            assert found.counts.tolist() == [len(c) for c in ref_contacts]
            for i, want in enumerate(ref_contacts):
                assert_close_rows(contact_rows(found.of_pose(i)), contact_rows(want))
    np.testing.assert_array_equal(b.T, start)


# --------------------------------------------------------------- every pair of leaf types


@pytest.mark.parametrize("kind_b", LEAF_KINDS)
@pytest.mark.parametrize("kind_a", LEAF_KINDS)
def test_every_leaf_pair_equals_the_per_pose_queries(kind_a: str, kind_b: str) -> None:
    seed = RNG_SEED + 31 * LEAF_KINDS.index(kind_a) + LEAF_KINDS.index(kind_b)
    a = make_leaf(kind_a, random_poses(1, 0.2, seed)[0])
    b = make_leaf(kind_b)
    P = random_poses(10, 1.0, seed + 1)
    if (kind_a, kind_b) in UNSUPPORTED_ALL:
        query: Callable[..., Any]
        for query in (batch.iscollided, batch.distance, batch.contacts):
            with pytest.raises(sc.UnsupportedPairError, match="Coal cannot answer"):
                query(a, b, P)
        return
    if (kind_a, kind_b) == ("HalfSpace", "HalfSpace"):
        for query in (batch.distance, batch.closest_point, batch.contacts):
            with pytest.raises(sc.UnsupportedPairError, match="Coal cannot answer"):
                query(a, b, P)
    check_queries(a, b, P)


def test_a_scene_with_an_unsupported_pair_is_refused_before_any_work() -> None:
    # A scene as a is checked as a shape or group is: the unsupported pair's own error
    # (a TypeError) before any pose, not a BatchError from the first pose that reaches it.
    octree = make_leaf("OcTree")
    scene = sc.Scene()
    scene.add(octree, "cells")
    far = np.zeros((2, 3))
    far[:, 0] = 50.0  # the ellipsoid far from the cells: no pose would reach the pair
    for query in (batch.iscollided, batch.distance):
        with pytest.raises(sc.UnsupportedPairError, match="between an OcTree and an Ellipsoid"):
            query(scene, sc.Ellipsoid([0.1, 0.2, 0.3]), far)
    floor = sc.Scene()
    floor.add(sc.HalfSpace(), "floor")
    with pytest.raises(sc.UnsupportedPairError, match="HalfSpace and a HalfSpace"):
        batch.distance(floor, sc.HalfSpace([1.0, 0.0, 0.0], 0.0), far)


@pytest.mark.parametrize("kind_b", ["Sphere", "Cuboid", "Mesh", "Capsule"])
@pytest.mark.parametrize("kind_a", ["Sphere", "Cylinder", "ConvexHull", "OcTree"])
def test_translations_keep_the_rotation_of_b(kind_a: str, kind_b: str) -> None:
    a = make_leaf(kind_a)
    b = make_leaf(kind_b, random_poses(1, 0.5, 5)[0])
    t = np.random.default_rng(6).uniform(-1.0, 1.0, (10, 3))
    P = np.tile(b.T, (len(t), 1, 1))
    P[:, :3, 3] = t
    check_queries(a, b, P, given=t)


# ---------------------------------------------------------------------------------- groups


def robot_like() -> sc.CollisionShapeGroup:
    """A nested group of fast and Coal leaves, with collision=False parts, posed."""
    inner = sc.CollisionShapeGroup(
        [make_leaf("Capsule", trans(0.2, 0, 0)), make_leaf("Cone", trans(0, 0.4, 0))],
        pose=pose(quaternion_matrix(1, 0.2, 0.1, 0), (0.1, 0, 0.3)),
    )
    return sc.CollisionShapeGroup(
        [
            sc.Sphere(0.2, pose=trans(-0.3, 0, 0)),
            inner,
            sc.Cuboid([0.2, 0.3, 0.4], pose=trans(0, -0.5, 0)),
            sc.Sphere(0.3, pose=trans(5, 0, 0), collision=False),
        ],
        pose=pose(quaternion_matrix(0.9, 0, 0.3, 0.1), (0.05, 0, 0)),
    )


def obstacles() -> sc.CollisionShapeGroup:
    return sc.CollisionShapeGroup(
        [
            make_leaf("Sphere", trans(1.0, 0, 0)),
            make_leaf("Cuboid", trans(-1.0, 0.5, 0)),
            make_leaf("Mesh", trans(0, -1.2, 0.3)),
            make_leaf("Capsule", pose(quaternion_matrix(1, 1, 0, 0), (0, 1.2, 0))),
            make_leaf("Cylinder", trans(0, 0, -1.3)),
            sc.CollisionShapeGroup([make_leaf("ConvexHull", trans(1.2, 1.2, 0))]),
        ],
        pose=trans(0.1, 0, 0),
    )


def test_group_against_group_equals_the_per_pose_queries() -> None:
    check_queries(obstacles(), robot_like(), random_poses(25, 1.2, 11))


def test_groups_against_leaves_and_halfspaces() -> None:
    floor = sc.HalfSpace([0, 0, 1], -0.6)
    check_queries(floor, robot_like(), random_poses(12, 1.0, 12))
    check_queries(robot_like(), make_leaf("Mesh"), random_poses(12, 1.0, 13))
    check_queries(make_leaf("Cuboid"), robot_like(), random_poses(12, 1.0, 14))


def test_b_inside_a_group_is_placed_in_that_groups_frame() -> None:
    holder = sc.CollisionShapeGroup(pose=pose(quaternion_matrix(0.3, 1, 0, 0.2), (0.5, 0, 0)))
    b = make_leaf("Capsule", trans(0.1, 0, 0))
    holder.append(b)
    check_queries(obstacles(), b, random_poses(12, 1.0, 15))
    ball = sc.Sphere(0.3)
    holder.append(ball)
    check_queries(make_leaf("Mesh"), ball, random_poses(12, 1.0, 16))
    np.testing.assert_array_equal(holder[0].T, trans(0.1, 0, 0))


def test_empty_groups() -> None:
    P = random_poses(3, 1.0, 17)
    empty = sc.CollisionShapeGroup()
    ball = sc.Sphere(0.5)
    assert batch.iscollided(empty, ball, P).tolist() == [False] * 3
    assert batch.distance(ball, empty, P).tolist() == [math.inf] * 3
    d, p1, p2 = batch.closest_point(empty, ball, P, inf_dist=math.inf)
    assert np.isnan(d).all() and np.isnan(p1).all() and np.isnan(p2).all()
    assert len(batch.contacts(ball, empty, P)) == 0


# ------------------------------------------------------------------- answers by hand


def test_known_answers_and_the_inf_dist_rule() -> None:
    a, b = sc.Sphere(1.0), sc.Sphere(0.5)
    t = np.array([[3.0, 0, 0], [0, 2.0, 0], [0, 0, 1.5], [9.0, 0, 0]])  # d = 1.5, 0.5, 0, 7.5
    assert batch.iscollided(a, b, t).tolist() == [False, False, True, False]
    np.testing.assert_allclose(batch.distance(a, b, t), [1.5, 0.5, 0.0, 7.5])
    d, p1, p2 = batch.closest_point(a, b, t, inf_dist=0.5)  # d == inf_dist is a result
    np.testing.assert_allclose(d[:3], [math.nan, 0.5, 0.0])
    assert math.isnan(d[3]) and np.isnan(p1[[0, 3]]).all() and np.isnan(p2[[0, 3]]).all()
    np.testing.assert_allclose(p1[1], [0, 1.0, 0])
    np.testing.assert_allclose(p2[1], [0, 1.5, 0])
    assert batch.distance(a, b, t, chunk_size=1).tolist() == batch.distance(a, b, t).tolist()


def test_results_come_in_input_order_across_chunks() -> None:
    a = make_leaf("Mesh")
    b = sc.Cuboid([0.2, 0.2, 0.2])
    P = random_poses(40, 1.2, 18)
    whole = batch.distance(a, b, P)
    for size in (1, 3, 7, 40, 1000):
        assert batch.distance(a, b, P, chunk_size=size).tolist() == whole.tolist()
        assert batch.iscollided(a, b, P, chunk_size=size).tolist() == (whole <= 0).tolist()
    found = batch.contacts(a, b, P, chunk_size=7)
    assert found.pose.tolist() == sorted(found.pose.tolist())
    assert found.counts.sum() == len(found)


def test_iterators_stream_the_chunks() -> None:
    a, b = make_leaf("ConvexHull"), make_leaf("Cone")
    P = random_poses(23, 1.0, 19)
    d = batch.distance(a, b, P)
    parts = list(batch.iter_distance(a, b, P, chunk_size=5))
    assert [start for start, _ in parts] == [0, 5, 10, 15, 20]
    assert [len(x) for _, x in parts] == [5, 5, 5, 5, 3]
    assert np.concatenate([x for _, x in parts]).tolist() == d.tolist()
    hits = list(batch.iter_iscollided(a, b, P, chunk_size=10))
    assert np.concatenate([h for _, h in hits]).tolist() == batch.iscollided(a, b, P).tolist()
    for start, (dd, p1, p2) in batch.iter_closest_point(a, b, P, 0.2, chunk_size=10):
        ref = batch.closest_point(a, b, P[start : start + len(dd)], 0.2)
        for got, want in zip((dd, p1, p2), ref, strict=True):
            np.testing.assert_array_equal(got, want)
    found = batch.contacts(a, b, P)
    rows = [c for _, part in batch.iter_contacts(a, b, P, chunk_size=4) for c in part]
    assert rows == list(found)


def test_iterators_hold_one_chunk_at_a_time() -> None:
    # 400,000 translations (9.6 MB) and 100,000 poses (12.8 MB) streamed in chunks of 4,096:
    # what the iteration allocates at its peak stays far below one whole result (3.2 MB of
    # float64 distances), the check of the poses included (it lays out one block of 4,096
    # poses at a time, 0.8 MB).
    import tracemalloc

    a, b = sc.Sphere(1.0), sc.Sphere(0.5)
    n = 400_000
    t = np.zeros((n, 3))
    t[:, 0] = np.linspace(0.0, 4.0, n)  # d = x - 1.5
    P = np.tile(np.eye(4), (n // 4, 1, 1))
    P[:, 0, 3] = t[: n // 4, 0]
    cases: list[tuple[Any, np.ndarray, Callable[[np.ndarray], np.ndarray]]] = [
        (batch.iter_distance, t, lambda x: x - 1.5),
        (batch.iter_iscollided, P, lambda x: x <= 1.5),
    ]
    for query, given, want in cases:
        x = given[:, 0] if given.ndim == 2 else given[:, 0, 3]
        tracemalloc.start()
        try:
            seen = 0
            for start, part in query(a, b, given, chunk_size=4096):
                assert start == seen
                seen += len(part)
                np.testing.assert_allclose(part, want(x[start:seen]), rtol=0.0, atol=1e-12)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert seen == len(given)
        assert peak < 1_000_000, (query.__name__, peak)


def test_an_iterator_left_midway_leaves_b_in_place() -> None:
    a, b = make_leaf("Mesh"), make_leaf("Sphere", trans(0.3, 0.2, 0.1))
    before = b.T
    chunks = cast(
        Generator[Any, None, None],
        batch.iter_distance(a, b, random_poses(30, 1.0, 20), chunk_size=4),
    )
    next(chunks)
    np.testing.assert_array_equal(b.T, before)
    assert b.distance(a) == a.distance(b)
    chunks.close()
    np.testing.assert_array_equal(b.T, before)


def test_empty_batches() -> None:
    a, b = make_leaf("Mesh"), make_leaf("Sphere")
    empties: list[Any] = [[], np.zeros((0, 4, 4)), np.zeros((0, 3)), np.zeros(0)]
    for empty in empties:
        assert batch.iscollided(a, b, empty).shape == (0,)
        assert batch.iscollided(a, b, empty).dtype == np.bool_
        assert batch.distance(a, b, empty).shape == (0,)
        d, p1, p2 = batch.closest_point(a, b, empty)
        assert (d.shape, p1.shape, p2.shape) == ((0,), (0, 3), (0, 3))
        found = batch.contacts(a, b, empty)
        assert len(found) == 0 and found.normal.shape == (0, 3) and found.counts.shape == (0,)
        assert list(batch.iter_distance(a, b, empty)) == []


def test_se3_poses_are_accepted() -> None:
    from spatialmath import SE3

    a, b = sc.Sphere(1.0), sc.Sphere(0.5)
    two = SE3([SE3.Trans(3, 0, 0), SE3.Trans(0, 2, 0)])
    assert batch.distance(a, b, two).tolist() == [1.5, 0.5]
    assert batch.distance(a, b, [SE3.Trans(3, 0, 0)]).tolist() == [1.5]


# ---------------------------------------------------------------------------- b restored


def test_b_is_put_back_after_every_query() -> None:
    a = obstacles()
    b = robot_like()
    start = b.T
    leaf_starts = [leaf.world_T for leaf in b.leaves()]
    tfs = [(leaf._tf.getRotation(), leaf._tf.getTranslation()) for leaf in b.leaves()]
    d_before, revision = a.distance(b), b._revision
    P = random_poses(8, 1.0, 21)
    batch.iscollided(a, b, P)
    batch.distance(a, b, P)
    batch.closest_point(a, b, P)
    batch.contacts(a, b, P)
    np.testing.assert_array_equal(b.T, start)
    for leaf, want in zip(b.leaves(), leaf_starts, strict=True):
        np.testing.assert_array_equal(leaf.world_T, want)
    # The Coal transforms too, bit for bit: a query after the batch sees b where it was.
    for leaf, (R, t) in zip(b.leaves(), tfs, strict=True):
        np.testing.assert_array_equal(leaf._tf.getRotation(), R)
        np.testing.assert_array_equal(leaf._tf.getTranslation(), t)
    assert a.distance(b) == d_before
    # b never moved for its observers (and pickles as before: workers keep their copies).
    assert b._revision == revision


def test_an_error_names_the_pose_and_b_is_put_back(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = make_leaf("Mesh"), make_leaf("Cone", trans(0.1, 0, 0))
    before = b.T
    reference = b.distance(a)
    P = random_poses(12, 0.5, 22)
    P[7, :3, 3] = (0.25, 0.0, 0.0)  # the one pose the broken placement fails on
    real = _kernels._Placer.mover

    def mover(self: Any, k: int) -> Callable[[int], None]:
        move, tf = real(self, k), self.tfs[k]

        def broken(i: int) -> None:
            move(i)
            if tf.getTranslation().tolist() == [0.25, 0.0, 0.0]:
                raise RuntimeError("Coal failed")

        return broken

    monkeypatch.setattr(_kernels._Placer, "mover", mover)
    for query in (batch.distance, batch.iscollided, batch.contacts):
        with pytest.raises(batch.BatchError, match=r"^pose 7 failed: RuntimeError: Coal fail") as e:
            query(a, b, P, chunk_size=5)
        assert e.value.index == 7
        assert isinstance(e.value.__cause__, RuntimeError)
        assert isinstance(e.value, sc.SpatialContactError) and isinstance(e.value, ValueError)
        np.testing.assert_array_equal(b.T, before)
        assert b.distance(a) == reference


# -------------------------------------------------------------------------------- scenes


def scene_with_objects() -> tuple[sc.Scene, list[sc.CollisionShape]]:
    scene = sc.Scene()
    objects: list[sc.CollisionShape] = [
        sc.Cuboid([2.0, 2.0, 0.1], pose=trans(0, 0, -0.05)),
        make_leaf("Mesh", trans(0.8, 0, 0.5)),
        robot_like(),
    ]
    scene.add(objects[0], "table")
    scene.add(objects[1], "ball")
    scene.add(objects[2], "arm")
    scene.allow("arm", "table")
    return scene, objects


def test_scene_answers_which_objects_each_pose_touches() -> None:
    scene, _ = scene_with_objects()
    probe = sc.Capsule(0.1, 0.3)
    P = random_poses(30, 1.0, 23)
    hit = batch.iscollided(scene, probe, P)
    assert hit.shape == (30, 3) and hit.dtype == np.bool_
    names = scene.names
    for i, touched in enumerate(per_pose(scene, probe, P, lambda: scene.collide(probe))):
        assert [names[j] for j in np.flatnonzero(hit[i])] == touched
    assert hit.any(axis=0).all()  # each object is touched at some pose
    d = batch.distance(scene, probe, P)
    want = [r[0] for r in per_pose(scene, probe, P, lambda: scene.distance(probe))]
    np.testing.assert_array_equal(d, np.array(want, dtype=float))
    assert batch.iscollided(scene, probe, np.zeros((0, 3))).shape == (0, 3)


def test_scene_leaves_out_the_object_b_belongs_to() -> None:
    scene, objects = scene_with_objects()
    ball = objects[1]
    before = ball.T
    t = np.array([[0.0, 0, 0.3], [0.0, 0, 3.0]])
    hit = batch.iscollided(scene, ball, t)
    assert hit[:, scene.index_of("ball")].tolist() == [False, False]
    assert hit[:, scene.index_of("table")].tolist() == [True, False]
    np.testing.assert_array_equal(ball.T, before)
    assert (
        scene.collide(ball) == per_pose(scene, ball, before[None], lambda: scene.collide(ball))[0]
    )


@pytest.mark.parametrize("query", [batch.closest_point, batch.contacts])
def test_scene_is_refused_by_the_other_queries(query: Any) -> None:
    scene, _ = scene_with_objects()
    with pytest.raises(sc.ShapeTypeError, match=r"a Scene answers batch\.iscollided and"):
        query(scene, sc.Sphere(0.1), np.zeros((1, 3)))


# ------------------------------------------------------------------------- contacts API


def test_batch_contacts_columns_and_records() -> None:
    a, b = sc.Sphere(1.0), sc.Sphere(1.0)
    found = batch.contacts(a, b, [[1.5, 0, 0], [5, 0, 0], [0, 1.9, 0]])
    assert repr(found) == "BatchContacts(2 contacts over 3 poses)"
    assert found.pose.tolist() == [0, 2] and found.counts.tolist() == [1, 0, 1]
    np.testing.assert_allclose(found.normal, [[1, 0, 0], [0, 1, 0]])
    np.testing.assert_allclose(found.penetration_depth, [-0.5, -0.1])
    np.testing.assert_allclose(found.nearest_points[0], np.array([[1, 0, 0], [0.5, 0, 0]]))
    np.testing.assert_allclose(found.pos[0], [0.75, 0, 0])
    assert found.b1.tolist() == found.b2.tolist() == [-1, -1]
    assert found.o1 == (a, a) and found.o2 == (b, b)
    assert found[0] is found[0] and found[-1].o2 is b
    assert isinstance(found[1:], batch.BatchContacts) and found[1:].pose.tolist() == [2]
    assert len(found.of_pose(1)) == 0 and len(found.to_contacts()) == 2
    with pytest.raises(IndexError):
        found[2]
    with pytest.raises(sc.errors.InvalidArgumentError, match="index must be a row of the 3"):
        found.of_pose(3)
    with pytest.raises(ValueError, match="read-only"):
        found.normal[0, 0] = 2.0


def test_negative_security_margin_keeps_the_deep_contacts() -> None:
    a, b = sc.Sphere(1.0), sc.Sphere(1.0)
    t = [[1.5, 0, 0], [1.9, 0, 0]]  # depths -0.5 and -0.1
    assert batch.contacts(a, b, t, security_margin=-0.2).pose.tolist() == [0]
    assert batch.contacts(a, b, t, security_margin=0.2).pose.tolist() == [0, 1]


# ------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("poses", "message"),
    [
        (np.eye(4), r"poses must be an \(N, 4, 4\) array .* shape \(4, 4\) \(give a single"),
        (np.zeros((5, 4)), r"got an array of shape \(5, 4\)"),
        (np.zeros((2, 3, 3)), r"got an array of shape \(2, 3, 3\)"),
        ("poses", "poses must be an"),
        ([[1, 2, True]], "booleans"),
    ],
)
def test_wrong_pose_arrays(poses: Any, message: str) -> None:
    with pytest.raises(sc.InvalidPoseError, match=message):
        batch.iscollided(sc.Sphere(1.0), sc.Sphere(1.0), poses)


def test_bad_rows_are_named_before_any_work() -> None:
    a, b = sc.Sphere(1.0), sc.Sphere(1.0)
    P = np.tile(np.eye(4), (40000, 1, 1))
    P[30001, 0, 0] = -1.0
    with pytest.raises(sc.InvalidPoseError, match=r"poses\[30001\] must be a rigid .*reflection"):
        batch.distance(a, b, P, executor=CountingExecutor())
    P[30001] = np.eye(4)
    P[20000, 1, 3] = math.nan
    with pytest.raises(sc.InvalidPoseError, match=r"poses\[20000\] .*non-finite"):
        batch.iscollided(a, b, P)
    P[20000] = np.eye(4)
    P[3, :3, :3] *= 1.1
    with pytest.raises(sc.InvalidPoseError, match=r"poses\[3\] .*not orthonormal"):
        batch.closest_point(a, b, P)
    t = np.zeros((10, 3))
    t[6, 2] = math.inf
    with pytest.raises(sc.InvalidPoseError, match="poses must be finite, got inf at row 6"):
        batch.contacts(a, b, t)
    t[6, 2] = 2e6
    with pytest.raises(sc.InvalidPoseError, match=r"±1e\+06 m on each axis, got 2e\+06 at row 6"):
        batch.distance(a, b, t)


class CountingExecutor(concurrent.futures.Executor):
    """Runs nothing: counts what is submitted."""

    def __init__(self) -> None:
        self.submitted = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        self.submitted += 1
        raise AssertionError("no work should start")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"chunk_size": 0}, sc.errors.InvalidArgumentError, "chunk_size must be an integer >= 1"),
        ({"chunk_size": 2.0}, sc.ShapeTypeError, "chunk_size must be an integer"),
        ({"executor": "pool"}, sc.ShapeTypeError, "executor must be a concurrent.futures"),
        ({"progress": 1}, sc.ShapeTypeError, "progress must be True or False"),
    ],
)
def test_bad_options(kwargs: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        batch.iscollided(sc.Sphere(1.0), sc.Sphere(1.0), np.zeros((2, 3)), **kwargs)


def test_bad_query_arguments() -> None:
    a, b, t = sc.Sphere(1.0), sc.Sphere(1.0), np.zeros((2, 3))
    with pytest.raises(sc.errors.InvalidArgumentError, match="inf_dist must not be NaN"):
        batch.closest_point(a, b, t, inf_dist=math.nan)
    with pytest.raises(sc.ShapeTypeError, match="inf_dist must be a real number"):
        batch.closest_point(a, b, t, inf_dist="far")  # type: ignore[arg-type]
    with pytest.raises(sc.errors.InvalidArgumentError, match="max_contacts must be an integer"):
        batch.contacts(a, b, t, max_contacts=0)
    with pytest.raises(sc.errors.InvalidArgumentError, match="security_margin must be finite"):
        batch.contacts(a, b, t, security_margin=math.inf)
    with pytest.raises(sc.ShapeTypeError, match="a must be a CollisionShape or"):
        batch.iscollided("table", b, t)  # type: ignore[arg-type]
    with pytest.raises(sc.ShapeTypeError, match="b must be a CollisionShape or"):
        batch.distance(a, sc.Scene(), t)  # type: ignore[arg-type]
    with pytest.raises(sc.CollisionDisabledError, match=r"b .* has collision=False"):
        batch.distance(a, sc.Sphere(1.0, collision=False), t)


def test_b_must_be_separate_from_a() -> None:
    group = robot_like()
    leaf = group[0]
    for a, b in ((group, leaf), (leaf, group), (leaf, leaf)):
        with pytest.raises(sc.errors.InvalidArgumentError, match="b must be separate from a"):
            batch.iscollided(a, b, np.zeros((1, 3)))


# --------------------------------------------------------------------- progress, imports


def test_progress_bar(capsys: pytest.CaptureFixture[str]) -> None:
    d = batch.distance(
        sc.Sphere(1.0), sc.Sphere(1.0), np.zeros((10, 3)), chunk_size=3, progress=True
    )
    assert d.tolist() == [-2.0] * 10
    assert "10/10" in capsys.readouterr().err


def test_importing_the_package_loads_neither_dask_nor_tqdm() -> None:
    code = (
        "import sys, spatialcontact, spatialcontact.batch\n"
        "print(sorted(m for m in sys.modules\n"
        "             if m.split('.')[0] in ('dask', 'distributed', 'tqdm')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_comparison_functions() -> None:
    assert tolerance(np.array([0.5, 0.0, -0.5])).tolist() == [1e-9, EPA_TOLERANCE, EPA_TOLERANCE]
    assert_near([1.0, math.nan], [1.0 + 1e-10, math.nan], np.array(1e-9))
    with pytest.raises(AssertionError):
        assert_near([1.0, 2.0], [1.0, 2.0 + 1e-8], np.array([1.0, 1e-9]))
    with pytest.raises(AssertionError):
        assert_near([1.0, math.nan], [1.0, 1.0], np.array(1e-9))


# ----------------------------------------------------------------------- trusted poses


def test_check_false_gives_the_same_answers_on_rigid_poses() -> None:
    P = random_poses(300, 1.5, seed=11)
    hull = sc.ConvexHull(np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)]))
    for a, b in ((sc.Cuboid([1.0, 0.6, 0.4]), sc.Capsule(0.2, 0.5)), (hull, sc.Sphere(0.3))):
        for ask in (batch.iscollided, batch.distance):
            np.testing.assert_array_equal(ask(a, b, P, check=False), ask(a, b, P))


def test_check_false_reads_closed_form_poses_as_they_are() -> None:
    # Twice the identity's rotation is no rigid transform: refused when checked, read as it is
    # (the sphere's centre is only its translation) when not.
    P = np.stack([np.eye(4), np.eye(4)])
    P[1, :3, :3] *= 2.0
    P[:, 0, 3] = [0.5, 3.0]
    a, b = sc.Sphere(1.0), sc.Sphere(0.5)
    with pytest.raises(sc.InvalidPoseError, match=r"poses\[1\]"):
        batch.distance(a, b, P)
    assert batch.distance(a, b, P, check=False).tolist() == [-1.0, 1.5]


def test_check_false_still_refuses_what_coal_must_never_see() -> None:
    hull = sc.ConvexHull(np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)]))
    P = random_poses(50, 1.0, seed=3)
    P[17, 1, 2] = np.nan
    with pytest.raises(sc.InvalidPoseError, match=r"poses\[17\].*non-finite"):
        batch.iscollided(hull, sc.Sphere(0.2), P, check=False)
    P = random_poses(50, 1.0, seed=3)
    P[31, 3, 3] = 2.0
    with pytest.raises(sc.InvalidPoseError, match=r"poses\[31\]"):
        batch.distance(hull, sc.Sphere(0.2), P, check=False)


@pytest.mark.parametrize("executor", [None, "threads"])
@pytest.mark.parametrize(
    ("a", "b"),
    [
        (sc.Sphere(1.0), sc.Sphere(0.5)),  # the direct path (iscollided) and a closed form
        (sc.Cuboid([1.0, 0.6, 0.4]), sc.Capsule(0.2, 0.5)),
        (sc.HalfSpace([0.0, 0.0, 1.0], 0.0), sc.Cuboid([0.2, 0.2, 0.2])),
        (sc.Sphere(1.0), sc.CollisionShapeGroup([sc.Sphere(0.2), sc.Capsule(0.1, 0.3)])),
    ],
)
def test_check_false_refuses_rows_no_answer_can_be_read_from(
    a: sc.CollisionShape, b: sc.CollisionShape, executor: str | None
) -> None:
    # The closed forms and the direct paths never hand a pose to Coal, but a NaN read by them
    # answered "apart" (False, inf): an unchecked batch is still checked for it.
    P = random_poses(40, 1.0, seed=5)
    with contextlib.ExitStack() as stack:
        pool = None
        if executor:
            pool = stack.enter_context(concurrent.futures.ThreadPoolExecutor(1))
        for entry, value in (((1, 3), math.nan), ((2, 0), math.inf), ((0, 3), 2e6),
                             ((3, 1), 1.0)):  # fmt: skip
            Q = P.copy()
            Q[23][entry] = value
            for ask in (batch.iscollided, batch.distance):
                with pytest.raises(sc.InvalidPoseError, match=r"poses\[23\] must be a rigid"):
                    ask(a, b, Q, check=False, executor=pool, chunk_size=8)


def test_check_must_be_a_bool() -> None:
    with pytest.raises(sc.ShapeTypeError, match="check must be True or False, got 1"):
        batch.iscollided(sc.Sphere(1.0), sc.Sphere(0.5), [[0.0, 0.0, 0.0]], check=cast(Any, 1))


# ------------------------------------------------------------- the direct two-leaf paths


def direct_cases() -> list[tuple[sc.CollisionShape, sc.CollisionShape]]:
    """Leaf pairs ``iscollided`` answers by the direct path, each way round, posed."""
    R = quaternion_matrix(0.9, 0.2, -0.3, 0.1)
    box = sc.Cuboid([0.2, 0.3, 0.1], pose=pose(R, (0.1, -0.05, 0.02)))
    capsule = sc.Capsule(0.05, 0.3, pose=pose(quaternion_matrix(1, -0.2, 0.4, 0), (0, 0.1, 0)))
    return [
        (sc.Sphere(0.2, pose=trans(0.1, 0, -0.1)), sc.Sphere(0.1)),
        (box, sc.Capsule(0.05, 0.3, pose=pose(R, (0, 0, 0)))),
        (capsule, sc.Cuboid([0.2, 0.3, 0.1], pose=pose(R.T, (0, 0, 0)))),
    ]


@pytest.mark.parametrize("case", range(3))
def test_the_direct_paths_equal_the_per_pose_queries(case: int) -> None:
    # 3,000 poses about a's centre, as poses and as translations: for a capsule and a box,
    # the bounding spheres apart, the capsule's centre within its radius of the box or too
    # far from it, the segment's bounding box off the grown box, an end within the radius,
    # and the segments left measured (see the next test).
    a, b = direct_cases()[case]
    P = random_poses(3000, 0.35, seed=case)
    P[:, :3, 3] += a.T[:3, 3]
    t = P[:, :3, 3].copy()
    Pt = np.tile(b.T, (len(t), 1, 1))
    Pt[:, :3, 3] = t
    job = _kernels.Job("iscollided", a, b, False, False, prepared=[])
    assert _kernels._direct(job) is not None
    for given, placed in ((P, P), (t, Pt)):
        d = np.array(per_pose(a, b, placed, lambda: a.distance(b)))
        want = np.array(per_pose(a, b, placed, lambda: a.iscollided(b)))
        away = np.abs(d) > 1e-9
        hit = batch.iscollided(a, b, given)
        np.testing.assert_array_equal(hit[away], want[away])
        assert 0.05 < want.mean() < 0.95
        np.testing.assert_array_equal(batch.iscollided(a, b, given, chunk_size=700), hit)
        chunked = np.concatenate([h for _, h in batch.iter_iscollided(a, b, given, chunk_size=700)])
        np.testing.assert_array_equal(chunked, hit)  # the chunks' path, without the row check


@pytest.mark.parametrize("case", [1, 2])
def test_the_compiled_capsule_box_answer_equals_the_numpy_closed_form(case: int) -> None:
    # The compiled rows (DirectCollide) against capsule_box_collides, the numpy closed yes/no
    # of groups' leaf pairs, on 3,000 poses about the fixed leaf (every branch of the test:
    # bounding spheres apart, the centre within the radius, an end within it, slab tests,
    # measured segments), as poses and as translations, away from touching.
    from spatialcontact.batch import _fast

    a, b = direct_cases()[case]
    capsule, box = cast(Any, (a, b) if a.stype == "capsule" else (b, a))
    P = random_poses(3000, 0.35, seed=10 + case)
    P[:, :3, 3] += a.T[:3, 3]
    t = P[:, :3, 3].copy()
    Pt = np.tile(b.T, (len(t), 1, 1))
    Pt[:, :3, 3] = t
    direct = _fast.direct_collide(a, b)
    for rows, placed in ((P, P), (t, Pt)):
        Tc = placed if capsule is b else np.tile(capsule.T, (len(placed), 1, 1))
        Tb = placed if box is b else np.tile(box.T, (len(placed), 1, 1))
        half = 0.5 * capsule.length * Tc[:, :3, 2]
        ends = (Tc[:, :3, 3] - half, Tc[:, :3, 3] + half)
        gap = _fast.segment_box_distance(*ends, Tb, np.array(box.scale)) - capsule.radius
        want = _fast.capsule_box_collides(
            Tc[:, :3, 3], half, capsule.radius, Tb, np.array(box.scale), len(rows)
        )
        hit = direct(rows)
        away = np.abs(gap) > 1e-12
        assert away.mean() > 0.99 and 0.05 < want.mean() < 0.95
        np.testing.assert_array_equal(hit[away], want[away])
        np.testing.assert_array_equal(want[away], gap[away] <= 0.0)


@pytest.mark.parametrize("case", range(3))
def test_the_direct_paths_check_their_rows_in_the_same_pass(case: int) -> None:
    # Answered in one pass over the rows (no executor, no progress bar): a bad row is still
    # named with the message of the separate check, and no answer is given.
    a, b = direct_cases()[case]
    P = random_poses(500, 0.35, seed=case)
    P[:, :3, 3] += a.T[:3, 3]
    good = batch.iscollided(a, b, P)
    np.testing.assert_array_equal(good, batch.iscollided(a, b, P, progress=True))
    P[321, 0, 0] = -P[321, 0, 0]
    with pytest.raises(sc.InvalidPoseError, match=r"poses\[321\] must be a rigid"):
        batch.iscollided(a, b, P)
    P[321, 0, 0] = -P[321, 0, 0]
    P[17, 2, 3] = math.nan
    with pytest.raises(sc.InvalidPoseError, match=r"poses\[17\] .*non-finite"):
        batch.iscollided(a, b, P)
    # check=False: the caller vouches for rigidity only; a non-finite row is still refused.
    with pytest.raises(sc.InvalidPoseError, match=r"poses\[17\] .*non-finite"):
        batch.iscollided(a, b, P, check=False)
    P[17, 2, 3] = 0.0
    P[321, :3, :3] *= 2.0  # not rigid, but answers can be read from it
    unchecked = batch.iscollided(a, b, P, check=False)
    assert len(unchecked) == len(P)
    P[321, :3, :3] /= 2.0
    P[17, 2, 3] = math.nan
    t = P[:, :3, 3].copy()
    t[17] = 0.0
    t[400, 1] = -math.inf
    with pytest.raises(sc.InvalidPoseError, match="poses must be finite, got -inf at row 400"):
        batch.iscollided(a, b, t)
    t[400, 1] = 3e6
    with pytest.raises(sc.InvalidPoseError, match=r"±1e\+06 m on each axis, got 3e\+06 at row 400"):
        batch.iscollided(a, b, t, check=False)  # translations are always checked
    t[400, 1] = 0.0
    np.testing.assert_array_equal(
        batch.iscollided(a, b, t), batch.iscollided(a, b, t, chunk_size=7)
    )
    with pytest.raises(sc.errors.InvalidArgumentError, match="chunk_size must be an integer >= 1"):
        batch.iscollided(a, b, t, chunk_size=0)


def test_the_direct_path_is_only_for_two_leaves_in_no_group() -> None:
    a, b = direct_cases()[1]
    group = sc.CollisionShapeGroup([sc.Capsule(0.05, 0.3)])
    for x, y in ((a, group), (sc.CollisionShapeGroup([sc.Cuboid([0.2, 0.3, 0.1])]), b)):
        job = _kernels.Job("iscollided", x, y, False, False, prepared=[])
        assert _kernels._direct(job) is None
    assert _kernels._direct(_kernels.Job("iscollided", a, group[0], False, False)) is None
    for kind in ("distance", "closest_point", "contacts"):
        assert _kernels._direct(_kernels.Job(kind, a, b, False, False)) is None
    hull = sc.ConvexHull(np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)]))
    assert _kernels._direct(_kernels.Job("iscollided", hull, b, False, False)) is None


def test_the_check_names_the_first_bad_row_in_any() -> None:
    from spatialcontact.batch import _poses

    block = 4096
    P = random_poses(2 * block + 5, 2.0, seed=8)
    assert _poses.check_poses(P, "poses")[0] is P
    for row, (r, c, value, why) in zip(
        (3, block + 1, 2 * block + 4),
        (
            (3, 2, -0.0, None),
            (0, 3, 1e6 + 1, "translation"),
            (3, 3, np.nextafter(1.0, 2.0), "last row"),
        ),
        strict=True,
    ):
        Q = P.copy()
        Q[row, r, c] = value
        if why is None:  # -0.0 in the last row is 0
            assert _poses.check_poses(Q, "poses")[0] is Q
            continue
        with pytest.raises(sc.InvalidPoseError, match=rf"poses\[{row}\] .*{why}"):
            _poses.check_poses(Q, "poses")
    Q = P.copy()
    Q[block + 2, 1, 1] += 0.9e-6  # within the tolerance
    assert _poses.check_poses(Q, "poses")[0] is Q
    Q[block + 2, 1, 1] += 0.2e-6  # beyond it
    with pytest.raises(sc.InvalidPoseError, match=rf"poses\[{block + 2}\] "):
        _poses.check_poses(Q, "poses")
    Q = P.copy()
    Q[7, 3, 1] = 1e-300  # the last row must be exactly [0, 0, 0, 1]
    with pytest.raises(sc.InvalidPoseError, match=r"poses\[7\] .*last row"):
        _poses.check_poses(Q, "poses")


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_the_check_refuses_non_finite_entries_without_warnings(value: float) -> None:
    import warnings

    P = random_poses(10, 1.0, seed=4)
    P[3, 0, 1] = value
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(sc.InvalidPoseError, match=r"poses\[3\] "):
            batch.iscollided(sc.Sphere(1.0), sc.Sphere(0.5), P)


def test_no_other_thread_takes_the_library_lock_while_b_is_at_a_batch_pose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A batch places b's leaves at its poses while a chunk runs. A Scene holding b, asked from
    # another thread then, kept the pair it found there (a collision 0.9 m away, reported
    # until b or c moved again). Every Scene call takes the library's lock: a chunk holds it.
    import threading

    from spatialcontact._coal import state

    seen: list[bool] = []
    b = sc.Cylinder(0.05, 0.1)
    original = _kernels._collide_block

    def watched(pairs: Any, block: Any) -> np.ndarray:
        got: list[bool] = []

        def other() -> None:
            taken = state.LOCK.acquire(blocking=False)
            if taken:
                state.LOCK.release()
            got.append(taken)

        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        seen.append(got[0])
        return original(pairs, block)

    monkeypatch.setattr(_kernels, "_collide_block", watched)
    P = np.tile(np.eye(4), (100, 1, 1))
    P[:, 0, 3] = 0.9
    hit = batch.iscollided(sc.Mesh(meshes.path("objects/sphere_5k.stl")), b, P, chunk_size=25)
    assert len(seen) == 4 and not hit.any()
    assert not any(seen)
    assert b._tf.getTranslation()[0] == 0.0  # put back
