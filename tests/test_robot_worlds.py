"""Robots in multi-world scenes: one model placed at N configurations, one per world
(``robot.check(Q, scene, worlds=...)``), and a robot whose group is an object of a world.

The oracle is the same robot against a scene of one world's objects and the global ones only,
rebuilt by hand from the multi-world scene: every answer must equal it.
"""

from __future__ import annotations

import concurrent.futures
import pickle

import numpy as np
import pytest
from conftest import trans

from spatialcontact import CollisionShapeGroup, Cuboid, Scene, Sphere
from spatialcontact.errors import InvalidArgumentError, ShapeTypeError
from spatialcontact.robot import RobotModel

READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.02])


def layered(seed: int, worlds: int) -> Scene:
    """``worlds`` worlds on one spot (no spacing): each has 6 random boxes around the robot,
    and a global post stands beside it in every world."""
    rng = np.random.default_rng(seed)
    scene = Scene()
    scene.add(Cuboid([0.1, 0.1, 1.0], pose=trans(-0.5, 0.0, 0.5)), "post")
    for w in range(worlds):
        scene.add_world()
        for i in range(6):
            size = rng.uniform(0.05, 0.3, 3).tolist()
            r, a = rng.uniform(0.3, 0.8), rng.uniform(-np.pi, np.pi)
            xyz = (r * np.cos(a), r * np.sin(a), rng.uniform(0.1, 1.0))
            scene.add(Cuboid(size, pose=trans(*xyz)), f"box{i}@{w}", world=w)
    return scene


def only_world(scene: Scene, world: int, leave_out: str = "") -> Scene:
    """A scene of the objects of ``world`` and the global ones (-1: every object), without
    the object ``leave_out``."""
    out = Scene()
    for name in scene.names:
        if name != leave_out and (world < 0 or scene.world_of(name) in (-1, world)):
            out.add(scene[name], name)
    return out


def test_each_row_is_checked_in_its_world_only(panda: RobotModel) -> None:
    scene = layered(3, worlds=4)
    Q = panda.sample(400, rng=11)
    worlds = np.random.default_rng(5).integers(-1, 4, len(Q))
    got = panda.check(Q, scene, worlds=worlds)
    views = {w: only_world(scene, w) for w in range(-1, 4)}
    expected = np.array([panda.in_collision(q, views[w]) for q, w in zip(Q, worlds, strict=True)])
    assert np.array_equal(got, expected)
    # Not a vacuous comparison: the worlds disagree on many rows.
    per_world = np.array([panda.check(Q, views[w]) for w in range(4)])
    assert (per_world.min(axis=0) != per_world.max(axis=0)).sum() > 20
    assert got.any() and not got.all()


def test_a_single_world_and_world_minus_one(panda: RobotModel) -> None:
    scene = layered(4, worlds=3)
    Q = panda.sample(150, rng=2)
    assert np.array_equal(panda.check(Q, scene, worlds=-1), panda.check(Q, scene))
    assert np.array_equal(
        panda.check(Q, scene, worlds=np.int64(2)), panda.check(Q, only_world(scene, 2))
    )


def test_a_box_at_the_hand_in_one_world_only(panda: RobotModel) -> None:
    hand = panda.fk(READY)["panda_hand"][:3, 3]
    scene = Scene()
    for _ in range(3):
        scene.add_world()
    scene.add(Sphere(0.05, pose=trans(*hand)), "ball", world=1)
    Q = np.tile(READY, (3, 1))
    assert panda.check(Q, scene, worlds=[0, 1, 2]).tolist() == [False, True, False]
    assert panda.check(Q, scene, worlds=[-1, 2, 1]).tolist() == [True, False, True]


def test_allowed_pairs_hold_in_every_world(panda: RobotModel) -> None:
    robot: RobotModel = pickle.loads(pickle.dumps(panda))
    hand = robot.fk(READY)["panda_hand"][:3, 3]
    scene = Scene()
    for w in range(2):
        scene.add_world()
        scene.add(Sphere(0.05, pose=trans(*hand)), f"ball{w}", world=w)
    robot.allow("panda_hand", "ball1")
    Q = np.tile(READY, (2, 1))
    assert robot.check(Q, scene, worlds=[0, 1]).tolist() == [
        True,
        robot.in_collision(READY, only_world(scene, 1)),
    ]
    assert (
        robot.check(Q, scene, worlds=[1, 1]).tolist()
        == [robot.in_collision(READY, only_world(scene, 1))] * 2
    )


def test_worlds_through_an_executor(panda: RobotModel) -> None:
    scene = layered(6, worlds=3)
    Q = panda.sample(120, rng=4)
    worlds = np.arange(len(Q)) % 3
    serial = panda.check(Q, scene, worlds=worlds)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        threaded = panda.check(Q, scene, worlds=worlds, executor=pool, chunk_size=25)
    assert np.array_equal(serial, threaded)
    assert np.array_equal(panda.in_collision_many(Q, scene, worlds=worlds), serial)


def test_a_robot_whose_group_is_in_a_world(panda: RobotModel) -> None:
    scene = layered(7, worlds=3)
    robot: RobotModel = pickle.loads(pickle.dumps(panda))
    scene.add(robot.group, "panda", world=1)
    Q = robot.sample(200, rng=8)
    alone = only_world(scene, 1, leave_out="panda")
    expected = panda.check(Q, alone)
    assert expected.any() and not expected.all()
    assert np.array_equal(robot.check(Q, scene), expected)
    assert [robot.in_collision(q, scene) for q in Q[:40]] == expected[:40].tolist()
    d, oracle = robot.distance(READY, scene), panda.distance(READY, alone)
    assert (d.distance, d.part, d.other) == (
        pytest.approx(oracle.distance),
        oracle.part,
        oracle.other,
    )
    assert d.other in alone.names or d.other in panda.link_names
    with pytest.raises(InvalidArgumentError, match="its group is an object of world 1"):
        robot.check(Q, scene, worlds=0)


@pytest.mark.parametrize(
    ("worlds", "error", "message"),
    [
        (True, ShapeTypeError, "worlds must be an int or integers, one per configuration, got"),
        ([0.0, 1.0, 0.0], ShapeTypeError, r"worlds must be an int or integers.*0\.0"),
        ("1", ShapeTypeError, "worlds must be an int or integers"),
        ([0, 1], InvalidArgumentError, r"worlds must be one int or 3 of them.*shape \(2,\)"),
        ([[0, 1, 0]], InvalidArgumentError, r"shape \(1, 3\)"),
        ([0, 2, 0], InvalidArgumentError, r"worlds\[1\] = 2 is neither -1 .* has 2 \(0 to 1\)"),
        (-2, InvalidArgumentError, r"worlds\[0\] = -2"),
    ],
)
def test_bad_worlds(
    panda: RobotModel, worlds: object, error: type[Exception], message: str
) -> None:
    scene = layered(1, worlds=2)
    with pytest.raises(error, match=message):
        panda.check(np.tile(READY, (3, 1)), scene, worlds=worlds)


def test_worlds_need_a_scene(panda: RobotModel) -> None:
    with pytest.raises(InvalidArgumentError, match=r"worlds=\[0\] needs a scene with worlds"):
        panda.check(READY[None], None, worlds=[0])


def test_replicating_a_world_that_holds_the_robot(panda: RobotModel) -> None:
    robot: RobotModel = pickle.loads(pickle.dumps(panda))
    hand = robot.fk(READY)["panda_hand"][:3, 3]
    scene = Scene()
    scene.add_world()
    scene.add(robot.group, "panda", world=0)
    scene.add(Sphere(0.05, pose=trans(*hand)), "ball", world=0)
    robot.set_q(READY)
    scene.replicate(2, spacing=5.0)
    # The copies are plain groups, 5 m apart, each touching its own world's ball only.
    copy = scene["panda/2"]
    assert isinstance(copy, CollisionShapeGroup)
    assert copy is not robot.group and len(copy) == len(robot.group)
    assert np.allclose(copy.world_T[:3, 3], [10.0, 0.0, 0.0])
    assert scene.collisions() == [("panda", "ball"), ("panda/1", "ball/1"), ("panda/2", "ball/2")]
    # The robot is in world 0: it sees its ball, and never the copies or their balls.
    assert robot.in_collision(READY, scene)
    assert robot.colliding_pairs(READY, scene) == [("panda_link7", "ball"), ("panda_hand", "ball")]
    scene.remove("ball")
    assert not robot.in_collision(READY, scene)
    assert scene.collisions() == [("panda/1", "ball/1"), ("panda/2", "ball/2")]
