"""RobotModel on the shipped Panda: self-collision, scenes, batches, attached objects, errors,
pickling, and pinocchio's answers on the same meshes and SRDF pairs."""

from __future__ import annotations

import math
import pickle
import warnings
from typing import Any

import numpy as np
import pytest

from spatialcontact import CollisionShapeGroup, Cuboid, HalfSpace, Scene, Sphere, meshes
from spatialcontact.errors import InvalidArgumentError, InvalidShapeError, ShapeTypeError
from spatialcontact.robot import RobotModel, RobotModelError

FOLDED = np.array([0.0, 0.5, 0.0, -3.0, 0.0, 0.3, 0.785, 0.02])
"""Elbow folded shut: the hand comes down onto the base links."""


def trans(x: float, y: float, z: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


@pytest.fixture(scope="module")
def panda() -> RobotModel:
    folder = meshes.path("panda")
    return RobotModel.from_urdf(folder / "panda.urdf", srdf=folder / "panda.srdf")


@pytest.fixture
def robot(panda: RobotModel) -> RobotModel:
    """A fresh copy for tests that change the robot (attach, limits mode, group pose)."""
    copy: RobotModel = pickle.loads(pickle.dumps(panda))
    return copy


def shelf() -> Scene:
    scene = Scene()
    for name, size, xyz in [
        ("left", [0.3, 0.02, 0.9], [0.6, -0.4, 0.45]),
        ("right", [0.3, 0.02, 0.9], [0.6, 0.4, 0.45]),
        ("back", [0.02, 0.8, 0.9], [0.75, 0.0, 0.45]),
        ("low", [0.3, 0.8, 0.02], [0.6, 0.0, 0.2]),
        ("mid", [0.3, 0.8, 0.02], [0.6, 0.0, 0.5]),
        ("top", [0.3, 0.8, 0.02], [0.6, 0.0, 0.85]),
    ]:
        scene.add(Cuboid(size, pose=trans(*xyz)), name)
    return scene


# ------------------------------------------------------------------------- known answers


def test_ready_pose_is_free_and_folded_collides(panda: RobotModel) -> None:
    ready = panda.states["default"]
    assert not panda.self_collision(ready)
    assert not panda.in_collision(ready)
    assert panda.colliding_pairs(ready) == []
    assert panda.self_collision(FOLDED)
    pairs = panda.colliding_pairs(FOLDED)
    assert ("panda_link0", "panda_link6") in pairs and ("panda_link2", "panda_hand") in pairs
    assert set(pairs) <= set(panda.collision_pairs)


def test_a_box_at_the_hand(panda: RobotModel) -> None:
    ready = panda.states["default"]
    T_world_hand = panda.fk(ready)["panda_hand"]
    scene = Scene()
    box = Cuboid([0.05, 0.05, 0.05], pose=T_world_hand)
    scene.add(box, "box")
    assert panda.in_collision(ready, scene)
    pairs = panda.colliding_pairs(ready, scene)
    assert ("panda_hand", "box") in pairs and all(other == "box" for _, other in pairs)
    assert not panda.self_collision(ready)
    box.T = trans(2.0, 0.0, 0.5)  # the scene's change is seen at the next query
    assert not panda.in_collision(ready, scene)
    assert panda.colliding_pairs(ready, scene) == []


def test_distance_to_a_floor_and_between_links(panda: RobotModel) -> None:
    scene = Scene()
    scene.add(Cuboid([4.0, 4.0, 0.2], pose=trans(0, 0, -0.2)), "floor")  # top at z = -0.1
    found = panda.distance(panda.states["default"], scene)
    assert found.other == "floor" and found.part == "panda_link0"
    assert found.distance == pytest.approx(0.1, abs=1e-4)  # the mesh's bottom is at z ~ 3e-5
    assert found.point_other is not None and found.point_other[2] == pytest.approx(-0.1)
    own = panda.distance(panda.states["default"])
    assert own.part is not None and (own.part, own.other) in panda.collision_pairs
    assert 0.0 < own.distance < 0.5
    assert panda.distance(FOLDED).distance <= 0.0
    assert panda.distance(panda.neutral, Scene()) == (math.inf, None, None, None, None)


def test_batch_agrees_with_single_calls(panda: RobotModel) -> None:
    Q = panda.sample(400, 11)
    scene = shelf()
    many = panda.in_collision_many(Q, scene)
    assert many.dtype == bool and many.shape == (400,)
    assert many.tolist() == [panda.in_collision(q, scene) for q in Q]
    own = panda.in_collision_many(Q)
    assert own.tolist() == [panda.self_collision(q) for q in Q]
    assert 0 < own.sum() < many.sum() < 400
    assert panda.in_collision_many(np.zeros((0, 8))).shape == (0,)


def test_the_mimic_finger_moves_with_the_first(panda: RobotModel) -> None:
    q = panda.states["default"].copy()
    q[-1] = 0.03
    poses = panda.fk(q)
    T_hand_left = np.linalg.inv(poses["panda_hand"]) @ poses["panda_leftfinger"]
    T_hand_right = np.linalg.inv(poses["panda_hand"]) @ poses["panda_rightfinger"]
    np.testing.assert_allclose(T_hand_left[:3, 3], [0, 0.03, 0.0584], atol=1e-12)
    np.testing.assert_allclose(T_hand_right[:3, 3], [0, -0.03, 0.0584], atol=1e-12)


def test_queries_place_the_group_and_q_tells_where(robot: RobotModel) -> None:
    robot.set_q(robot.states["default"])
    np.testing.assert_array_equal(robot.q, robot.states["default"])
    robot.in_collision(FOLDED)  # asks Coal: the group is moved there
    np.testing.assert_allclose(robot.q, FOLDED)
    (hand,) = robot.shapes_of("panda_hand")
    np.testing.assert_allclose(hand.world_T, robot.fk(FOLDED)["panda_hand"], atol=1e-12)
    assert robot.part_of(hand) == "panda_hand"


def test_moving_the_group_moves_the_robot(robot: RobotModel) -> None:
    ready = robot.states["default"]
    scene = Scene()
    scene.add(Cuboid([0.2, 0.2, 0.2], pose=trans(2.0, 0.0, 0.5)), "box")
    assert not robot.in_collision(ready, scene)
    robot.group.T = trans(2.0 - 0.307, 0.0, 0.0)  # the hand (x = 0.307) into the box
    assert robot.in_collision(ready, scene)
    assert robot.in_collision_many([ready], scene).tolist() == [True]
    np.testing.assert_allclose(robot.fk(ready)["panda_hand"][:3, 3], [2.0, 0.0, 0.59], atol=1e-3)


def test_half_spaces_and_groups_in_the_scene(panda: RobotModel) -> None:
    scene = Scene()
    scene.add(HalfSpace([0, 0, 1], 0.3), "below")  # everything under z = 0.3
    assert panda.in_collision(panda.states["default"], scene)
    scene = Scene()
    scene.add(CollisionShapeGroup([Sphere(0.05, pose=trans(3, 0, 0))]), "far")
    assert not panda.in_collision(panda.states["default"], scene)


# ------------------------------------------------------------------------- attached objects


def test_attached_object_moves_with_its_link(robot: RobotModel) -> None:
    part = Cuboid([0.04, 0.04, 0.12])
    T_hand_part = trans(0.0, 0.0, 0.2)
    name = robot.attach(part, "panda_hand", T_hand_part, name="bottle")
    assert name == "bottle" and "bottle" in robot.attachments
    fixed_to_the_hand = {"panda_link7", "panda_link8", "panda_hand", "panda_hand_tcp"}
    assert robot.attachments["bottle"].allowed == fixed_to_the_hand
    for q in (robot.states["default"], robot.sample(1, 2)[0]):
        robot.set_q(q)
        np.testing.assert_allclose(
            part.world_T, robot.fk(q)["panda_hand"] @ T_hand_part, atol=1e-12
        )
    ready = robot.states["default"]
    T_world_part = robot.fk(ready)["panda_hand"] @ T_hand_part
    scene = Scene()
    scene.add(Sphere(0.03, pose=trans(*T_world_part[:3, 3])), "target")
    assert robot.colliding_pairs(ready, scene) == [("bottle", "target")]
    assert ("panda_link0", "bottle") in robot.collision_pairs  # links first, by element order
    assert ("panda_hand", "bottle") not in robot.collision_pairs


def test_attached_object_allowed_links(robot: RobotModel) -> None:
    ready = robot.states["default"]
    grasped = Cuboid([0.03, 0.1, 0.03])  # between and through both fingertips
    robot.attach(grasped, "panda_hand", trans(0, 0, 0.1), name="held")
    assert robot.colliding_pairs(ready) == [
        ("panda_leftfinger", "held"),
        ("panda_rightfinger", "held"),
    ]
    robot.detach("held")
    robot.attach(
        grasped, "panda_hand", trans(0, 0, 0.1), allowed=["panda_leftfinger", "panda_rightfinger"]
    )
    assert not robot.self_collision(ready)
    assert not robot.in_collision_many([ready])[0]


def test_detach_leaves_the_object_in_place(robot: RobotModel) -> None:
    ready = robot.states["default"]
    part = Sphere(0.05)
    robot.attach(part, "panda_link7", trans(0.0, 0.0, 0.3))
    robot.set_q(ready)
    T_world_part = part.world_T.copy()
    assert robot.detach("attached_0") is part
    assert part.scene_parent is None and "attached_0" not in robot.attachments
    np.testing.assert_allclose(part.T, T_world_part)
    assert len(robot.group) == 17


def test_attach_errors(robot: RobotModel) -> None:
    with pytest.raises(
        RobotModelError,
        match="link 'panda_link9' is not a link of robot 'panda'; valid: 'panda_link0'",
    ):
        robot.attach(Sphere(0.1), "panda_link9")
    with pytest.raises(RobotModelError, match="link 'nose' is not a link"):
        robot.attach(Sphere(0.1), "panda_hand", allowed=["nose"])
    with pytest.raises(RobotModelError, match="name 'panda_hand' is already a link"):
        robot.attach(Sphere(0.1), "panda_hand", name="panda_hand")
    with pytest.raises(ShapeTypeError, match="shape must be a CollisionShape"):
        robot.attach("ball", "panda_hand")  # type: ignore[arg-type]
    in_group = CollisionShapeGroup([Sphere(0.1)])
    with pytest.raises(InvalidShapeError, match="already in a group"):
        robot.attach(in_group[0], "panda_hand")
    with pytest.raises(InvalidShapeError, match="unbounded"):
        robot.attach(HalfSpace(), "panda_hand")
    with pytest.raises(
        RobotModelError, match="'cup' is not an object attached to robot 'panda'; attached: none"
    ):
        robot.detach("cup")
    with pytest.raises(RobotModelError, match="'cup' is not a link or attached object"):
        robot.shapes_of("cup")
    assert len(robot.group) == 17  # nothing joined on the way


def test_changing_the_group_by_hand_is_refused(robot: RobotModel) -> None:
    robot.group.append(Sphere(0.1))
    with pytest.raises(
        RobotModelError, match="were changed directly: add and remove objects with attach"
    ):
        robot.self_collision(robot.neutral)


def test_a_resized_attached_object_is_followed(robot: RobotModel) -> None:
    ready = robot.states["default"]
    ball = Sphere(0.01)
    robot.attach(ball, "panda_hand", trans(0.0, 0.0, 0.3))
    scene = Scene()
    T_world_ball = robot.fk(ready)["panda_hand"] @ trans(0.0, 0.0, 0.3)
    scene.add(Sphere(0.01, pose=trans(*(T_world_ball[:3, 3] + [0.0, 0.0, 0.1]))), "probe")
    assert not robot.in_collision(ready, scene)
    ball.radius = 0.2  # the cull must see the new size
    assert robot.in_collision(ready, scene)


# ------------------------------------------------------------------------------- errors


def test_bad_configurations(robot: RobotModel) -> None:
    with pytest.raises(
        InvalidArgumentError,
        match=r"q must have 8 joint values \(panda_joint1, .*got an array of shape \(7,\)",
    ):
        robot.self_collision(np.zeros(7))
    with pytest.raises(
        InvalidArgumentError,
        match="q must hold finite joint values, got nan for joint 'panda_joint3'",
    ):
        robot.in_collision([0, 0, math.nan, -1, 0, 1, 0, 0])
    with pytest.raises(
        InvalidArgumentError,
        match=r"joint 'panda_joint4' = 0.5 is outside its limits \[-3.0718, -0.0698\]",
    ):
        robot.in_collision([0, 0, 0, 0.5, 0, 1, 0, 0])
    with pytest.raises(ShapeTypeError, match="q must be 8 joint values"):
        robot.in_collision("ready")
    with pytest.raises(InvalidArgumentError, match=r"Q\[1\]: joint 'panda_finger_joint1' = 0.05"):
        robot.in_collision_many([robot.neutral, [0, 0, 0, -1, 0, 1, 0, 0.05]])
    with pytest.raises(InvalidArgumentError, match=r"Q must have shape \(N, 8\)"):
        robot.in_collision_many(np.zeros(8))
    with pytest.raises(ShapeTypeError, match="scene must be a spatialcontact Scene or None"):
        robot.in_collision(robot.neutral, scene=[Sphere(1.0)])  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="out_of_limits must be 'raise' or 'clip'"):
        robot.out_of_limits = "wrap"


def test_clipping_out_of_limit_values(robot: RobotModel) -> None:
    robot.out_of_limits = "clip"
    q = np.array([0, 0, 0, 0.5, 0, 1, 0, 0.5])
    clipped = np.clip(q, robot.limits[:, 0], robot.limits[:, 1])
    assert robot.in_collision(q) == robot.in_collision(clipped)
    robot.set_q(q)
    np.testing.assert_allclose(robot.q, clipped)
    np.testing.assert_allclose(robot.fk_many([q])[0], robot.fk_many([clipped])[0])
    with pytest.raises(InvalidArgumentError, match="finite"):
        robot.in_collision([math.inf] * 8)  # clipping never hides a NaN or infinity


# ----------------------------------------------------------------------------- pickling


def test_pickled_robot_gives_equal_answers(robot: RobotModel) -> None:
    robot.attach(Cuboid([0.04, 0.04, 0.12]), "panda_hand", trans(0, 0, 0.2), name="part")
    robot.out_of_limits = "clip"
    copy: RobotModel = pickle.loads(pickle.dumps(robot))
    assert copy.attachments.keys() == {"part"} and copy.out_of_limits == "clip"
    assert copy.group is not robot.group
    Q = robot.sample(150, 4)
    scene = shelf()
    assert copy.in_collision_many(Q, scene).tolist() == robot.in_collision_many(Q, scene).tolist()
    for q in Q[:20]:
        assert copy.colliding_pairs(q, scene) == robot.colliding_pairs(q, scene)
        assert copy.distance(q, scene).distance == robot.distance(q, scene).distance
    q0, q1 = robot.states["default"], robot.states["default"] + 0.3
    assert copy.check_motion(q0, q1, scene) == robot.check_motion(q0, q1, scene)


# ----------------------------------------------------------------------------- pinocchio


def pinocchio_model(scene: Scene | None) -> tuple[Any, Any, Any, Any]:
    pin = pytest.importorskip("pinocchio")
    import coal

    folder = meshes.path("panda")
    urdf = str(folder / "panda.urdf")
    model = pin.buildModelFromUrdf(urdf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "package dir(s) via argument geometry_model"
        geom = pin.buildGeomFromUrdf(model, urdf, pin.GeometryType.COLLISION, [str(folder)])
    geom.addAllCollisionPairs()
    pin.removeCollisionPairs(model, geom, str(folder / "panda.srdf"))
    n_robot = geom.ngeoms
    for name in () if scene is None else scene.names:
        box = scene[name]  # type: ignore[index]
        assert isinstance(box, Cuboid)
        W = box.world_T
        obj = pin.GeometryObject(name, 0, pin.SE3(W[:3, :3], W[:3, 3]), coal.Box(*box.scale))
        index = geom.addGeometryObject(obj)
        for i in range(n_robot):
            geom.addCollisionPair(pin.CollisionPair(i, index))
    return pin, model, geom, pin.GeometryData(geom)


@pytest.mark.parametrize("with_scene", [False, True], ids=["self", "shelf"])
def test_same_answers_as_pinocchio(panda: RobotModel, with_scene: bool) -> None:
    scene = shelf() if with_scene else None
    pin, model, geom, gdata = pinocchio_model(scene)
    data = model.createData()
    Q = panda.sample(600, 21 if with_scene else 20)
    theirs = [
        bool(pin.computeCollisions(model, data, geom, gdata, np.append(q, q[-1]), True))
        for q in Q  # pinocchio's second finger is a joint of its own: give it the mimic value
    ]
    ours = [panda.in_collision(q, scene) for q in Q]
    assert ours == theirs
    assert 0 < sum(ours) < len(Q)
    assert panda.in_collision_many(Q, scene).tolist() == theirs


def test_scene_changes_are_seen(panda: RobotModel) -> None:
    ready = panda.states["default"]
    T_world_hand = panda.fk(ready)["panda_hand"]
    scene = Scene()
    scene.add(Cuboid([0.1, 0.1, 0.1], pose=trans(2, 0, 0)), "a")
    scene.add(Cuboid([0.1, 0.1, 0.1], pose=trans(-2, 0, 0)), "b")
    assert not panda.in_collision(ready, scene)
    scene.remove("b")
    scene.add(Cuboid([0.05, 0.05, 0.05], pose=T_world_hand), "b")  # same name, a new object
    assert panda.in_collision(ready, scene)
    assert panda.in_collision_many([ready], scene).tolist() == [True]
    scene.remove("b")
    assert not panda.in_collision(ready, scene)
    scene["a"].T = T_world_hand  # moved onto the hand
    assert panda.colliding_pairs(ready, scene)[-1] == ("panda_hand", "a")


def test_the_robot_in_its_own_scene_is_left_out(robot: RobotModel) -> None:
    scene = shelf()
    Q = robot.sample(50, 9)
    before = robot.in_collision_many(Q, scene).tolist()
    scene.add(robot.group, "robot")
    assert robot.in_collision_many(Q, scene).tolist() == before
    assert [robot.in_collision(q, scene) for q in Q] == before
