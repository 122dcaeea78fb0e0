"""Input that crashes Coal (a segfault) must be refused: each case runs in a child process.

A crash then fails the test (a non-zero return code) instead of killing pytest. Each child
prints what happened; the test checks the return code and the error text printed.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

PRELUDE = """
import math
import numpy as np
import spatialcontact as sc


def trans(x, y=0.0, z=0.0):
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def attempt(make):
    try:
        made = make()
    except (ValueError, TypeError) as error:
        print(f"REFUSED {type(error).__name__}: {error}", flush=True)
        return None
    print("ACCEPTED", flush=True)
    return made
"""

TET = "np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])"
CUBE = "np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])"


def run(code: str) -> str:
    """Run ``code`` (after :data:`PRELUDE`) in a fresh interpreter; return what it printed.

    Fails the test when the child does not exit normally (a segfault gives -11 or 139).
    """
    completed = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert completed.returncode == 0, (
        f"child exited with {completed.returncode}\nstdout:\n{completed.stdout}\n"
        f"stderr:\n{completed.stderr}"
    )
    return completed.stdout


# ------------------------------------------------------------------------------ octrees


def test_octree_points_beyond_the_key_range() -> None:
    out = run(
        """
        tree = attempt(lambda: sc.OcTree([[0.05, 0.05, 0.05], [3276.8, 0.0, 0.0]], 0.1))
        assert tree is None
        edges = [[0.05, 0.05, 0.05], [-3276.8, 0.0, 0.0], [3276.79, 0.0, 0.0]]
        tree = attempt(lambda: sc.OcTree(edges, 0.1))
        print("distance", tree.distance(sc.Sphere(0.5, pose=trans(0.05, 0.05, 10.0))))
        """
    )
    assert (
        "REFUSED InvalidMeshError: points must lie in [-3276.8, 3276.8) m on each axis for "
        "resolution 0.1 (an octree holds 65536 cells per axis), got 3276.8 at row 1" in out
    )
    assert "ACCEPTED" in out and "distance 9.4" in out


def test_octree_too_fine_for_its_points() -> None:
    out = run(
        """
        attempt(lambda: sc.OcTree([[0.1, 0.0, 0.0]], 1e-6))
        attempt(lambda: sc.OcTree([[1.0, 0.0, 0.0]], 1e-5))
        tree = sc.OcTree([[0.05, 0.05, 0.05], [5.0, 0.0, 0.0]], 0.1)
        for bad in (1e-300, 1e-5, 0.0):
            def change(bad=bad):
                tree.resolution = bad
            attempt(change)
        print("resolution", tree.resolution, "cells", len(tree.cells))
        print("distance", tree.distance(sc.Sphere(0.25, pose=trans(0.05, 0.05, 1.0))))
        """
    )
    assert "REFUSED InvalidShapeError: resolution is too small, got 1e-06 (sizes must lie" in out
    assert "REFUSED InvalidMeshError: points must lie in [-0.32768, 0.32768) m" in out
    assert "REFUSED InvalidShapeError: resolution is too small, got 1e-300" in out
    assert "REFUSED InvalidMeshError: resolution 1e-05 is too fine for these points" in out
    assert "REFUSED InvalidShapeError: resolution must be positive, got 0.0" in out
    assert "resolution 0.1 cells 2" in out and "distance 0.65" in out


def test_an_empty_octree_is_refused_even_past_the_reach_check() -> None:
    # with the reach check switched off, octomap drops the point and the tree is empty: the
    # check of the built tree refuses it before any query can segfault
    out = run(
        """
        import spatialcontact.mesh as mesh

        mesh._check_reach = lambda *args: None
        tree = attempt(lambda: sc.OcTree([[5000.0, 0.0, 0.0]], 0.1))
        assert tree is None
        tree = sc.OcTree([[0.05, 0.05, 0.05]], 0.1)
        def far():
            tree.points = [[5000.0, 0.0, 0.0]]
        attempt(far)
        ball = sc.Sphere(0.25, pose=trans(0.05, 0.05, 1.0))
        print("kept", tree.points.tolist(), tree.distance(ball))
        """
    )
    assert (
        out.count("REFUSED InvalidMeshError: the octree of 1 points at resolution 0.1 is empty")
        == 2
    )
    assert "kept [[0.05, 0.05, 0.05]] 0.65" in out


# ---------------------------------------------------------------------------- convex hulls


@pytest.mark.parametrize(
    ("points", "message"),
    [
        (f"{TET} + 2e14", "points must lie within ±1e+06 m on each axis, got 2e+14 at row 0"),
        (f"{TET} * 1e77", "points must lie within ±1e+06 m on each axis, got 1e+77 at row 1"),
        (f"{TET} * 1e300 * 1e300", "points must be finite, got inf at row 1"),
        # 10 µm across, one ulp thick, a million metres out: passed the old coplanarity check
        (
            "np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.3, 0.3, 1e-5]]) * 1e-5 + (1e6 - 1e-4)",
            "points must include 4 points that are not coplanar",
        ),
        # 1 m across, 20 nm thick: flatter than Coal's hull code survives (about 3e-8)
        (f"{CUBE} * [1.0, 1.0, 2e-8]", "points must include 4 points that are not coplanar"),
    ],
)
def test_hull_input_that_crashes_coal_is_refused(points: str, message: str) -> None:
    out = run(
        f"""
        hull = attempt(lambda: sc.ConvexHull({points}))
        assert hull is None
        """
    )
    assert f"REFUSED InvalidMeshError: {message}" in out


def test_hull_setter_refuses_and_keeps_the_old_hull() -> None:
    out = run(
        f"""
        hull = sc.ConvexHull({TET})
        def far():
            hull.points = {TET} + 2e14
        attempt(far)
        print("distance", hull.distance(sc.Sphere(0.5, pose=trans(0.2, 0.2, -2.0))))
        """
    )
    assert "REFUSED InvalidMeshError: points must lie within" in out and "distance 1.5" in out


@pytest.mark.parametrize(
    ("points", "expected"),
    [
        # just inside the limits: 1e-6 of the extent thick, and 1e-12 of the farthest coordinate
        (f"{CUBE} * [1.0, 1.0, 1.01e-6]", "ACCEPTED"),
        (f"{CUBE} * [1.0, 1.0, 1.01e-6] + 1e6 - 1.0", "ACCEPTED"),
        (f"{CUBE} * [1e-5, 1e-5, 1.1e-6] + 1e6 - 1e-5", "ACCEPTED"),
        (f"{CUBE} * 1e-5 - 1e6 + 1e-5", "ACCEPTED"),
        (f"{CUBE} * 1e6", "ACCEPTED"),
        # just outside them
        (f"{CUBE} * [1.0, 1.0, 0.99e-6]", "REFUSED"),
        (f"{CUBE} * [1e-5, 1e-5, 0.99e-6] + 1e6 - 1e-5", "REFUSED"),
    ],
)
def test_hull_input_at_the_edges_does_not_crash(points: str, expected: str) -> None:
    out = run(
        f"""
        hull = attempt(lambda: sc.ConvexHull({points}))
        if hull is not None:
            centre = hull.points.mean(axis=0)
            side = float(np.ptp(hull.points, axis=0).max())
            # a sphere a quarter side off the hull's face, on the side of the origin
            r = max(side / 8, 1e-5)
            inwards = -math.copysign(1.0, centre[0]) if abs(centre[0]) > side else 1.0
            x = centre[0] + inwards * (0.75 * side + r)
            ball = sc.Sphere(r, pose=trans(x, centre[1], centre[2]))
            # Coal's GJK is good to about 1e-6 m (see MIN_SIZE)
            error = abs(hull.distance(ball) - 0.25 * side)
            print("distance", "right" if error <= 1.5e-6 + 1e-6 * side else f"off by {{error}}")
        """
    )
    assert out.startswith(expected)
    if expected == "ACCEPTED":
        assert "distance right" in out


def test_random_hulls_near_the_edges_do_not_crash() -> None:
    # many random point clouds at the far corners of the range, at the smallest and largest
    # extents and as flat as accepted: each is refused with an error or builds and answers
    out = run(
        """
        rng = np.random.default_rng(7)
        built = refused = 0
        for i in range(400):
            n = int(rng.integers(4, 40))
            extent = 10.0 ** rng.uniform(-5, 6)
            cloud = rng.normal(size=(n, 3))
            cloud *= [1.0, 1.0, 10.0 ** rng.uniform(-8, 0)]
            cloud *= extent / max(float(np.ptp(cloud, axis=0).max()), 1e-300)
            corner = rng.choice([-1.0, 0.0, 1.0], size=3) * (1e6 - extent)
            try:
                hull = sc.ConvexHull(cloud + corner)
            except sc.InvalidMeshError:
                refused += 1
                continue
            built += 1
            centre = hull.points.mean(axis=0)
            d = hull.distance(sc.Sphere(extent, pose=trans(*(centre * (1 - 4 * extent / 1e6)))))
            assert math.isfinite(d)
        print("built", built, "refused", refused)
        """
    )
    built = int(out.split()[1])
    assert built > 100, out


# ---------------------------------------------------------------------------------- meshes


def test_meshes_scaled_out_of_range_are_refused() -> None:
    out = run(
        """
        import trimesh

        box = trimesh.creation.box(extents=[1.0, 1.0, 1.0])
        for scale in (1e-90, 1e100):
            attempt(lambda: sc.Mesh.from_trimesh(box, scale=scale))
        mesh = sc.Mesh.from_trimesh(box)
        def grow():
            mesh.scale = 1e100
        attempt(grow)
        print("inside", mesh.iscollided(sc.Sphere(0.1)), mesh.scale.tolist())
        """
    )
    assert "REFUSED InvalidMeshError: scale 1e-90 makes the mesh 1e-90 m across" in out
    assert "REFUSED InvalidMeshError: scale 1e+100 puts vertices 5e+99 m from the origin" in out
    assert "inside False [1.0, 1.0, 1.0]" in out
