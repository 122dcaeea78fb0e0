"""Motion checks: a motion is free only when proved, and never free where a fine
discretisation finds a collision."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import CONTINUOUS_ARM, discretised_free, shelf_scene, trans
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialcontact import Cuboid, Scene, Sphere, meshes
from spatialcontact.errors import InvalidArgumentError, ShapeTypeError
from spatialcontact.robot import RobotModel


@pytest.fixture(scope="module")
def panda_convex() -> RobotModel:
    folder = meshes.path("panda")
    return RobotModel.from_urdf(
        folder / "panda.urdf", srdf=folder / "panda.srdf", geometry="convex"
    )


@pytest.fixture(scope="module")
def shelf() -> Scene:
    return shelf_scene("mid")


def test_known_free_and_colliding_motions(panda: RobotModel) -> None:
    ready = panda.states["default"]
    step = np.zeros(8)
    step[0] = 0.5
    assert panda.check_motion(ready - step, ready + step)  # turning about the base, nothing near
    scene = Scene()
    T_world_hand = panda.fk(ready)["panda_hand"]
    scene.add(Sphere(0.03, pose=T_world_hand @ trans(0.0, 0.0, 0.1)), "ball")  # between the fingers
    assert not panda.in_collision(ready - step, scene)
    assert not panda.in_collision(ready + step, scene)
    assert panda.in_collision(ready, scene)
    assert not panda.check_motion(ready - step, ready + step, scene)  # sweeps through the ball
    assert panda.check_motion(ready - step, ready - 0.5 * step, scene)
    # A motion whose end collides is not free; nor one that stays in one place in collision.
    folded = np.array([0.0, 0.5, 0.0, -3.0, 0.0, 0.3, 0.785, 0.02])
    assert not panda.check_motion(ready, folded)
    assert not panda.check_motion(folded, folded)
    assert panda.check_motion(ready, ready)


def test_many_motions_agree_with_single_ones(panda: RobotModel, shelf: Scene) -> None:
    rng = np.random.default_rng(8)
    Q0 = panda.sample(12, rng)
    Q1 = np.clip(Q0 + rng.uniform(-0.6, 0.6, Q0.shape), panda.limits[:, 0], panda.limits[:, 1])
    Q1[:, -1] = Q0[:, -1]
    many = panda.check_motions(Q0, Q1, shelf)
    assert many.shape == (12,) and many.dtype == bool
    assert many.tolist() == [panda.check_motion(a, b, shelf) for a, b in zip(Q0, Q1, strict=True)]
    assert 0 < many.sum() < 12
    assert panda.check_motions(np.zeros((0, 8)), np.zeros((0, 8)), shelf).shape == (0,)
    chunked = panda.check_motions(Q0, Q1, shelf, chunk_size=5)  # serial, in chunks
    assert chunked.tolist() == many.tolist()


def test_motion_errors(panda: RobotModel) -> None:
    q = panda.neutral
    with pytest.raises(InvalidArgumentError, match="tolerance must be a finite number > 0"):
        panda.check_motion(q, q, tolerance=0.0)
    with pytest.raises(InvalidArgumentError, match="Q0 and Q1 must have the same shape"):
        panda.check_motions([q, q], [q])
    with pytest.raises(InvalidArgumentError, match=r"q1: joint 'panda_joint4' = 0.0 is outside"):
        panda.check_motion(q, np.zeros(8))
    with pytest.raises(InvalidArgumentError, match=r"q0 must have 8 joint values .* shape \(7,\)"):
        panda.check_motion(np.zeros(7), q)
    with pytest.raises(
        InvalidArgumentError, match=r"Q1\[1\] must hold finite joint values, got nan"
    ):
        panda.check_motions([q, q], [q, np.full(8, np.nan)])
    with pytest.raises(ShapeTypeError, match=r"tolerance must be a real number, got True"):
        panda.check_motion(q, q, tolerance=True)
    with pytest.raises(ShapeTypeError, match="scene must be a spatialcontact Scene or None"):
        panda.check_motion(q, q, scene=[Sphere(1.0)])  # type: ignore[arg-type]
    with pytest.raises(ShapeTypeError, match="scene must be a spatialcontact Scene or None"):
        panda.check_motions([q], [q], scene="shelf")  # type: ignore[arg-type]


@pytest.mark.parametrize("tolerance", ["1", True, 1j, None, [0.1]])
def test_a_tolerance_that_is_no_number_is_a_type_error(
    panda: RobotModel, tolerance: object
) -> None:
    # docs/limits.md: a string or a boolean where a number is expected is a ShapeTypeError
    # (a TypeError); these raised InvalidArgumentError (a ValueError).
    q = panda.neutral
    with pytest.raises(ShapeTypeError, match=r"tolerance must be a real number, got "):
        panda.check_motion(q, q, tolerance=tolerance)  # type: ignore[arg-type]
    with pytest.raises(ShapeTypeError, match=r"tolerance must be a real number, got "):
        panda.check_motions([q], [q], tolerance=tolerance)  # type: ignore[arg-type]
    for value in (-1.0, np.inf, np.nan):  # a number out of range is still a ValueError
        with pytest.raises(InvalidArgumentError, match="tolerance must be"):
            panda.check_motion(q, q, tolerance=value)
    assert panda.check_motion(q, q, tolerance=np.float32(0.01))


def test_the_group_is_where_q_says_after_a_motion(panda: RobotModel, shelf: Scene) -> None:
    ready = panda.states["default"]
    panda.check_motion(ready, ready + np.append(np.full(7, 0.4), 0.0), shelf)
    (hand,) = panda.shapes_of("panda_hand")
    np.testing.assert_allclose(hand.world_T, panda.fk(panda.q)["panda_hand"], atol=1e-12)


def motions(max_step: float) -> st.SearchStrategy[tuple[int, np.ndarray]]:
    """A seed, and each joint's change (radians) up to ``max_step``."""
    return st.tuples(
        st.integers(0, 2**31 - 1),
        st.lists(st.floats(-max_step, max_step), min_size=7, max_size=7).map(np.array),
    )


def motion_from(robot: RobotModel, seed: int, change: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    q0 = robot.sample(1, seed)[0]
    q1 = q0.copy()
    q1[:7] = np.clip(q0[:7] + change, robot.limits[:7, 0], robot.limits[:7, 1])
    return q0, q1


@settings(max_examples=25, deadline=None)
@given(motions(1.0))
def test_never_free_where_a_fine_discretisation_collides(
    panda: RobotModel, shelf: Scene, motion: tuple[int, np.ndarray]
) -> None:
    q0, q1 = motion_from(panda, *motion)
    if panda.check_motion(q0, q1, shelf):
        assert discretised_free(panda, q0, q1, shelf)


@settings(max_examples=10, deadline=None)
@given(motions(1.0))
def test_self_motions_and_convex_geometry(
    panda: RobotModel, panda_convex: RobotModel, shelf: Scene, motion: tuple[int, np.ndarray]
) -> None:
    q0, q1 = motion_from(panda, *motion)
    if panda.check_motion(q0, q1):
        assert discretised_free(panda, q0, q1, None)
    if panda_convex.check_motion(q0, q1, shelf):
        assert discretised_free(panda_convex, q0, q1, shelf)


def test_attached_objects_are_checked_along_the_motion(panda: RobotModel) -> None:
    import pickle

    robot: RobotModel = pickle.loads(pickle.dumps(panda))
    ready = robot.states["default"]
    robot.attach(Cuboid([0.04, 0.04, 0.3]), "panda_hand", trans(0, 0, 0.3), name="rod")
    T_world_rod_end = robot.fk(ready)["panda_hand"] @ trans(0.0, 0.0, 0.45)
    scene = Scene()
    scene.add(Sphere(0.02, pose=trans(*T_world_rod_end[:3, 3])), "ball")  # the rod's far end
    step = np.zeros(8)
    step[0] = 0.4
    assert robot.in_collision(ready, scene)
    assert not robot.in_collision(ready + step, scene)
    assert not robot.check_motion(ready + step, ready - step, scene)
    assert not discretised_free(robot, ready + step, ready - step, scene)


def test_free_motions_from_free_starts(panda: RobotModel, shelf: Scene) -> None:
    rng = np.random.default_rng(5)
    starts = panda.sample(200, rng)
    starts = starts[~panda.check(starts, shelf)][:30]
    free = 0
    for q0 in starts:
        change = rng.normal(size=7)
        q1 = q0.copy()
        q1[:7] = np.clip(
            q0[:7] + change / np.abs(change).max(), panda.limits[:7, 0], panda.limits[:7, 1]
        )
        if panda.check_motion(q0, q1, shelf):
            free += 1
            assert discretised_free(panda, q0, q1, shelf)
    assert free >= 10  # most 1-radian motions from free starts are proved free


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(0.2, 1.5))
def test_batches_of_motions_never_free_where_a_fine_discretisation_collides(
    panda: RobotModel, shelf: Scene, seed: int, size: float
) -> None:
    """Motions checked together share their rounds: a colliding one must not leak into the
    others, nor the others hide it."""
    rng = np.random.default_rng(seed)
    Q0 = panda.sample(6, rng)
    change = rng.uniform(-size, size, Q0.shape)
    change[:, -1] = 0.0
    Q1 = np.clip(Q0 + change, panda.limits[:, 0], panda.limits[:, 1])
    together = panda.check_motions(Q0, Q1, shelf)
    assert together.tolist() == [
        panda.check_motion(q0, q1, shelf) for q0, q1 in zip(Q0, Q1, strict=True)
    ]
    for free, q0, q1 in zip(together, Q0, Q1, strict=True):
        if free:
            assert discretised_free(panda, q0, q1, shelf)


def test_motions_of_a_moved_robot(panda: RobotModel, shelf: Scene) -> None:
    """The robot's base moved: the motion's bounds are taken in the world, where the scene is."""
    import pickle

    robot: RobotModel = pickle.loads(pickle.dumps(panda))
    ready = robot.states["default"]
    step = np.zeros(8)
    step[0] = 0.6
    assert robot.check_motion(ready - step, ready + step, shelf)
    robot.group.T = trans(0.25, 0.0, 0.0)  # the hand (x = 0.31 at ready) into the shelf's back
    assert robot.in_collision(ready, shelf)
    assert not robot.check_motion(ready - step, ready + step, shelf)
    far = trans(-3.0, 0.0, 0.0)
    robot.group.T = far
    assert robot.check_motion(ready - step, ready + step, shelf)
    scene = Scene()
    T_world_hand = robot.fk(ready)["panda_hand"]
    scene.add(Sphere(0.03, pose=T_world_hand @ trans(0.0, 0.0, 0.1)), "ball")
    assert not robot.check_motion(ready - step, ready + step, scene)


@pytest.mark.parametrize("offset", [-0.3, 0.0, 0.35])
def test_motions_grazing_an_obstacle(panda: RobotModel, offset: float) -> None:
    """A ball on the fingers' path, then beside it at gaps from overlap to 25 cm: none of
    the motions is called free where a fine discretisation finds a collision, the one
    through the ball is not free, the far one is."""
    ready = panda.states["default"]
    step = np.zeros(8)
    step[0] = 0.5
    q = ready.copy()
    q[0] += offset
    T_world_finger = panda.fk(q)["panda_leftfinger"]
    scene = Scene()
    ball = Sphere(0.02, pose=T_world_finger)
    scene.add(ball, "ball")
    assert not panda.check_motion(ready - step, ready + step, scene)  # on the finger's path
    out = T_world_finger[:3, 3] * np.array([1.0, 1.0, 0.0])
    out /= np.linalg.norm(out)  # outwards from the base's axis, horizontally
    free = []
    # The finger's surface is about 5.2 cm out from its frame there: the motions from 5 to
    # 6 cm pass within a millimetre of the ball, and take several rounds of splits.
    for distance in (0.05, 0.051, 0.052, 0.054, 0.056, 0.06, 0.3):
        ball.T = trans(*(T_world_finger[:3, 3] + distance * out))
        free.append(panda.check_motion(ready - step, ready + step, scene))
        if free[-1]:
            assert discretised_free(panda, ready - step, ready + step, scene)
    assert free[-1]


def test_split_motions_agree_with_bisection(panda: RobotModel, shelf: Scene) -> None:
    """Splitting open stretches in four or in two gives the same answers (both proofs are
    sound; the motions here are decided well away from the tolerance)."""
    from spatialcontact.robot import motion

    rng = np.random.default_rng(11)
    Q0 = panda.sample(16, rng)
    change = rng.uniform(-0.8, 0.8, Q0.shape)
    change[:, -1] = 0.0
    Q1 = np.clip(Q0 + change, panda.limits[:, 0], panda.limits[:, 1])
    four = panda.check_motions(Q0, Q1, shelf)
    saved = motion.SPLIT
    try:
        motion.SPLIT = 2
        two = panda.check_motions(Q0, Q1, shelf)
    finally:
        motion.SPLIT = saved
    assert four.tolist() == two.tolist()
    assert 0 < four.sum() < 16
    for free, q0, q1 in zip(four, Q0, Q1, strict=True):
        if free:
            assert discretised_free(panda, q0, q1, shelf)


@settings(max_examples=300)
@given(st.lists(st.integers(0, 20), min_size=1, max_size=60))
def test_first_of_each_is_numpys_unique(values: list[int]) -> None:
    from spatialcontact.robot.motion import _first_of_each

    v = np.array(values, dtype=np.intp)
    _, first, inverse = np.unique(v, return_index=True, return_inverse=True)
    got_first, got_inverse = _first_of_each(v)
    np.testing.assert_array_equal(got_first, first)
    np.testing.assert_array_equal(got_inverse, inverse.reshape(-1))


def test_continuous_joints_check_motions_without_warnings(tmp_path: Path) -> None:
    # A continuous joint's range is infinite: the motion model's bounds multiplied it by 0.0
    # (inf * 0.0, "invalid value encountered in scalar multiply") on every motion check, so
    # that under -W error no motion of such a robot could be checked.
    path = tmp_path / "spinner.urdf"
    path.write_text(CONTINUOUS_ARM)
    robot = RobotModel.from_urdf(path)
    scene = Scene()
    scene.add(Sphere(0.05, pose=trans(0.0, 0.5, 0.1)), "ball")  # on +y, 0.5 m from the axis
    motions = [
        ([0.0, 0.0], [np.pi, 0.0], False),  # the arm sweeps through +y: through the ball
        ([0.0, 0.0], [-1.0, 0.0], True),  # through -y only
        ([np.pi / 2, -np.pi / 2], [np.pi / 2, -1.2], True),  # the forearm turns beside it
        ([np.pi / 2, -np.pi], [np.pi / 2, np.pi], False),  # ... a whole turn, through it
        ([-3.0, 0.0], [-9.0, 0.0], False),  # a whole turn of the shoulder, outside [-pi, pi]
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [robot.check_motion(q0, q1, scene) for q0, q1, _ in motions]
        many = robot.check_motions([m[0] for m in motions], [m[1] for m in motions], scene)
    assert got == [free for _, _, free in motions]
    assert many.tolist() == got
    for q0, q1, free in motions:
        assert discretised_free(robot, np.array(q0), np.array(q1), scene) == free
