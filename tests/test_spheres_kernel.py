"""The sphere kernel's motion checks against its configuration checks, self-collision
buffers (cuRobo's ``self_collision_buffer``) and point clouds tested as points."""

from __future__ import annotations

import math
import pickle
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_spheres import every_kind, pose, shelf, short_motions

from spatialcontact import Cuboid, OcTree, Scene, meshes
from spatialcontact.errors import InvalidArgumentError, RobotModelError
from spatialcontact.robot import RobotModel
from spatialcontact.spheres import SphereModel, SphereRobotModel, kernel, reference
from spatialcontact.spheres.packing import CLOUD, Obstacles, Robot

PANDA = meshes.path("panda")
TESTS = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def model() -> SphereModel:
    panda = RobotModel.from_urdf(PANDA / "panda.urdf", srdf=PANDA / "panda.srdf")
    return panda.spheres(count=6)


def sphere_robot(model: SphereModel) -> SphereRobotModel:
    robot = RobotModel.from_urdf(
        PANDA / "panda.urdf", srdf=PANDA / "panda.srdf", geometry="spheres", spheres=model
    )
    assert isinstance(robot, SphereRobotModel)
    return robot


@pytest.fixture(scope="module")
def spheres(model: SphereModel) -> SphereRobotModel:
    return sphere_robot(model)


@pytest.fixture(scope="module")
def buffered(model: SphereModel) -> SphereRobotModel:
    buffer = {"panda_hand": 0.03, "panda_link7": 0.02, "panda_link2": -0.01, "panda_link4": 0.015}
    return sphere_robot(replace(model, self_collision_buffer=buffer))


def arrays(robot: SphereRobotModel, scene: Scene | None) -> tuple[Robot, Obstacles]:
    return robot._kernel_robot(), robot._kernel_scene(scene)


def check_codes(r: Robot, o: Obstacles, Q: np.ndarray) -> np.ndarray:
    out: np.ndarray = kernel.check_many(
        np.ascontiguousarray(Q), r.parent, r.mimic, r.joints, r.spheres, r.link_start,
        r.links, r.pairs, o.kind, o.bound, o.data, o.cloud, o.grid, o.cells,
    )  # fmt: skip
    return out


def discrete_codes(
    r: Robot, o: Obstacles, Q0: np.ndarray, Q1: np.ndarray, resolution: float
) -> np.ndarray:
    out: np.ndarray = kernel.motions_discrete(
        np.ascontiguousarray(Q0), np.ascontiguousarray(Q1), resolution, r.parent, r.mimic,
        r.joints, r.spheres, r.link_start, r.links, r.pairs, r.reach, r.chain, r.span, r.axes,
        o.kind, o.bound, o.data, o.cloud, o.grid, o.cells,
    )  # fmt: skip
    return out


def bound_codes(r: Robot, o: Obstacles, Q0: np.ndarray, Q1: np.ndarray, tol: float) -> np.ndarray:
    out: np.ndarray = kernel.motions_bound(
        np.ascontiguousarray(Q0), np.ascontiguousarray(Q1), tol, r.parent, r.mimic, r.joints,
        r.spheres, r.link_start, r.links, r.pairs, r.reach, r.chain, r.span, r.axes, o.kind,
        o.bound, o.data, o.cloud, o.grid, o.cells,
    )  # fmt: skip
    return out


def stepped_codes(
    r: Robot, o: Obstacles, Q0: np.ndarray, Q1: np.ndarray, resolution: float
) -> list[int]:
    """The discrete motion codes from check_many on every step (HIT if any, else UNSURE if
    any, else FREE), the steps computed as the kernel does."""
    out = []
    for q0, q1 in zip(Q0, Q1, strict=True):
        largest = float(np.abs((q1 - q0) @ r.mimic[:-1]).max())
        steps = max(math.ceil(largest / resolution), 1)
        path = np.array([q0 + (s / steps) * (q1 - q0) for s in range(steps + 1)])
        codes = set(check_codes(r, o, path).tolist())
        out.append(kernel.HIT if kernel.HIT in codes else max(codes))
    return out


# ----------------------------------------------------------------------------- motions


@pytest.mark.parametrize(("world", "resolution"), [("shelf", 0.04), ("every kind", 0.04),
                                                  ("every kind", 0.45)])  # fmt: skip
def test_discrete_motions_are_exactly_the_codes_of_their_steps(
    spheres: SphereRobotModel, world: str, resolution: float
) -> None:
    """Motions of up to 1.6 rad: cut into up to 5 pieces, or (at 0.45 rad) as many as
    their steps."""
    scene = shelf() if world == "shelf" else every_kind()
    r, o = arrays(spheres, scene)
    Q0, Q1 = short_motions(spheres, 120, 31, 0.8)
    Q1[::2] = np.clip(Q0[::2] + 2.0 * (Q1[::2] - Q0[::2]), *spheres.limits.T)
    codes = discrete_codes(r, o, Q0, Q1, resolution)
    assert codes.tolist() == stepped_codes(r, o, Q0, Q1, resolution)
    assert {0, 1} <= set(codes.tolist())
    if world == "every kind":
        assert kernel.UNSURE in codes.tolist()


def test_the_bound_proves_no_motion_its_steps_find_touching(spheres: SphereRobotModel) -> None:
    r, o = arrays(spheres, every_kind())
    Q0, Q1 = short_motions(spheres, 150, 8, 0.7)
    proved = bound_codes(r, o, Q0, Q1, 1e-3)
    fine = discrete_codes(r, o, Q0, Q1, 0.002)
    assert not ((proved == kernel.FREE) & (fine != kernel.FREE)).any()
    assert not ((proved != kernel.HIT) & (fine == kernel.HIT)).any()  # never a missed hit
    assert (proved == kernel.FREE).sum() >= 0.8 * (fine == kernel.FREE).sum() > 0


def grazing(
    robot: SphereRobotModel, offset: float, q0: Any = None, q1: Any = None
) -> tuple[Any, Any, Any, Any]:
    """A motion (by default turning joint 1 by 0.6 rad) and a half-space (robot base frame)
    ``offset`` beyond the farthest x the spheres reach on it; no self pairs are checked."""
    r = robot._kernel_robot()
    if q0 is None:
        q0 = robot.neutral.copy()
        q1 = q0.copy()
        q1[0] += 0.6
    t = np.linspace(0.0, 1.0, 20001)[:, None]
    C = reference.sphere_centres(r, q0 + t * (q1 - q0))
    far = float((C[..., 0] + r.spheres[:, 3]).max())
    scene = Scene()
    scene.add(Cuboid([0.1, 0.1, 0.1], pose=pose(3.0, 3.0, 3.0)), "far")
    o = robot._kernel_scene(scene)
    o = replace(o, kind=np.array([4]), bound=np.array([[0.0, 0.0, 0.0, math.inf]]),
                data=np.array([[-1.0, 0.0, 0.0, -(far + offset)] + [0.0] * 12]))  # fmt: skip
    return replace(r, pairs=np.zeros((0, 2), dtype=np.int64)), o, q0[None], q1[None]


def test_a_motion_past_a_half_space_is_free_clear_and_hit_when_crossing(
    spheres: SphereRobotModel,
) -> None:
    r, o, Q0, Q1 = grazing(spheres, 0.01)
    assert bound_codes(r, o, Q0, Q1, 1e-3).tolist() == [kernel.FREE]
    r, o, Q0, Q1 = grazing(spheres, -0.01)
    assert bound_codes(r, o, Q0, Q1, 1e-3).tolist() == [kernel.HIT]
    assert discrete_codes(r, o, Q0, Q1, 0.02).tolist() == [kernel.HIT]


@pytest.mark.parametrize("seed", range(6))
def test_the_bound_is_sound_at_the_edge_of_the_swept_spheres(
    spheres: SphereRobotModel, seed: int
) -> None:
    """Every joint moves: a half-space 2 mm inside the farthest x the spheres sweep is never
    passed, one 1 cm beyond it is proved clear."""
    Q0, Q1 = short_motions(spheres, 1, seed, 1.0)
    r, o, A, B = grazing(spheres, -0.002, Q0[0], Q1[0])
    assert bound_codes(r, o, A, B, 1e-3).tolist() == [kernel.HIT]
    r, o, A, B = grazing(spheres, 0.01, Q0[0], Q1[0])
    assert bound_codes(r, o, A, B, 1e-3).tolist() == [kernel.FREE]


def test_a_grazing_motion_with_a_tiny_tolerance_ends_as_a_hit() -> None:
    """The gap closes to 0 at one instant: no sample proves the pairs near it apart, so the
    halving stops at MAX_DEPTH (in a child process: a stack overrun would crash it)."""
    code = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(TESTS)!r})
        from test_spheres_kernel import PANDA, bound_codes, grazing, sphere_robot
        from spatialcontact.robot import RobotModel
        robot = sphere_robot(RobotModel.from_urdf(PANDA / "panda.urdf").spheres(count=6))
        r, o, Q0, Q1 = grazing(robot, 0.0)
        print(bound_codes(r, o, Q0, Q1, 1e-300)[0], bound_codes(r, o, Q0, Q1, 1e-3)[0])
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(kernel.HIT), str(kernel.HIT)]


# ----------------------------------------------------------------------------- reference


def scene_of(world: str) -> Scene | None:
    return {"shelf": shelf(), "every kind": every_kind(), "none": None}[world]


@pytest.mark.parametrize(
    ("world", "length", "resolution"),
    [("shelf", 1.0, 0.02), ("shelf", 0.4, 0.05), ("every kind", 1.0, 0.02),
     ("every kind", 0.7, 0.3), ("none", 1.0, 0.02)],
)  # fmt: skip
def test_discrete_motions_equal_the_numpy_reference(
    spheres: SphereRobotModel, world: str, length: float, resolution: float
) -> None:
    """Every step tested in numpy, no cull and no skip: the kernel's answers exactly."""
    r, o = arrays(spheres, scene_of(world))
    Q0, Q1 = short_motions(spheres, 60, 41, length)
    codes = discrete_codes(r, o, Q0, Q1, resolution)
    assert codes.tolist() == reference.motions_discrete(r, o, Q0, Q1, resolution).tolist()
    assert {kernel.FREE, kernel.HIT} <= set(codes.tolist())


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    length=st.floats(0.01, 1.5),
    resolution=st.sampled_from([0.01, 0.02, 0.07, 0.3]),
)
def test_discrete_motions_equal_the_reference_on_any_motions(
    spheres: SphereRobotModel, seed: int, length: float, resolution: float
) -> None:
    r, o = arrays(spheres, shelf())
    Q0, Q1 = short_motions(spheres, 6, seed, length)
    expected = reference.motions_discrete(r, o, Q0, Q1, resolution)
    assert discrete_codes(r, o, Q0, Q1, resolution).tolist() == expected.tolist()


def half_space_beyond(robot: SphereRobotModel, x: float) -> Obstacles:
    """One half-space holding the points of the robot's base frame beyond ``x``."""
    scene = Scene()
    scene.add(Cuboid([0.1, 0.1, 0.1], pose=pose(3.0, 3.0, 3.0)), "far")
    o = robot._kernel_scene(scene)
    return replace(o, kind=np.array([4]), bound=np.array([[0.0, 0.0, 0.0, math.inf]]),
                   data=np.array([[-1.0, 0.0, 0.0, -x] + [0.0] * 12]))  # fmt: skip


@pytest.mark.parametrize("offset", [1e-7, 1e-10, -1e-10, -1e-7])
def test_steps_grazing_a_half_space(spheres: SphereRobotModel, offset: float) -> None:
    """The half-space ``offset`` beyond the farthest x the spheres reach at the steps: one
    step in all touches it (offset < 0) or none does, and the skips must not pass it."""
    r = replace(spheres._kernel_robot(), pairs=np.zeros((0, 2), dtype=np.int64))
    Q0, Q1 = short_motions(spheres, 6, 5, 1.0)
    expected = [kernel.FREE if offset > 0 else kernel.HIT]
    for q0, q1 in zip(Q0, Q1, strict=True):
        C = reference.sphere_centres(r, reference.motion_steps(r, q0, q1, 0.02))
        o = half_space_beyond(spheres, float((C[..., 0] + r.spheres[:, 3]).max()) + offset)
        A, B = q0[None], q1[None]
        assert reference.motions_discrete(r, o, A, B, 0.02).tolist() == expected
        assert discrete_codes(r, o, A, B, 0.02).tolist() == expected
        if offset < 0:  # the bound passes no motion some configuration on it touches
            assert bound_codes(r, o, A, B, 1e-3).tolist() == [kernel.HIT]


@pytest.mark.parametrize("excess", [1e-7, 1e-10, -1e-10, -1e-7])
def test_steps_grazing_the_robot_itself(
    model: SphereModel, spheres: SphereRobotModel, excess: float
) -> None:
    """A link's self radii grown (cuRobo's buffer) until its nearest pair's gap at the
    steps of a free motion is ``excess``: the kernel finds the one touching step."""
    r, o = arrays(spheres, None)
    Q0, Q1 = short_motions(spheres, 40, 6, 1.0)
    free = np.flatnonzero(reference.motions_discrete(r, o, Q0, Q1, 0.02) == kernel.FREE)
    names = list(dict.fromkeys(spheres._parts))
    start = r.link_start
    expected = [kernel.FREE if excess > 0 else kernel.HIT]
    for m in free[:2].tolist():
        C = reference.sphere_centres(r, reference.motion_steps(r, Q0[m], Q1[m], 0.02))
        gaps: dict[int, float] = {}
        for a, b in r.pairs.tolist():
            A, B = C[:, start[a] : start[a + 1], None], C[:, None, start[b] : start[b + 1]]
            d = np.sqrt(((A - B) ** 2).sum(-1))
            d -= r.spheres[start[a] : start[a + 1], 5, None] + r.spheres[start[b] : start[b + 1], 5]
            for link in (a, b):
                gaps[link] = min(gaps.get(link, math.inf), float(d.min()))
        link = min(gaps, key=gaps.__getitem__)
        grown = sphere_robot(
            replace(model, self_collision_buffer={names[link]: gaps[link] - excess})
        )
        g, go = arrays(grown, None)
        A, B = Q0[m : m + 1], Q1[m : m + 1]
        assert reference.motions_discrete(g, go, A, B, 0.02).tolist() == expected
        assert discrete_codes(g, go, A, B, 0.02).tolist() == expected
        if excess < 0:
            assert bound_codes(g, go, A, B, 1e-3).tolist() == [kernel.HIT]
    assert len(free) >= 2


@pytest.mark.parametrize(("world", "n"), [("shelf", 40), ("every kind", 16)])
def test_the_bound_passes_no_motion_the_reference_finds_colliding(
    spheres: SphereRobotModel, world: str, n: int
) -> None:
    """1-radian motions against every 0.004 rad step in numpy."""
    r, o = arrays(spheres, scene_of(world))
    Q0, Q1 = short_motions(spheres, n, 23, 1.0)
    fine = reference.motions_discrete(r, o, Q0, Q1, 0.004)
    proved = bound_codes(r, o, Q0, Q1, 1e-3)
    assert not ((proved == kernel.FREE) & (fine != kernel.FREE)).any()
    assert not ((proved != kernel.HIT) & (fine == kernel.HIT)).any()
    assert (fine == kernel.HIT).any()
    assert (proved == kernel.FREE).sum() >= 0.8 * (fine == kernel.FREE).sum() > 0


# ----------------------------------------------------------------------------- buffers


def test_buffers_enter_the_self_radii_only(model: SphereModel, buffered: SphereRobotModel) -> None:
    r = buffered._kernel_robot()
    buffer = buffered.sphere_model.self_collision_buffer
    names = list(dict.fromkeys(buffered._parts))
    for link, name in enumerate(names):
        rows = r.spheres[r.link_start[link] : r.link_start[link + 1]]
        np.testing.assert_array_equal(rows[:, 5], rows[:, 3] + buffer.get(name, 0.0))
        np.testing.assert_array_equal(rows[:, 3], model.spheres[name][:, 3])
        assert r.links[link, 5] == pytest.approx(r.links[link, 3] + buffer.get(name, 0.0))


def test_buffered_kernel_equals_reference_and_coal(buffered: SphereRobotModel) -> None:
    scene = every_kind()
    Q = buffered.sample(600, 12)
    r, o = arrays(buffered, scene)
    codes = check_codes(r, o, Q)
    assert np.array_equal(codes, reference.check_many(r, o, Q))
    assert buffered.check(Q[:200], scene).tolist() == [
        RobotModel.in_collision(buffered, q, scene) for q in Q[:200]
    ]
    alone = buffered.check(Q[:200])
    assert alone.tolist() == [buffered.self_collision(q) for q in Q[:200]]


def test_a_buffer_makes_a_near_pair_touch_and_shortens_its_distance(
    model: SphereModel, spheres: SphereRobotModel
) -> None:
    Q = spheres.sample(300, 4)
    free = Q[~spheres.check(Q)]
    q = next(q for q in free if spheres.distance(q).distance < 0.05)
    near = spheres.distance(q)
    assert near.part is not None and near.other is not None
    d = near.distance
    touching = sphere_robot(replace(model, self_collision_buffer={near.part: d + 1e-4}))
    apart = sphere_robot(replace(model, self_collision_buffer={near.part: d - 1e-4}))
    assert touching.self_collision(q) and touching.check([q]).tolist() == [True]
    assert touching.colliding_pairs(q)[0] in ((near.part, near.other), (near.other, near.part))
    assert not apart.self_collision(q) and apart.check([q]).tolist() == [False]
    found = apart.distance(q)
    assert found.distance == pytest.approx(1e-4, abs=1e-9)
    assert {found.part, found.other} == {near.part, near.other}
    gap = np.linalg.norm(np.asarray(found.point_part) - np.asarray(found.point_other))
    assert gap == pytest.approx(1e-4, abs=1e-9)
    scene = shelf()  # scene checks take the spheres as they are
    mine, theirs = apart.distance(q, scene), spheres.distance(q, scene)
    assert mine[:3] == theirs[:3] and mine.point_part is not None
    assert theirs.point_part is not None and (mine.point_part == theirs.point_part).all()


def test_buffered_motions(buffered: SphereRobotModel, spheres: SphereRobotModel) -> None:
    Q0, Q1 = short_motions(buffered, 80, 2, 0.6)
    proved = buffered.check_motions(Q0, Q1)
    stepped = buffered.check_motions(Q0, Q1, method="discrete", resolution=0.003)
    assert not (proved & ~stepped).any() and proved.any()
    coarse = buffered.check_motions(Q0[:15], Q1[:15], method="discrete", resolution=0.05)
    for q0, q1, free in zip(Q0[:15], Q1[:15], coarse, strict=True):
        steps = max(math.ceil(np.abs(q1 - q0).max() / 0.05), 1)
        path = q0 + np.linspace(0, 1, steps + 1)[:, None] * (q1 - q0)
        assert free == (not any(RobotModel.in_collision(buffered, q) for q in path))
    grown = spheres.check_motions(Q0, Q1, method="discrete") & ~buffered.check_motions(
        Q0, Q1, method="discrete"
    )
    assert grown.any()  # some motions are free only without the buffers
    robot = pickle.loads(pickle.dumps(buffered))
    robot.attach(Cuboid([0.02, 0.02, 0.05]), "panda_hand", pose(0, 0, 0.15))
    with pytest.raises(RobotModelError, match="does not apply self_collision_buffer"):
        robot.check_motions(Q0[:2], Q1[:2])
    assert robot.check_motions(Q0[:2], Q1[:2], method="discrete").shape == (2,)


# ----------------------------------------------------------------------------- clouds


def cloud_scene(rng: np.random.Generator) -> tuple[Scene, np.ndarray, np.ndarray]:
    points = rng.uniform([-0.2, -0.2, -0.15], [0.2, 0.2, 0.15], size=(60, 3))
    T = pose(0.45, 0.1, 0.5)
    scene = Scene()
    scene.add(OcTree(points, 0.08, pose=T), "cloud")
    return scene, points + T[:3, 3], T


def test_an_octree_tested_as_its_points(spheres: SphereRobotModel) -> None:
    robot = pickle.loads(pickle.dumps(spheres))
    scene, world_points, _ = cloud_scene(np.random.default_rng(5))
    Q = robot.sample(800, 6)
    as_cells = robot.check(Q, scene)
    robot.clouds = "points"
    assert robot.clouds == "points"
    as_points = robot.check(Q, scene)
    # One configuration at a time too: in_collision is a row of check (where the cells
    # would answer otherwise).
    assert [robot.in_collision(q, scene) for q in Q[:200]] == as_points[:200].tolist()
    assert (as_cells[:200] != as_points[:200]).any()
    r, o = arrays(robot, scene)
    assert o.kind.tolist() == [CLOUD] and (o.cells[:, 3] == 0).all() and len(o.cells) == 60
    assert np.array_equal(check_codes(r, o, Q), reference.check_many(r, o, Q))
    # Oracle: self-collision, or some sphere holding (or touching) some point.
    C = reference.sphere_centres(r, Q)
    d = np.linalg.norm(C[:, :, None, :] - world_points[None, None], axis=-1)
    holds = (d <= r.spheres[None, :, 3, None]).any(axis=(1, 2))
    assert as_points.tolist() == (holds | robot.check(Q)).tolist()
    assert not (as_points & ~as_cells).any()  # the cells hold the points
    assert (as_cells & ~as_points).any()  # and reach farther
    Q0, Q1 = short_motions(robot, 40, 9, 0.5)
    proved = robot.check_motions(Q0, Q1, scene)
    robot.clouds = "cells"
    assert not (robot.check_motions(Q0, Q1, scene) & ~proved).any()
    assert robot.check(Q, scene).tolist() == as_cells.tolist()


def test_clouds_must_be_cells_or_points(spheres: SphereRobotModel) -> None:
    with pytest.raises(InvalidArgumentError, match="clouds must be 'cells' or 'points', got 'x'"):
        spheres.clouds = "x"  # type: ignore[assignment]
    assert spheres.clouds == "cells"
