"""The compiled placement path (spatialcontact._native) and the poses it keeps.

The rigidity rule is checked against the same rule written here in plain Python floats; the
placements against numpy products and Coal's own getters; every refused argument by its
message, with nothing changed; hostile arguments in a child process, so that a crash fails
the test instead of ending the run.
"""

from __future__ import annotations

import gc
import math
import subprocess
import sys
import textwrap
from typing import Any

import coal
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import spatialcontact as sc
from spatialcontact import _native
from spatialcontact.pose import MAX_TRANSLATION, ROTATION_TOLERANCE


def rule(M: np.ndarray) -> bool:
    """The rigidity rule of spatialcontact.pose, in plain floats, in the same order."""
    a, b, c, x, d, e, f, y, g, h, i, z, p, q, r, s = (float(v) for v in M.ravel())
    tol, far = ROTATION_TOLERANCE, MAX_TRANSLATION
    return (
        abs(a * a + b * b + c * c - 1.0) <= tol
        and abs(d * d + e * e + f * f - 1.0) <= tol
        and abs(a * d + b * e + c * f) <= tol
        and abs(b * f - c * e - g) <= tol
        and abs(c * d - a * f - h) <= tol
        and abs(a * e - b * d - i) <= tol
        and abs(x) <= far
        and abs(y) <= far
        and abs(z) <= far
        and p == q == r == 0.0
        and s == 1.0
    )


def rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    """(3, 3) rotation about the unit ``axis`` (Rodrigues)."""
    k = axis / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def pose(
    axis: tuple[float, float, float], angle: float, t: tuple[float, float, float]
) -> np.ndarray:
    M = np.eye(4)
    M[:3, :3] = rotation(np.array(axis), angle)
    M[:3, 3] = t
    return M


def tf_matrix(tf: coal.Transform3s) -> np.ndarray:
    M = np.eye(4)
    M[:3, :3] = tf.getRotation()
    M[:3, 3] = tf.getTranslation()
    return M


axes = st.tuples(*[st.floats(-1, 1) for _ in range(3)]).filter(
    lambda v: sum(x * x for x in v) > 0.01
)
angles = st.floats(-7, 7)
translations = st.tuples(*[st.floats(-2e6, 2e6) for _ in range(3)])
rigid_poses = st.builds(pose, axes, angles, st.tuples(*[st.floats(-10, 10) for _ in range(3)]))


def test_the_constants_are_those_of_the_pose_module() -> None:
    assert ROTATION_TOLERANCE == 1e-6
    assert MAX_TRANSLATION == 1e6
    assert _native.COAL_VERSION == coal.__version__ == "3.0.3"


# ------------------------------------------------------------------------- is_rigid


@settings(max_examples=300)
@given(
    axes,
    angles,
    translations,
    st.integers(0, 15),
    st.sampled_from([0.0, 1e-9, 2e-7, 1e-6, 3e-6, 1e-3, math.nan, math.inf]),
)
def test_is_rigid_is_the_rule_in_plain_floats(
    axis: tuple[float, float, float],
    angle: float,
    t: tuple[float, float, float],
    k: int,
    off: float,
) -> None:
    M = pose(axis, angle, t)
    M.flat[k] += off
    assert _native.is_rigid(M) is rule(M)


@settings(max_examples=200)
@given(arrays(np.float64, (4, 4), elements=st.floats(allow_nan=True, allow_infinity=True)))
def test_is_rigid_on_any_float_array(M: np.ndarray) -> None:
    assert _native.is_rigid(M) is rule(M)


def test_is_rigid_reads_strided_views() -> None:
    M = pose((0.3, -0.2, 0.9), 1.1, (1.0, 2.0, 3.0))
    big = np.zeros((8, 8))
    big[::2, ::2] = M
    assert _native.is_rigid(big[::2, ::2])
    assert not _native.is_rigid(M.T)  # the transpose is not a pose (last row)
    assert _native.is_rigid(np.asfortranarray(M))


@pytest.mark.parametrize(
    "value",
    [
        np.eye(4, dtype=np.float32),
        np.eye(4).astype(">f8"),
        np.eye(4, dtype=np.int64),
        np.eye(4)[:3],
        np.eye(4).reshape(16),
        np.eye(4).reshape(1, 4, 4),
        [[1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
        "eye",
        None,
        b"\x00" * 128,
        memoryview(np.eye(4).tobytes()),
    ],
    ids=lambda v: type(v).__name__ + str(getattr(v, "dtype", "")),
)
def test_is_rigid_is_false_for_what_is_not_a_float64_4x4_buffer(value: object) -> None:
    assert _native.is_rigid(value) is False


def test_is_rigid_takes_one_argument() -> None:
    with pytest.raises(TypeError, match=r"is_rigid takes 1 arguments, got 2"):
        _native.is_rigid(np.eye(4), np.eye(4))  # type: ignore[call-arg]


# ------------------------------------------------------------------- first_not_rigid


def test_first_not_rigid_names_the_first_bad_pose() -> None:
    P = np.tile(np.eye(4), (5, 1, 1))
    assert _native.first_not_rigid(P) == -1
    assert _native.first_not_rigid(np.empty((0, 4, 4))) == -1
    P[3, 0, 0] = -1.0
    P[4, 3, 3] = 2.0
    assert _native.first_not_rigid(P) == 3
    assert _native.first_not_rigid(P[::-1]) == 0
    long = np.tile(np.eye(4), (101, 1, 1))  # past the prefetch distance (32 poses)
    for bad in (0, 1, 32, 33, 99, 100):
        Q = long.copy()
        Q[bad, 1, 3] = math.nan
        assert _native.first_not_rigid(Q) == bad
        assert _native.collide_rows(0, np.zeros(5), Q, True, 1e6)[1] == bad


@settings(max_examples=300)
@given(
    st.lists(rigid_poses, min_size=0, max_size=9),
    st.integers(0, 8),
    st.integers(0, 15),
    st.sampled_from([0.0, 2e-6, -2e-6, 5e-7, math.nan, math.inf, 2e6]),
)
def test_first_not_rigid_is_is_rigid_row_by_row(
    poses: list[np.ndarray], row: int, entry: int, change: float
) -> None:
    # Poses are checked two at a time (SSE2) on packed batches, one at a time on the rest:
    # one entry of one row changed, in either place of a pair, in packed and strided batches.
    P = np.array(poses).reshape(-1, 4, 4)
    if len(P):
        P[row % len(P)].flat[entry] += change
    want = next((k for k, M in enumerate(P) if not _native.is_rigid(M)), -1)
    assert _native.first_not_rigid(P) == want
    assert _native.first_not_rigid(np.repeat(P, 2, axis=2)[:, :, ::2]) == want
    params = np.zeros(5)
    for check_rows in (P, np.repeat(P, 2, axis=2)[:, :, ::2]):
        hit, bad = _native.collide_rows(0, params, check_rows, True, 1e6)
        assert bad == want and len(hit) == len(P)


def test_first_not_rigid_refuses_other_arrays() -> None:
    for bad in (np.eye(4), np.zeros((2, 4, 3)), np.zeros((2, 4, 4), dtype=np.float32), [np.eye(4)]):
        with pytest.raises(TypeError, match=r"poses must be a float64 array of shape \(n, 4, 4\)"):
            _native.first_not_rigid(bad)  # type: ignore[arg-type]


# ------------------------------------------------------------------- first_unsound


def test_first_unsound_names_the_first_pose_coal_must_not_get() -> None:
    # Not rigid but sound: a scaled rotation, a shear. Unsound: NaN, inf, a translation past
    # 1e6 m, a last row other than 0 0 0 1.
    P = np.tile(np.eye(4), (8, 1, 1))
    P[0, 0, 0] = 2.0
    P[1, 0, 1] = 0.5
    assert _native.first_unsound(P) == -1
    assert _native.first_unsound(np.empty((0, 4, 4))) == -1
    for row, (i, j), value in [(2, (0, 0), math.nan), (3, (2, 1), -math.inf),
                               (4, (1, 3), 1e6 + 1.0), (5, (3, 0), 1e-300),
                               (6, (3, 3), 0.0), (7, (2, 3), math.nan)]:  # fmt: skip
        Q = P.copy()
        Q[row, i, j] = value
        assert _native.first_unsound(Q) == row
        assert _native.first_unsound(np.repeat(Q, 2, axis=2)[:, :, ::2]) == row  # strided
    Q = P.copy()
    Q[2, 0, 3] = 1e6  # at the limit: sound
    assert _native.first_unsound(Q) == -1


def test_first_unsound_refuses_other_arrays() -> None:
    for bad in (np.eye(4), np.zeros((2, 4, 3)), np.zeros((2, 4, 4), dtype=np.float32), [np.eye(4)]):
        with pytest.raises(TypeError, match=r"poses must be a float64 array of shape \(n, 4, 4\)"):
            _native.first_unsound(bad)  # type: ignore[arg-type]


# ------------------------------------------------------------------------- place


@settings(max_examples=100)
@given(rigid_poses, rigid_poses)
def test_place_sets_the_transform_and_keeps_a_copy(M: np.ndarray, W: np.ndarray) -> None:
    tf, keep = coal.Transform3s(), np.zeros((4, 4))
    assert _native.place(tf, M, keep, None) is True
    np.testing.assert_array_equal(keep, M)
    np.testing.assert_array_equal(tf_matrix(tf), M)
    assert _native.place(tf, M, keep, W) is True
    np.testing.assert_array_equal(keep, M)
    np.testing.assert_allclose(tf_matrix(tf), W @ M, rtol=0, atol=1e-13)


def test_place_changes_nothing_when_the_pose_is_not_rigid() -> None:
    tf, keep = coal.Transform3s(), np.full((4, 4), 7.0)
    M = pose((0, 0, 1), 0.5, (1, 2, 3))
    _native.place(tf, M, keep, None)
    for bad in (2 * M, M.astype(np.float32), M[:3], "M", None, M.T):
        before = (tf_matrix(tf), keep.copy())
        assert _native.place(tf, bad, keep, None) is False
        np.testing.assert_array_equal(tf_matrix(tf), before[0])
        np.testing.assert_array_equal(keep, before[1])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            (coal.Box(1, 1, 1), np.eye(4), np.eye(4), None),
            r"tf must be a coal.Transform3s, got Box",
        ),
        ((None, np.eye(4), np.eye(4), None), r"tf must be a coal.Transform3s, got NoneType"),
        (
            (np.eye(4), np.eye(4), np.eye(4), None),
            r"tf must be a coal.Transform3s, got numpy.ndarray",
        ),
        (
            (coal.Transform3s(), np.eye(4), np.eye(4)[::-1], None),
            r"keep must be a writable C-contiguous float64",
        ),
        ((coal.Transform3s(), np.eye(4), np.eye(4, dtype=np.float32), None), r"keep must be"),
        ((coal.Transform3s(), np.eye(4), np.eye(3), None), r"keep must be"),
        (
            (coal.Transform3s(), np.eye(4), np.eye(4), np.eye(3)),
            r"parent_world must be None or a float64",
        ),
        ((coal.Transform3s(), np.eye(4), np.eye(4), "W"), r"parent_world must be None"),
    ],
)
def test_place_refuses_bad_arguments(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        _native.place(*args)  # type: ignore[arg-type]


def test_place_refuses_a_read_only_keep() -> None:
    keep = np.eye(4)
    keep.setflags(write=False)
    with pytest.raises(TypeError, match=r"keep must be a writable"):
        _native.place(coal.Transform3s(), np.eye(4), keep, None)


def test_place_takes_four_arguments() -> None:
    with pytest.raises(TypeError, match=r"place takes 4 arguments, got 2"):
        _native.place(coal.Transform3s(), np.eye(4))  # type: ignore[call-arg]


# --------------------------------------------------------------------- place_all


@settings(max_examples=50)
@given(st.lists(rigid_poses, min_size=0, max_size=40), rigid_poses)
def test_place_all_composes_and_sets_every_transform(
    poses: list[np.ndarray], W: np.ndarray
) -> None:
    n = len(poses)
    P = np.array(poses).reshape(n, 4, 4)
    tfs = tuple(None if k % 3 == 2 else coal.Transform3s() for k in range(n))
    out = np.empty((n, 4, 4))
    _native.place_all(tfs, W, P, out)
    np.testing.assert_allclose(out, W @ P, rtol=0, atol=1e-13)
    np.testing.assert_array_equal(out[:, 3], np.tile([0.0, 0.0, 0.0, 1.0], (n, 1)))
    for tf, world in zip(tfs, out, strict=True):
        if tf is not None:
            np.testing.assert_array_equal(tf_matrix(tf), world)
    _native.place_all(tfs, None, P, out)
    np.testing.assert_array_equal(out, P)


def test_place_all_changes_nothing_when_an_entry_is_not_a_transform() -> None:
    first = coal.Transform3s()
    P = np.tile(pose((1, 0, 0), 0.3, (1, 1, 1)), (3, 1, 1))
    out = np.zeros((3, 4, 4))
    with pytest.raises(TypeError, match=r"tfs entries must be a coal.Transform3s, got str"):
        _native.place_all((first, coal.Transform3s(), "tf"), None, P, out)
    np.testing.assert_array_equal(tf_matrix(first), np.eye(4))
    np.testing.assert_array_equal(out, 0.0)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ([coal.Transform3s()], None, np.eye(4)[None], np.empty((1, 4, 4))),
            r"tfs must be a tuple",
        ),
        (
            ((coal.Transform3s(),), None, np.eye(4)[None].repeat(2, 0), np.empty((1, 4, 4))),
            r"poses must be a float64 array of shape \(n, 4, 4\), n = len\(tfs\)",
        ),
        (
            ((coal.Transform3s(),), None, np.eye(4)[None], np.empty((2, 4, 4))),
            r"out must be a writable C-contiguous",
        ),
        (
            ((coal.Transform3s(),), None, np.eye(4)[None], np.empty((1, 4, 4), dtype=np.float32)),
            r"out must be",
        ),
        (
            ((coal.Transform3s(),), np.eye(3), np.eye(4)[None], np.empty((1, 4, 4))),
            r"world must be None or a float64",
        ),
    ],
)
def test_place_all_refuses_bad_arguments(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        _native.place_all(*args)  # type: ignore[arg-type]


# -------------------------------------------------------------------- world_point


def test_world_point() -> None:
    tf = coal.Transform3s()
    M = pose((0, 1, 0), 0.7, (1, -2, 3))
    _native.place(tf, M, np.empty((4, 4)), None)
    assert _native.world_point(tf, None) == (1.0, -2.0, 3.0)
    local = np.array([0.5, 0.25, -1.0])
    np.testing.assert_allclose(
        _native.world_point(tf, local), M[:3, :3] @ local + M[:3, 3], atol=1e-15
    )
    np.testing.assert_allclose(
        _native.world_point(tf, np.array([[9, 0.5], [9, 0.25], [9, -1.0]])[:, 1]),
        M[:3, :3] @ local + M[:3, 3],
        atol=1e-15,
    )
    with pytest.raises(TypeError, match=r"local must be None or a float64 array of shape \(3,\)"):
        _native.world_point(tf, np.zeros(4))
    with pytest.raises(TypeError, match=r"tf must be a coal.Transform3s, got int"):
        _native.world_point(3, None)


# ----------------------------------------------------------- hostile input, in a child


def run_child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )


def test_hostile_arguments_never_crash() -> None:
    result = run_child(
        """
        import gc, coal, numpy as np
        import spatialcontact
        from spatialcontact import _native
        objects = [None, 1, 1.5, "x", b"x" * 200, [], (), {}, object(), np.eye(4),
                   np.zeros((0, 4, 4)), np.zeros((100, 4, 4)), np.eye(4, dtype=np.float32),
                   coal.Box(1, 1, 1),
                   coal.CollisionObject(coal.Sphere(1.0)), coal.Transform3s(), coal.Transform3s,
                   memoryview(b"x" * 128), np.ma.masked_array(np.eye(4)), np.full((4, 4), np.nan),
                   -1, 7, 2**70, True, (1.0,), (0.5, 0.5), (0.0, 0.0, 1.0, 0.0), (1.0, "x")]
        n = 0
        for f, arity in [(_native.is_rigid, 1), (_native.first_not_rigid, 1), (_native.place, 4),
                         (_native.first_unsound, 1),
                         (_native.place_all, 4), (_native.world_point, 2),
                         (_native.compose_all, 3), (_native.closed_form, 7),
                         (_native.near_spheres, 5), (_native.nearest_order, 5),
                         (_native.CollideCall, 5), (_native.DistanceCall, 5),
                         (_native.collide_rows, 5), (_native.axis_map, 3),
                         (_native.nearest_pair, 5), (_native.place_objects, 2),
                         (_native.chain_poses, 8), (_native.motion_bounds, 10),
                         (_native.SphereTier, 6), (_native.contact_normals_positions, 2),
                         (_native.mesh_contacts, 6)]:
            for k in range(arity + 2):
                for first in objects:
                    rest = [objects[(j * 7 + k) % len(objects)] for j in range(k - 1)]
                    args = [first, *rest] if k else []
                    try:
                        f(*args)
                    except (TypeError, ValueError, OverflowError):
                        pass
                    n += 1
        # Every pair of kinds, both orders, with sizes of every length and hostile values.
        tf = coal.Transform3s()
        sizes = [(), (0.5,), (0.5, 0.5), (0.5, 0.5, 0.5), (0.0, 0.0, 1.0, 0.0), (0.5,) * 5,
                 (float("nan"),), (float("inf"), 0.0), (0.0, 0.0, 0.0, 0.0), (-1.0, 1e308)]
        for k1 in range(-1, 7):
            for k2 in range(-1, 7):
                for s1 in sizes:
                    for s2 in sizes:
                        try:
                            _native.closed_form(k1, k2, k1 > k2, s1, s2, tf, tf)
                        except TypeError:
                            pass
                        n += 1
        # Tuples of every size on both sides of the fixed-size path, with a bad entry last.
        for size in (0, 1, 31, 32, 33, 1000):
            tfs = tuple(coal.Transform3s() for _ in range(size))
            P = np.tile(np.eye(4), (size, 1, 1))
            _native.place_all(tfs, None, P, np.empty((size, 4, 4)))
            if size:
                try:
                    bad = (*tfs[:-1], coal.Box(1, 1, 1))
                    _native.place_all(bad, None, P, np.empty((size, 4, 4)))
                except TypeError:
                    pass
        # Cached calls whose arguments are all of the right classes but one, made and called.
        g = coal.Sphere(1.0), coal.Box(1, 1, 1)
        right = {
            _native.CollideCall: [coal.ComputeCollision(*g), coal.Transform3s(),
                                  coal.Transform3s(), coal.CollisionRequest(),
                                  coal.CollisionResult()],
            _native.DistanceCall: [coal.ComputeDistance(*g), coal.Transform3s(),
                                   coal.Transform3s(), coal.DistanceRequest(),
                                   coal.DistanceResult()],
        }
        for make, args in right.items():
            make(*args)()
            for k in range(5):
                for wrong in [*objects, *right[_native.CollideCall], *right[_native.DistanceCall]]:
                    try:
                        call = make(*args[:k], wrong, *args[k + 1:])
                    except TypeError:
                        n += 1
                        continue
                    call()
                    n += 1
        # Objects and transforms, one entry wrong at every place.
        objects = tuple(coal.CollisionObject(coal.Box(1, 1, 1)) for _ in range(5))
        tfs = tuple(coal.Transform3s() for _ in range(5))
        for k in range(5):
            for wrong in (None, coal.Box(1, 1, 1), coal.Transform3s(), objects[0], 1.0):
                for args in (((*objects[:k], wrong, *objects[k + 1:]), tfs),
                             (objects, (*tfs[:k], wrong, *tfs[k + 1:]))):
                    try:
                        _native.place_objects(*args)
                    except TypeError:
                        pass
                    n += 1
        # Rows of every layout, parameters of every length.
        for kind in (-1, 0, 1, 2):
            for params in (np.zeros(0), np.zeros(5), np.zeros(35), np.full(35, np.nan),
                           np.zeros(36), np.zeros((5, 1))):
                for rows in (np.zeros((0, 4, 4)), np.zeros((3, 4, 4)), np.zeros((3, 3)),
                             np.full((3, 3), np.inf), np.zeros((3, 4)), np.zeros((2, 4, 4))[:, ::2],
                             np.zeros((3, 3), dtype=np.float32), np.zeros(3)):
                    for check in (True, False, None, "x"):
                        try:
                            _native.collide_rows(kind, params, rows, check, 1e6)
                        except TypeError:
                            pass
                        n += 1
        # A small tier: any body number and flag; a pair query that drops the tier.
        class Dropper:
            def iscollided(self, other):
                global tier
                tier = None
                gc.collect()
                return True
        tfs = (coal.Transform3s(), coal.Transform3s())
        for shapes in ((1, 2), (Dropper(), Dropper()), (object(), None)):
            tier = _native.SphereTier(tfs, np.zeros((2, 3)), np.ones(2), (0, 1), shapes, (1, 2))
            touching = tier.touching
            for body in objects:
                for inside in (True, False, "x", np.eye(4), None):
                    try:
                        touching(body, inside)
                    except (TypeError, ValueError, OverflowError, AttributeError):
                        pass
                    n += 1
        # Two meshes: built, unbuilt, a point cloud; any margin and count.
        built = coal.BVHModelOBBRSS()
        built.beginModel(1, 3)
        built.addVertices(np.eye(3))
        built.addTriangles(np.array([[0, 1, 2]]))
        built.endModel()
        cloud = coal.BVHModelOBBRSS()
        cloud.beginModel(0, 3)
        cloud.addVertices(np.eye(3))
        cloud.endModel()
        unbuilt = coal.BVHModelOBBRSS()
        half = coal.BVHModelOBBRSS()
        half.beginModel(1, 3)
        half.addVertices(np.eye(3))
        for m1 in (built, cloud, unbuilt, half):
            for m2 in (built, cloud, unbuilt, half):
                for margin in (0.0, -1.0, 1e300, float("nan"), float("inf"), -1e300):
                    for keep in (1, 0, -1, 2**62, 2**70):
                        try:
                            _native.mesh_contacts(m1, tf, m2, tf, margin, keep)
                        except (TypeError, ValueError, OverflowError):
                            pass
                        n += 1
        gc.collect()
        print("ok", n)
        """
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("ok ")


def test_another_coal_version_is_refused_at_import() -> None:
    result = run_child(
        """
        import coal
        coal.__version__ = "3.0.4"
        try:
            import spatialcontact
        except ImportError as error:
            print(error)
        """
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert (
        "spatialcontact was compiled against Coal 3.0.3 but Coal '3.0.4' is installed"
        in result.stdout
    )


# ----------------------------------------------------------------- the poses kept


def test_a_leaf_keeps_its_own_copy_of_the_pose() -> None:
    ball, table = sc.Sphere(0.1), sc.Cuboid([1.0, 1.0, 0.1])
    M = np.eye(4)
    M[2, 3] = 0.5
    ball.T = M
    M[2, 3] = 0.0  # the caller's array changes after the pose was set
    assert ball.T[2, 3] == 0.5
    assert ball.distance(table) == pytest.approx(0.35)
    ball.T = pose((0, 0, 1), 0.2, (0, 0, 0.25))
    ball.T = pose((0, 0, 1), 0.2, (0, 0, 0.3))  # set twice, read once: the last one
    np.testing.assert_array_equal(ball.T, pose((0, 0, 1), 0.2, (0, 0, 0.3)))
    first = ball.T
    ball.T = M
    assert first[2, 3] == 0.3  # a pose read before is not changed by the next one
    assert not first.flags.writeable and not ball.T.flags.writeable


def test_set_poses_rows_read_before_are_not_changed_by_the_next_call() -> None:
    group = sc.CollisionShapeGroup(
        [sc.Sphere(0.1), sc.Capsule(0.05, 0.2), sc.Cuboid([0.1, 0.1, 0.1])]
    )
    group.T = pose((0, 0, 1), 0.4, (1, 0, 0))
    P1 = np.array([pose((1, 0, 0), 0.1 * k, (k, 0, 0)) for k in range(3)])
    P2 = np.array([pose((0, 1, 0), 0.2 * k, (0, k, 0)) for k in range(3)])
    group.set_poses(P1, check=False)
    before = [element.T for element in group]
    P1[:, 0, 3] = 99.0  # the caller's array changes: the elements do not
    group.set_poses(P2)
    for k, element in enumerate(group):
        np.testing.assert_array_equal(before[k][:3, 3], [k, 0, 0])
        np.testing.assert_array_equal(element.T, P2[k])
        np.testing.assert_allclose(element.world_T, group.T @ P2[k], atol=1e-14)
        np.testing.assert_allclose(tf_matrix(element._tf), group.T @ P2[k], atol=1e-14)
    assert P2.flags.writeable  # the caller's array is left as it was


def test_set_poses_tells_observers_added_after_an_earlier_call() -> None:
    leaf = sc.Sphere(0.1)
    group = sc.CollisionShapeGroup([leaf, sc.Sphere(0.2)])
    P = np.tile(np.eye(4), (2, 1, 1))
    group.set_poses(P)  # caches who to tell: nobody yet

    class Watcher:
        def __init__(self) -> None:
            self.changes = 0

        def _shape_changed(self, shape: object, structural: bool) -> None:
            self.changes += 1

        def _shape_admit(self, shape: object, leaves: object) -> None:
            pass

    watcher = Watcher()
    leaf._observe(watcher)
    group.set_poses(P)
    assert watcher.changes == 1
    leaf._unobserve(watcher)
    group.set_poses(P)
    assert watcher.changes == 1


# ------------------------------------------------------------------------ closed_form


def test_closed_form_answers_a_known_placement_in_both_orders() -> None:
    a, b = sc.Sphere(1.0), sc.Capsule(0.25, 2.0, pose=pose((1, 0, 0), math.pi / 2, (1.5, 0, 0)))
    # The capsule's segment runs along world y through (1.5, 0, 0): d = 1.5 - 1.0 - 0.25.
    d, p1, p2, n = _native.closed_form(0, 2, False, (1.0,), (0.25, 1.0), a._tf, b._tf)
    assert d == pytest.approx(0.25, abs=1e-15)
    np.testing.assert_allclose(p1, [1.0, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(p2, [1.25, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(n, [1.0, 0.0, 0.0], atol=1e-15)
    e, q1, q2, m = _native.closed_form(0, 2, True, (1.0,), (0.25, 1.0), b._tf, a._tf)
    assert e == d
    np.testing.assert_array_equal(q1, p2)
    np.testing.assert_array_equal(q2, p1)
    np.testing.assert_array_equal(m, -n)
    for v in (p1, p2, n, q1, q2, m):  # new arrays, each its own
        assert v.dtype == np.float64 and v.shape == (3,) and v.flags.owndata


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((0, 7, False, (1.0,), (1.0,)), TypeError, r"kind must be 0 to 5"),
        ((0, 0, False, [1.0], (1.0,)), TypeError, r"sizes must be a tuple of floats"),
        ((0, 0, False, (1.0, 2.0), (1.0,)), TypeError, r"sizes must be a tuple of floats"),
        ((0, 0, False, (1,), (1.0,)), TypeError, r"sizes must be a tuple of floats"),
        ((1, 1, False, (1.0,) * 3, (1.0,) * 3), TypeError, r"no closed form for this pair"),
        ((4, 0, False, (0.0, 0.0, 1.0, 0.0), (1.0,)), TypeError, r"no closed form for this pair"),
        (("0", 0, False, (1.0,), (1.0,)), TypeError, r"integer"),
    ],
)
def test_closed_form_refuses_bad_arguments(
    args: tuple[object, ...], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        _native.closed_form(*args, coal.Transform3s(), coal.Transform3s())  # type: ignore[arg-type, call-arg]
    with pytest.raises(TypeError, match=r"tf2 must be a coal.Transform3s, got Box"):
        _native.closed_form(0, 0, False, (1.0,), (1.0,), coal.Transform3s(), coal.Box(1, 1, 1))


# ----------------------------------------------------------------------- near_spheres


@settings(max_examples=200)
@given(
    st.integers(0, 6),
    st.integers(0, 6),
    st.integers(0, 2**32 - 1),
    st.sampled_from([-math.inf, -0.5, 0.0, 0.3, math.inf]),
)
def test_near_spheres_and_nearest_order_select_what_the_gaps_select(
    n: int, m: int, seed: int, cutoff: float
) -> None:
    from spatialcontact import query

    rng = np.random.default_rng(seed)
    ca, cb = rng.normal(size=(n, 3)), rng.normal(size=(m, 3))
    ra, rb = rng.uniform(0.0, 1.0, n), rng.uniform(0.0, 1.0, m)
    if n > 1 and m:
        ra[0] = math.inf  # an unbounded leaf (a half-space) is near everything
        # Two spheres exactly touching: the gap is 0 up to rounding, kept at cut-off 0.
        cb[-1] = ca[-1] + [ra[-1] + rb[-1], 0.0, 0.0]
    diff = ca[:, None, :] - cb[None, :, :]
    centres = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
    reach = ra[:, None] + rb[None, :]
    gap = centres - reach - 1e-12 * (centres + reach)
    want = [tuple(p) for p in np.argwhere(gap <= cutoff).tolist()]
    assert _native.near_spheres(ca, ra, cb, rb, cutoff) == want
    # nearest_order: the same pairs with their gaps, smallest first, ties in row order.
    flat = gap.ravel()
    kept = np.flatnonzero(flat <= cutoff)
    ordered = kept[np.argsort(flat[kept], kind="stable")]
    width = max(m, 1)
    gaps, rows, columns = _native.nearest_order(ca, ra, cb, rb, cutoff)
    np.testing.assert_array_equal(rows * width + columns, ordered)
    assert gaps.dtype == np.float64 and rows.dtype == columns.dtype == np.intp
    # (the sum of squares is rounded in another order than numpy's einsum: last bits only)
    np.testing.assert_allclose(gaps, flat[ordered], rtol=1e-15, atol=1e-15)
    assert callable(query._leaf_pairs) and callable(query._nearest)


def test_near_spheres_refuses_mismatched_arrays() -> None:
    c, r = np.zeros((2, 3)), np.zeros(2)
    for args in ((c, np.zeros(3), c, r), (c, r, np.zeros((2, 2)), r), (c, r, c, [0.0, 0.0])):
        with pytest.raises(TypeError, match=r"centres and radii must be float64 arrays"):
            _native.near_spheres(*args, 0.0)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _native.near_spheres(c, r, c, r, "0")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"centres and radii must be float64 arrays"):
        _native.nearest_order(c, np.zeros(3), c, r, 0.0)


# ------------------------------------------------------------------ cached pair calls


def pair_objects() -> tuple[Any, ...]:
    """A sphere (r 0.1) at x = 0.55 beside a unit box at the origin, as Coal objects."""
    g1, g2 = coal.Sphere(0.1), coal.Box(1.0, 1.0, 1.0)
    tf1, tf2 = coal.Transform3s(), coal.Transform3s()
    tf1.setTranslation(np.array([0.55, 0.0, 0.0]))
    return g1, g2, tf1, tf2


def test_collide_call_runs_the_functor_on_the_objects_it_holds() -> None:
    g1, g2, tf1, tf2 = pair_objects()
    request, result = coal.CollisionRequest(), coal.CollisionResult()
    call = _native.CollideCall(coal.ComputeCollision(g1, g2), tf1, tf2, request, result)
    assert call() == 1  # 0.05 deep
    assert result.getContact(0).penetration_depth == pytest.approx(-0.05)
    tf1.setTranslation(np.array([0.65, 0.0, 0.0]))  # moved in place: read at the next call
    assert call() == 0 and result.numContacts() == 0  # the result was cleared
    del request, result, g1, g2  # held by the call (the functor holds the geometries' pointers)
    gc.collect()
    tf1.setTranslation(np.array([0.59, 0.0, 0.0]))
    assert call() == 1


def test_distance_call_gives_the_distance_and_witness_points() -> None:
    g1, g2, tf1, tf2 = pair_objects()
    functor = coal.ComputeDistance(g1, g2)
    request, result = coal.DistanceRequest(), coal.DistanceResult()
    call = _native.DistanceCall(functor, tf1, tf2, request, result)
    tf1.setTranslation(np.array([0.85, 0.2, 0.0]))
    assert call() == pytest.approx(0.25)
    p1, p2 = call.points()
    np.testing.assert_allclose(p1, [0.75, 0.2, 0.0], atol=1e-12)
    np.testing.assert_allclose(p2, [0.5, 0.2, 0.0], atol=1e-12)
    np.testing.assert_array_equal(p1, result.getNearestPoint1())
    p1[0] = 9.0  # new arrays: the result is not changed
    assert call.points()[0][0] == pytest.approx(0.75)


@pytest.mark.parametrize(
    ("make", "position", "message"),
    [
        (_native.CollideCall, 0, "functor must be a coal.ComputeCollision, got ComputeDistance"),
        (_native.CollideCall, 1, "tf1 must be a coal.Transform3s, got Sphere"),
        (_native.CollideCall, 3, "request must be a coal.CollisionRequest, got DistanceRequest"),
        (_native.DistanceCall, 0, "functor must be a coal.ComputeDistance, got ComputeCollision"),
        (_native.DistanceCall, 2, "tf2 must be a coal.Transform3s, got NoneType"),
        (_native.DistanceCall, 4, "result must be a coal.DistanceResult, got CollisionResult"),
    ],
)
def test_pair_calls_refuse_objects_of_other_classes(make: Any, position: int, message: str) -> None:
    g1, g2, tf1, tf2 = pair_objects()
    classes = {
        _native.CollideCall: (coal.ComputeCollision, coal.CollisionRequest, coal.CollisionResult),
        _native.DistanceCall: (coal.ComputeDistance, coal.DistanceRequest, coal.DistanceResult),
    }

    def objects(call: Any) -> list[Any]:
        functor, request, result = classes[call]
        return [functor(g1, g2), tf1, tf2, request(), result()]

    args = objects(make)
    other = objects(_native.DistanceCall if make is _native.CollideCall else _native.CollideCall)
    args[position] = {1: g1, 2: None}.get(position, other[position])
    with pytest.raises(TypeError, match=message):
        make(*args)
    with pytest.raises(TypeError, match="takes 5 arguments, got 4"):
        make(*args[:4])
    with pytest.raises(TypeError, match="takes no keyword arguments"):
        make(*args, extra=1)


def test_pair_calls_take_no_arguments() -> None:
    g1, g2, tf1, tf2 = pair_objects()
    call = _native.CollideCall(
        coal.ComputeCollision(g1, g2), tf1, tf2, coal.CollisionRequest(), coal.CollisionResult()
    )
    with pytest.raises(TypeError, match="a CollideCall takes no arguments"):
        call(tf1)  # type: ignore[call-arg]


def test_a_coal_exception_in_a_pair_call_is_raised_as_boost_python_raises_it() -> None:
    # Coal refuses a negative security margin on a mesh with std::invalid_argument, which
    # Boost.Python raises as ValueError: so does the compiled call.
    mesh = sc.Mesh(sc.meshes.path("objects/sphere_5k.stl"))
    g1, g2 = mesh._geometry, coal.Sphere(0.1)
    tf1, tf2 = coal.Transform3s(), coal.Transform3s()
    functor = coal.ComputeCollision(g1, g2)
    request, result = coal.CollisionRequest(), coal.CollisionResult()
    request.security_margin = -0.1
    with pytest.raises(ValueError, match="Negative security margin") as raw:
        functor(tf1, tf2, request, result)
    with pytest.raises(ValueError, match="Negative security margin") as ours:
        _native.CollideCall(functor, tf1, tf2, request, result)()
    assert str(ours.value) == str(raw.value)


def test_shape_queries_use_the_compiled_calls_for_coal_functors() -> None:
    a, b = sc.Sphere(0.1), sc.Cuboid([1.0, 1.0, 1.0])
    M = np.eye(4)
    M[0, 3] = 0.55
    a.T = M
    assert a.iscollided(b) and a.distance(b) == pytest.approx(-0.05)
    assert type(a._collide_pairs[b._uid][0]) is _native.CollideCall
    assert type(a._distance_pairs[b._uid][0]) is _native.DistanceCall
    # Coal's functors only: the workarounds of quirks.collider are called from Python.
    h = sc.HalfSpace([0.0, 0.0, 1.0], 0.0)
    tree = sc.OcTree([[0.0, 0.0, 0.05]], 0.1)
    assert h.iscollided(tree)
    assert type(h._collide_pairs[tree._uid][0]) is not _native.CollideCall


def test_collide_rows_refuses_bad_arguments() -> None:
    rows = np.zeros((3, 3))
    with pytest.raises(TypeError, match=r"kind must be 0 \(spheres\) or 1"):
        _native.collide_rows(2, np.zeros(5), rows, True, 1.0)
    with pytest.raises(
        TypeError, match=r"params must be a C-contiguous float64 array of shape \(35,\)"
    ):
        _native.collide_rows(1, np.zeros(5), rows, True, 1.0)
    with pytest.raises(
        TypeError, match=r"params must be a C-contiguous float64 array of shape \(5,\)"
    ):
        _native.collide_rows(0, np.zeros(10)[::2], rows, True, 1.0)
    with pytest.raises(
        TypeError, match=r"rows must be a float64 array of shape \(n, 4, 4\) or \(n, 3\)"
    ):
        _native.collide_rows(0, np.zeros(5), np.zeros((3, 4)), True, 1.0)
    with pytest.raises(TypeError, match="takes 5 arguments, got 4"):
        _native.collide_rows(0, np.zeros(5), rows, True)  # type: ignore[call-arg]


def test_collide_rows_answers_spheres_and_names_the_first_bad_row() -> None:
    # Sphere a (r 0.2) at the origin, sphere b (r 0.1) at each translation: touching at 0.3.
    params = np.array([0.0, 0.0, 0.0, 0.2, 0.1])
    t = np.array([[0.29, 0.0, 0.0], [0.0, 0.31, 0.0], [0.0, 0.0, -0.3], [2.0, 0.0, 0.0]])
    hit, bad = _native.collide_rows(0, params, t, True, 1e6)
    assert hit.dtype == np.bool_ and hit.tolist() == [True, False, True, False] and bad == -1
    t[2, 1] = math.nan
    hit, bad = _native.collide_rows(0, params, t, True, 1e6)
    assert bad == 2 and hit.tolist() == [True, False, False, False]
    t[2, 1] = 0.0
    assert _native.collide_rows(0, params, t, True, 1.5)[1] == 3  # beyond the limit
    P = np.tile(np.eye(4), (4, 1, 1))
    P[:, :3, 3] = t
    P[1, :3, :3] = np.diag([1.0, 1.0, -1.0])  # a reflection: not rigid
    assert _native.collide_rows(0, params, P, True, 1e6)[1] == 1
    hit, bad = _native.collide_rows(0, params, P, False, 1e6)  # unchecked: rotations ignored
    assert bad == -1 and hit.tolist() == [True, False, True, False]
    strided = np.repeat(P, 2, axis=2)[:, :, ::2]  # a non-contiguous view of the same poses
    assert _native.collide_rows(0, params, strided, False, 1e6)[0].tolist() == hit.tolist()


# ------------------------------------------------------------------------- axis_map


def axis_map_rule(r1: list[list[float]], r2: list[list[float]], tolerance: float) -> Any:
    """The alignment rule of boxes, written out in plain floats."""
    axis = []
    for i in range(3):
        along = [abs(sum(r1[k][i] * r2[k][j] for k in range(3))) for j in range(3)]
        found = [
            j
            for j in range(3)
            if abs(along[j] - 1.0) <= tolerance
            and all(along[m] <= tolerance for m in range(3) if m != j)
        ]
        if not found:
            return None
        axis.append(found[0])
    return tuple(axis) if len(set(axis)) == 3 else None


def transform(R: np.ndarray) -> coal.Transform3s:
    tf = coal.Transform3s()
    tf.setRotation(R)
    return tf


@settings(max_examples=300)
@given(
    rigid_poses,
    st.permutations([0, 1, 2]),
    st.lists(st.sampled_from([1.0, -1.0]), min_size=3, max_size=3),
    st.sampled_from([0.0, 1e-12, 1e-9, 0.3]),
)
def test_axis_map_is_the_rule_of_boxes(
    M: np.ndarray, order: list[int], signs: list[float], turn: float
) -> None:
    # A frame, and the same frame with its axes permuted and flipped (aligned), then turned
    # about its own first axis by `turn` (aligned within 1e-10 only for the smallest turns).
    R1 = M[:3, :3]
    R2 = R1[:, order] * np.array(signs)
    R2 = R2 @ rotation(np.array([1.0, 0.0, 0.0]), turn)
    tf1, tf2 = transform(R1), transform(R2)
    got = _native.axis_map(tf1, tf2, 1e-10)
    assert got == axis_map_rule(tf1.getRotation().tolist(), tf2.getRotation().tolist(), 1e-10)
    if turn <= 1e-12:
        assert got == tuple(order.index(i) for i in range(3))
    if turn == 0.3:
        assert got is None


def test_axis_map_refuses_what_is_not_a_transform() -> None:
    with pytest.raises(TypeError, match=r"tf2 must be a coal\.Transform3s, got Box"):
        _native.axis_map(coal.Transform3s(), coal.Box(1, 1, 1), 1e-10)
    with pytest.raises(TypeError):
        _native.axis_map(coal.Transform3s(), coal.Transform3s(), "x")  # type: ignore[arg-type]


def test_place_objects_sets_each_transform_and_world_box() -> None:
    objects = (
        coal.CollisionObject(coal.Box(1.0, 2.0, 4.0)),
        coal.CollisionObject(coal.Sphere(0.5)),
    )
    tfs = (coal.Transform3s(), coal.Transform3s())
    tfs[0].setTranslation(np.array([1.0, 0.0, 0.0]))
    tfs[1].setTranslation(np.array([0.0, -3.0, 0.0]))
    _native.place_objects(objects, tfs)
    np.testing.assert_array_equal(objects[0].getTranslation(), [1.0, 0.0, 0.0])
    box = objects[0].getAABB()
    np.testing.assert_allclose(box.min_, [0.5, -1.0, -2.0])
    np.testing.assert_allclose(box.max_, [1.5, 1.0, 2.0])
    np.testing.assert_allclose(objects[1].getAABB().min_, [-0.5, -3.5, -0.5])
    _native.place_objects((), ())


def test_place_objects_changes_nothing_when_an_entry_is_wrong() -> None:
    objects = (coal.CollisionObject(coal.Sphere(0.5)), coal.CollisionObject(coal.Sphere(0.5)))
    moved = coal.Transform3s()
    moved.setTranslation(np.array([5.0, 0.0, 0.0]))
    with pytest.raises(TypeError, match=r"tfs entries must be a coal\.Transform3s, got Sphere"):
        _native.place_objects(objects, (moved, coal.Sphere(1.0)))
    with pytest.raises(
        TypeError, match=r"objects entries must be a coal\.CollisionObject, got Transform3s"
    ):
        _native.place_objects((objects[0], moved), (moved, moved))
    with pytest.raises(TypeError, match="objects and tfs must be tuples of the same length"):
        _native.place_objects(objects, (moved,))
    with pytest.raises(TypeError, match="objects and tfs must be tuples of the same length"):
        _native.place_objects(list(objects), [moved, moved])  # type: ignore[arg-type]
    np.testing.assert_array_equal(objects[0].getTranslation(), [0.0, 0.0, 0.0])


def test_nearest_pair_is_the_first_of_nearest_order() -> None:
    rng = np.random.default_rng(3)
    for n, m in ((1, 1), (7, 200), (3, 5)):
        ca, cb = rng.uniform(-1, 1, (n, 3)), rng.uniform(-1, 1, (m, 3))
        ra, rb = rng.uniform(0, 0.2, n), rng.uniform(0, 0.2, m)
        for cutoff in (math.inf, 0.3, -10.0):
            gaps, rows, columns = _native.nearest_order(ca, ra, cb, rb, cutoff)
            first = _native.nearest_pair(ca, ra, cb, rb, cutoff)
            assert first == ((int(rows[0]), int(columns[0])) if len(gaps) else None)
    # a tie goes to the first pair in row order, as in nearest_order
    c, r = np.zeros((2, 3)), np.zeros(2)
    assert _native.nearest_pair(c, r, c, r, 1.0) == (0, 0)


# ------------------------------------------------------------ robots: chains and bounds


def test_chain_poses_compose_the_joint_transforms() -> None:
    # Two revolute joints about z, 1 m apart along x (the second hangs from the first), and a
    # prismatic joint along y hanging from the root: R = I + sin(v) K + (1 - cos(v)) K^2.
    K = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    zero = np.zeros(9)
    R = np.stack([np.eye(3).ravel()] * 3)
    A = np.stack([K.ravel(), K.ravel(), zero])
    B = np.stack([(K @ K).ravel(), (K @ K).ravel(), zero])
    t = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    slide = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    values = np.array([[math.pi / 2, math.pi / 2, 0.5]])
    out = np.empty((1, 4, 4, 4))
    _native.chain_poses(values, R, A, B, t, slide, (0, 1, 0), out)
    np.testing.assert_allclose(out[0, 0], np.eye(4))
    np.testing.assert_allclose(out[0, 1, :3, 3], [0.0, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(out[0, 2, :3, 3], [0.0, 1.0, 0.0], atol=1e-15)  # the elbow
    np.testing.assert_allclose(out[0, 2, :3, 0], [-1.0, 0.0, 0.0], atol=1e-15)  # turned 180°
    np.testing.assert_allclose(out[0, 3, :3, 3], [0.0, 0.5, 2.0], atol=1e-15)
    with pytest.raises(TypeError, match="parents\\[k\\] must be an int from 0 to k"):
        _native.chain_poses(values, R, A, B, t, slide, (0, 2, 0), out)
    with pytest.raises(TypeError, match="parents must be a tuple of m ints"):
        _native.chain_poses(values, R, A, B, t, slide, (0, 1), out)
    with pytest.raises(TypeError, match="out must be a writable C-contiguous"):
        _native.chain_poses(values, R, A, B, t, slide, (0, 1, 0), np.empty((1, 3, 4, 4)))


def test_motion_bounds_are_the_sphere_gaps() -> None:
    # Two bodies: the root, and one 1 m up; a part on each (radius 0.1 and 0.2, centred 0.5 m
    # out along x in its body), one pair, and a unit box at x = 3.
    T = np.tile(np.eye(4), (2, 2, 1, 1))
    T[:, 1, 2, 3] = 1.0
    T[1, 1, :3, :3] = rotation(np.array([0.0, 0.0, 1.0]), math.pi)  # body 1 turned at sample 1
    centre = np.array([[0.5, 0.0, 0.0], [0.5, 0.0, 0.0]])
    radius = np.array([0.1, 0.2])
    box = (np.eye(3).reshape(1, 9), np.array([[3.0, 0.0, 0.0]]), np.full((1, 3), 0.5))
    value = _native.motion_bounds(
        T, (0, 1), centre, (0,), (1,), radius[:1] + radius[1:], radius, *box
    )
    assert value.shape == (2, 3)
    np.testing.assert_allclose(value[0], [1.0 - 0.3, 2.0 - 0.1, math.hypot(2.0, 0.5) - 0.2])
    np.testing.assert_allclose(
        value[1], [math.hypot(1.0, 1.0) - 0.3, 2.0 - 0.1, math.hypot(3.0, 0.5) - 0.2]
    )
    no_boxes = _native.motion_bounds(
        T, (0, 1), centre, (0,), (1,), radius[:1] + radius[1:], radius, None, None, None
    )
    np.testing.assert_array_equal(no_boxes, value[:, :1])
    with pytest.raises(TypeError, match="body must hold ints from 0 to 1"):
        _native.motion_bounds(T, (0, 2), centre, (0,), (1,), radius[:1], radius, *box)
    with pytest.raises(TypeError, match="pair_a and pair_b of one length"):
        _native.motion_bounds(T, (0, 1), centre, (0,), (1, 0), radius[:1], radius, *box)


# ------------------------------------------------------------ scenes: the small tier


class Probe:
    """A stand-in shape: its pair query is a given table, and it records its calls."""

    def __init__(self, name: str, touching: set[tuple[str, str]], calls: list[str]) -> None:
        self.name = name
        self.touching = touching
        self.calls = calls

    def iscollided(self, other: Probe) -> bool:
        self.calls.append(f"{self.name}{other.name}")
        return (self.name, other.name) in self.touching


def tier_of(
    centres: list[tuple[float, float, float]],
    radii: list[float],
    bodies: tuple[int, ...],
    shapes: tuple[Any, ...],
) -> tuple[Any, list[coal.Transform3s]]:
    tfs = [coal.Transform3s() for _ in centres]
    tier = _native.SphereTier(
        tuple(tfs), np.zeros((len(centres), 3)), np.array(radii, dtype=float), bodies,
        shapes, tuple(s.name for s in shapes),
    )  # fmt: skip
    for tf, c in zip(tfs, centres, strict=True):
        tf.setTranslation(np.array(c, dtype=float))
    return tier, tfs


def test_sphere_tier_asks_the_pair_query_of_near_leaves_only() -> None:
    # Bodies 0 (leaves a, b), 1 (c) and 2 (d): a at the origin, b 3 m up x, c 1.5 m up x,
    # d 10 m away; radii 1, 1, 0.6, 1. Spheres meet: a-c (1.5 <= 1.6), b-c (1.5 <= 1.6); a-b
    # (3 > 2) do not; d meets nothing.
    calls: list[str] = []
    touching = {("a", "c")}
    shapes = tuple(Probe(n, touching, calls) for n in "abcd")
    tier, _ = tier_of(
        [(0, 0, 0), (3, 0, 0), (1.5, 0, 0), (10, 0, 0)], [1, 1, 0.6, 1], (0, 0, 1, 2), shapes
    )
    assert tier.touching(1, False) == [("a", "c")]
    assert sorted(calls) == ["ac", "bc"]  # the earlier body's leaf asks
    calls.clear()
    assert tier.touching(0, False) == [("a", "c")]
    assert sorted(calls) == ["ac", "bc"]
    calls.clear()
    assert tier.touching(0, True) == [("a", "c")]  # a-b: spheres apart, not asked
    assert sorted(calls) == ["ac", "bc"]
    calls.clear()
    assert tier.touching(2, True) == [] and calls == []


def test_sphere_tier_reads_the_transforms_when_asked() -> None:
    calls: list[str] = []
    shapes = tuple(Probe(n, {("a", "b")}, calls) for n in "ab")
    tier, tfs = tier_of([(0, 0, 0), (5, 0, 0)], [1, 1], (0, 1), shapes)
    assert tier.touching(0, False) == []
    tfs[1].setTranslation(np.array([2.0, 0.0, 0.0]))  # spheres just touch: asked
    assert tier.touching(0, False) == [("a", "b")]
    tfs[1].setTranslation(np.array([2.0 + 1e-6, 0.0, 0.0]))
    assert tier.touching(0, False) == []
    # the local centre is placed by the rotation: (1, 0, 0) turned about z is (0, 1, 0)
    tier = _native.SphereTier(
        tuple(tfs), np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]), np.array([0.5, 0.5]),
        (0, 1), shapes, ("a", "b"),
    )  # fmt: skip
    tfs[0].setRotation(rotation(np.array([0.0, 0.0, 1.0]), math.pi / 2))
    tfs[1].setTranslation(np.array([0.0, 2.0, 0.0]))
    assert tier.touching(1, False) == [("a", "b")]
    tfs[1].setTranslation(np.array([1.0, 0.0, 0.0]))
    assert tier.touching(1, False) == []


def test_sphere_tier_always_asks_an_unbounded_leaf() -> None:
    calls: list[str] = []
    shapes = tuple(Probe(n, {("a", "b")}, calls) for n in "ab")
    tier, _ = tier_of([(0, 0, 0), (1e5, 0, 0)], [math.inf, 1], (0, 1), shapes)
    assert tier.touching(1, False) == [("a", "b")]


def test_sphere_tier_is_the_scene_answer() -> None:
    # The tier of a scene's broadphase against every pair query, on random placements.
    rng = np.random.default_rng(5)
    shapes: list[Any] = [sc.Sphere(0.3), sc.Cuboid([0.4, 0.2, 0.6]), sc.Capsule(0.1, 0.5)]
    shapes += [sc.Cylinder(0.2, 0.4), sc.Sphere(0.1)]
    group = sc.CollisionShapeGroup([sc.Sphere(0.2), sc.Cuboid([0.3] * 3)])
    scene = sc.Scene()
    for k, shape in enumerate([*shapes, group]):
        scene.add(shape, f"s{k}", self_collision=shape is group)
    leaves = [*shapes, *group]
    broadphase = scene._broadphase
    for _ in range(200):
        for shape in leaves:
            axis, angle = tuple(rng.normal(size=3)), rng.uniform(-3, 3)
            shape.T = pose(axis, angle, tuple(rng.uniform(-0.6, 0.6, 3)))
        scene.collisions()  # every body now moving, the tier up to date
        tier, number = broadphase._compiled or broadphase._compile_tier()
        body_of = {shape: broadphase.leaf_of(shape).body for shape in leaves}  # type: ignore[union-attr]
        for body, k in number.items():
            got = {(a.shape, b.shape) for a, b in tier.touching(k, body.self_collision)}
            want = set()
            for i, a in enumerate(leaves):
                for b in leaves[i + 1 :]:
                    mine = body in (body_of[a], body_of[b])
                    same = body_of[a] is body_of[b]
                    if mine and (not same or body.self_collision) and a.iscollided(b):
                        want.add((a, b))
            assert got == want


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([], np.zeros((0, 3)), np.zeros(0), (), (), ()), "tfs must be a tuple"),
        (((), np.zeros((0, 3)), np.zeros(0), (), [], ()), "shapes must be a tuple"),
        (((coal.Transform3s(),), np.zeros((1, 3)), np.zeros(1), (0,), (), ()),
         "tfs, shapes and items must have one entry per leaf"),
        (((coal.Transform3s(),), np.zeros((2, 3)), np.zeros(1), (0,), (1,), (1,)),
         "centres must be a float64 array of shape \\(n, 3\\)"),
        (((coal.Transform3s(),), np.zeros((1, 3)), np.zeros(1, dtype=np.float32), (0,), (1,),
          (1,)), "radii must be a float64 array of shape \\(n,\\)"),
        (((coal.Box(1, 1, 1),), np.zeros((1, 3)), np.zeros(1), (0,), (1,), (1,)),
         "tfs\\[i\\] must be a coal.Transform3s, got Box"),
        (((coal.Transform3s(),), np.full((1, 3), np.nan), np.zeros(1), (0,), (1,), (1,)),
         "centres must be finite and radii at least 0"),
        (((coal.Transform3s(),), np.zeros((1, 3)), np.full(1, -1.0), (0,), (1,), (1,)),
         "centres must be finite and radii at least 0"),
        (((coal.Transform3s(),), np.zeros((1, 3)), np.zeros(1), (1,), (1,), (1,)),
         "bodies must hold ints from 0 to 0"),
        (((coal.Transform3s(),) * 2, np.zeros((2, 3)), np.zeros(2), (1, 0), (1, 1), (1, 1)),
         "bodies must number the leaves' bodies 0, 1, ... in order"),
        (((coal.Transform3s(),) * 3, np.zeros((3, 3)), np.zeros(3), (0, 2, 2), (1,) * 3, (1,) * 3),
         "bodies must number the leaves' bodies 0, 1, ... in order"),
        (((coal.Transform3s(),) * 2, np.zeros((2, 3)), np.zeros(2), (0,), (1, 1), (1, 1)),
         "bodies must have one entry per leaf"),
    ],
)  # fmt: skip
def test_sphere_tier_refuses_bad_arguments(args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        _native.SphereTier(*args)


def test_sphere_tier_touching_refuses_a_body_it_does_not_have() -> None:
    tier, _ = tier_of([(0, 0, 0)], [1], (0,), (Probe("a", set(), []),))
    with pytest.raises(TypeError, match="body must be an int from 0 to 0"):
        tier.touching(1, False)
    with pytest.raises(TypeError, match="touching takes 2 arguments, got 1"):
        tier.touching(0)
    empty = _native.SphereTier((), np.zeros((0, 3)), np.zeros(0), (), (), ())
    with pytest.raises(TypeError, match="body must be an int from 0 to -1"):
        empty.touching(0, False)


def test_sphere_tier_raises_what_a_pair_query_raises() -> None:
    class Failing(Probe):
        def iscollided(self, other: Probe) -> bool:
            raise ValueError(f"no answer for {self.name}{other.name}")

    shapes = (Failing("a", set(), []), Probe("b", set(), []))
    tier, _ = tier_of([(0, 0, 0), (0, 0, 0)], [1, 1], (0, 1), shapes)
    with pytest.raises(ValueError, match="no answer for ab"):
        tier.touching(1, False)
