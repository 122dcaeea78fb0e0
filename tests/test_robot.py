"""RobotModel on the shipped Panda: self-collision, scenes, batches, attached objects, errors,
pickling, and pinocchio's answers on the same meshes and SRDF pairs."""

from __future__ import annotations

import math
import pickle
import warnings
from typing import Any

import numpy as np
import pytest
from conftest import shelf_scene, trans

from spatialcontact import CollisionShapeGroup, Cuboid, HalfSpace, Scene, Sphere, meshes
from spatialcontact.errors import InvalidArgumentError, InvalidShapeError, ShapeTypeError
from spatialcontact.robot import RobotModel, RobotModelError

FOLDED = np.array([0.0, 0.5, 0.0, -3.0, 0.0, 0.3, 0.785, 0.02])
"""Elbow folded shut: the hand comes down onto the base links."""


@pytest.fixture
def robot(panda: RobotModel) -> RobotModel:
    """A fresh copy for tests that change the robot (attach, limits mode, group pose)."""
    copy: RobotModel = pickle.loads(pickle.dumps(panda))
    return copy


def shelf() -> Scene:
    return shelf_scene("low", "mid", "top")


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
    many = panda.check(Q, scene)
    assert many.dtype == bool and many.shape == (400,)
    assert many.tolist() == [panda.in_collision(q, scene) for q in Q]
    own = panda.check(Q)
    assert own.tolist() == [panda.self_collision(q) for q in Q]
    assert 0 < own.sum() < many.sum() < 400
    assert panda.check(np.zeros((0, 8))).shape == (0,)


def test_the_mimic_finger_moves_with_the_first(panda: RobotModel) -> None:
    q = panda.states["default"].copy()
    q[-1] = 0.03
    poses = panda.fk(q)
    T_hand_left = np.linalg.inv(poses["panda_hand"]) @ poses["panda_leftfinger"]
    T_hand_right = np.linalg.inv(poses["panda_hand"]) @ poses["panda_rightfinger"]
    np.testing.assert_allclose(T_hand_left[:3, 3], [0, 0.03, 0.0584], atol=1e-12)
    np.testing.assert_allclose(T_hand_right[:3, 3], [0, -0.03, 0.0584], atol=1e-12)


def test_only_set_q_moves_the_group_and_q_tells_where(robot: RobotModel) -> None:
    ready = robot.states["default"]
    robot.set_q(ready)
    np.testing.assert_array_equal(robot.q, ready)
    (hand,) = robot.shapes_of("panda_hand")
    T_world_hand = hand.world_T.copy()
    np.testing.assert_allclose(T_world_hand, robot.fk(ready)["panda_hand"], atol=1e-12)
    scene = shelf()
    assert robot.in_collision(FOLDED)  # asks Coal, about private copies of the shapes
    robot.colliding_pairs(FOLDED, scene)
    robot.distance(FOLDED, scene)
    robot.check([FOLDED, ready], scene)
    step = np.array([0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.0])
    robot.check_motion(ready, ready + step, scene)
    np.testing.assert_array_equal(robot.q, ready)
    np.testing.assert_array_equal(hand.world_T, T_world_hand)
    robot.set_q(FOLDED)
    np.testing.assert_allclose(hand.world_T, robot.fk(FOLDED)["panda_hand"], atol=1e-12)
    assert robot.part_of(hand) == "panda_hand"
    assert robot.group.iscollided(robot.shapes_of("panda_link0")[0])  # the group composes


def test_moving_the_group_moves_the_robot(robot: RobotModel) -> None:
    ready = robot.states["default"]
    scene = Scene()
    scene.add(Cuboid([0.2, 0.2, 0.2], pose=trans(2.0, 0.0, 0.5)), "box")
    assert not robot.in_collision(ready, scene)
    robot.group.T = trans(2.0 - 0.307, 0.0, 0.0)  # the hand (x = 0.307) into the box
    assert robot.in_collision(ready, scene)
    assert robot.check([ready], scene).tolist() == [True]
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


def test_an_attached_object_may_be_carried_past_the_range_of_given_poses(
    robot: RobotModel,
) -> None:
    # Found by the fuzzer: attached 999,999.9 m up link 1's z axis (within ±1e6 m), the part
    # is carried 0.333 m higher by the link, past the range of the poses a caller may give.
    # The robot's own placement of its elements is not a caller's pose: it is answered.
    robot.attach(Sphere(0.05), "panda_link1", trans(0.0, 0.0, 999_999.9), name="far")
    ready = robot.states["default"]
    assert robot.fk(ready)["panda_link1"][2, 3] + 999_999.9 > 1e6
    assert not robot.in_collision(ready)
    assert robot.check(np.stack([ready, ready])).tolist() == [False, False]
    robot.set_q(ready)
    far = robot.attachments["far"].shape
    assert far.world_T[2, 3] == pytest.approx(1_000_000.233, abs=1e-3)


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
    assert not robot.check([ready])[0]


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
        robot.check([robot.neutral, [0, 0, 0, -1, 0, 1, 0, 0.05]])
    with pytest.raises(InvalidArgumentError, match=r"Q must have shape \(N, 8\)"):
        robot.check(np.zeros(8))
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


def test_queries_leave_the_pickle_of_a_robot_and_its_scene_as_it_was(robot: RobotModel) -> None:
    # Workers keep an unpickled payload by the bytes of its pickle: a robot whose queries
    # changed its pickle would be sent and unpickled again at every batch call.
    scene = shelf()
    before = pickle.dumps((robot, scene))
    Q = robot.sample(20, 5)
    robot.check(Q, scene)
    robot.check_motion(Q[0], Q[1], scene)
    robot.colliding_pairs(Q[2], scene)
    robot.distance(Q[3], scene)
    robot.self_collision(Q[4])
    assert pickle.dumps((robot, scene)) == before


def test_pickled_robot_gives_equal_answers(robot: RobotModel) -> None:
    robot.attach(Cuboid([0.04, 0.04, 0.12]), "panda_hand", trans(0, 0, 0.2), name="part")
    robot.out_of_limits = "clip"
    copy: RobotModel = pickle.loads(pickle.dumps(robot))
    assert copy.attachments.keys() == {"part"} and copy.out_of_limits == "clip"
    assert copy.group is not robot.group
    Q = robot.sample(150, 4)
    scene = shelf()
    assert copy.check(Q, scene).tolist() == robot.check(Q, scene).tolist()
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
    assert panda.check(Q, scene).tolist() == theirs


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
    assert panda.check([ready], scene).tolist() == [True]
    scene.remove("b")
    assert not panda.in_collision(ready, scene)
    scene["a"].T = T_world_hand  # moved onto the hand
    assert panda.colliding_pairs(ready, scene)[-1] == ("panda_hand", "a")


def test_the_robot_in_its_own_scene_is_left_out(robot: RobotModel) -> None:
    scene = shelf()
    Q = robot.sample(50, 9)
    before = robot.check(Q, scene).tolist()
    scene.add(robot.group, "robot")
    assert robot.check(Q, scene).tolist() == before
    assert [robot.in_collision(q, scene) for q in Q] == before


# ------------------------------------------------------------------- check and executors


def test_check_is_the_name_and_in_collision_many_the_old_one(panda: RobotModel) -> None:
    Q = panda.sample(120, 31)
    scene = shelf()
    answers = panda.check(Q, scene)
    assert answers.tolist() == panda.in_collision_many(Q, scene).tolist()
    assert answers.tolist() == [panda.in_collision(q, scene) for q in Q]
    chunked = panda.check(Q, scene, chunk_size=7)  # serial, in chunks
    assert chunked.dtype == bool and chunked.tolist() == answers.tolist()
    assert panda.check(Q, scene, progress=True, chunk_size=50).tolist() == answers.tolist()
    assert panda.check(np.zeros((0, 8)), scene, chunk_size=5).shape == (0,)
    with pytest.raises(ShapeTypeError, match=r"executor must be a concurrent\.futures\.Executor"):
        panda.check(Q, scene, executor="processes")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="chunk_size must be"):
        panda.check(Q, scene, chunk_size=0)
    with pytest.raises(InvalidArgumentError, match=r"Q\[2\] must hold finite joint values"):
        panda.check([panda.neutral, panda.neutral, np.full(8, np.nan)], executor=None)


def test_check_and_check_motions_in_worker_processes(panda: RobotModel) -> None:
    from concurrent.futures import ProcessPoolExecutor

    scene = shelf()
    robot: RobotModel = pickle.loads(pickle.dumps(panda))
    robot.attach(Cuboid([0.04, 0.04, 0.12]), "panda_hand", trans(0, 0, 0.2), name="part")
    Q = robot.sample(300, 17)
    rng = np.random.default_rng(3)
    Q0 = robot.sample(10, rng)
    Q1 = np.clip(Q0 + rng.uniform(-0.5, 0.5, Q0.shape), robot.limits[:, 0], robot.limits[:, 1])
    with ProcessPoolExecutor(2) as pool:
        remote = robot.check(Q, scene, executor=pool, chunk_size=64)
        motions = robot.check_motions(Q0, Q1, scene, executor=pool, chunk_size=4)
    assert remote.tolist() == robot.check(Q, scene).tolist()
    assert 0 < remote.sum() < len(Q)
    assert motions.tolist() == robot.check_motions(Q0, Q1, scene).tolist()


def test_check_on_a_dask_cluster(panda: RobotModel) -> None:
    distributed = pytest.importorskip("distributed")
    scene = shelf()
    Q = panda.sample(200, 23)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        remote = panda.check(Q, scene, executor=client.get_executor(), chunk_size=50)
    assert remote.tolist() == panda.check(Q, scene).tolist()


def test_pickled_robot_keeps_its_allowed_pairs(robot: RobotModel) -> None:
    scene = table_scene()
    robot.allow("panda_link0", "table")
    copy: RobotModel = pickle.loads(pickle.dumps((robot, scene)))[0]
    assert copy.allowed_scene_pairs == [("panda_link0", "table")]
    Q = robot.sample(100, 5)
    assert copy.check(Q, scene).tolist() == robot.check(Q, scene).tolist()


# -------------------------------------------------------------- allowed scene pairs


def table_scene() -> Scene:
    """A table whose top is 1 mm above the bottom of the base link (which stands on it)."""
    scene = Scene()
    scene.add(Cuboid([1.6, 1.2, 0.05], pose=trans(0.3, 0.0, -0.024)), "table")
    return scene


def test_a_link_allowed_to_touch_a_scene_object(robot: RobotModel) -> None:
    scene = table_scene()
    ready = robot.states["default"]
    assert robot.colliding_pairs(ready, scene) == [("panda_link0", "table")]
    assert robot.distance(ready, scene).part == "panda_link0"
    robot.allow("panda_link0", "table")
    robot.allow("panda_link0", "table")  # twice is once
    assert robot.allowed_scene_pairs == [("panda_link0", "table")]
    assert not robot.in_collision(ready, scene)
    assert robot.colliding_pairs(ready, scene) == []
    clearance = robot.distance(ready, scene)
    assert clearance.part != "panda_link0" and clearance.other == "table"
    assert clearance.distance == pytest.approx(0.14, abs=0.01)  # link 1, 14 cm above it
    # The other links still collide with the table: the hand pushed down onto it.
    down = np.array([0.0, 1.3, 0.0, -1.0, 0.0, 1.5, 0.785, 0.02])
    assert robot.in_collision(down, scene) and not robot.self_collision(down)
    assert robot.colliding_pairs(down, scene)[:2] == [
        ("panda_link7", "table"),
        ("panda_hand", "table"),
    ]
    Q = robot.sample(200, 41)
    assert robot.check(Q, scene).tolist() == [robot.in_collision(q, scene) for q in Q]
    assert 0 < robot.check(Q, scene).sum() < len(Q)
    step = np.zeros(8)
    step[0] = 0.5
    assert robot.check_motion(ready - step, ready + step, scene)
    robot.disallow("panda_link0", "table")
    assert robot.allowed_scene_pairs == []
    assert robot.in_collision(ready, scene)
    assert not robot.check_motion(ready - step, ready + step, scene)


def test_allowed_pairs_of_attached_objects_and_errors(robot: RobotModel) -> None:
    ready = robot.states["default"]
    T_world_tip = robot.fk(ready)["panda_hand"] @ trans(0.0, 0.0, 0.25)
    scene = Scene()
    scene.add(Sphere(0.02, pose=trans(*T_world_tip[:3, 3])), "holder")
    robot.attach(Cuboid([0.02, 0.02, 0.1]), "panda_hand", trans(0, 0, 0.22), name="tool")
    assert robot.colliding_pairs(ready, scene) == [("tool", "holder")]
    robot.allow("tool", "holder")
    assert not robot.in_collision(ready, scene)
    robot.detach("tool")  # its allowed pairs go with it
    assert robot.allowed_scene_pairs == []
    with pytest.raises(RobotModelError, match="part 'tool' is not a link or attached object"):
        robot.allow("tool", "holder")
    with pytest.raises(RobotModelError, match="part 42 is not a link or attached object"):
        robot.allow(42, "holder")  # type: ignore[arg-type]
    with pytest.raises(ShapeTypeError, match="obstacle must be the name of a scene object"):
        robot.allow("panda_hand", "")
    with pytest.raises(ShapeTypeError, match=r"obstacle must be .* got None"):
        robot.disallow("panda_hand", None)  # type: ignore[arg-type]


def test_answers_follow_every_change_of_the_scene(robot: RobotModel) -> None:
    ready = robot.states["default"]
    T_world_hand = robot.fk(ready)["panda_hand"]
    step = np.zeros(8)
    step[0] = 0.3
    scene = Scene()
    far = Cuboid([0.1, 0.1, 0.1], pose=trans(2, 0, 0))
    scene.add(far, "far")
    revision = scene.revision

    def answers() -> tuple[bool, bool, set[str], str | None, bool]:
        return (
            robot.in_collision(ready, scene),
            bool(robot.check([ready], scene)[0]),
            {f"{a} - {b}" for a, b in robot.colliding_pairs(ready, scene) if a == "panda_hand"},
            robot.distance(ready, scene).other,
            robot.check_motion(ready - step, ready + step, scene),
        )

    assert answers() == (False, False, set(), "far", True)
    scene.add(Cuboid([0.04, 0.04, 0.04], pose=T_world_hand), "onto the hand")  # added
    assert scene.revision > revision
    assert answers() == (True, True, {"panda_hand - onto the hand"}, "onto the hand", False)
    scene["onto the hand"].T = trans(0.0, 2.0, 0.0)  # moved away
    assert answers() == (False, False, set(), "far", True)
    far.T = T_world_hand  # the other one moved in
    assert answers()[:3] == (True, True, {"panda_hand - far"})
    far.scale = [0.01, 0.01, 0.01]  # resized: now between the fingers, touching nothing
    far.T = T_world_hand @ trans(0.0, 0.0, 0.2)
    assert answers()[:3] == (False, False, set())
    assert robot.colliding_pairs(ready, scene) == []
    far.scale = [0.25, 0.25, 0.25]  # grown onto the fingertips
    assert answers()[:2] == (True, True)
    assert ("panda_leftfinger", "far") in robot.colliding_pairs(ready, scene)
    scene.remove("far")  # removed
    assert answers() == (False, False, set(), "onto the hand", True)
    scene.remove("onto the hand")
    assert answers() == (False, False, set(), None, True)


def test_the_grid_cull_of_single_calls_agrees_with_numpy(robot: RobotModel) -> None:
    """After a few single calls against unchanged obstacles, one configuration is culled on a
    grid in plain floats: the same pairs as the numpy cull, rotated boxes and half-spaces
    included, allowed pairs left out."""
    rng = np.random.default_rng(12)
    scene = Scene()
    for k in range(40):
        T = np.eye(4)
        R, upper = np.linalg.qr(rng.normal(size=(3, 3)))  # a random rotation
        R = R * np.sign(np.diag(upper))
        T[:3, :3] = R if np.linalg.det(R) > 0 else -R
        T[:3, 3] = rng.uniform([-1.2, -1.2, -0.2], [1.2, 1.2, 1.4])
        scene.add(Cuboid(rng.uniform(0.02, 0.15, 3), pose=T), f"box{k}")
    scene.add(HalfSpace([0.2, 0.0, 1.0], -0.15), "slope")
    robot.allow("panda_hand", "box3")
    robot.allow("panda_link0", "slope")
    robot.group.T = trans(0.1, -0.05, 0.02)
    Q = robot.sample(60, 13)
    answers = [robot.in_collision(q, scene) for q in Q[:8]]
    view = robot._view(scene)
    assert robot._obstacle_cache(view).grid is None  # culled in numpy so far
    answers += [robot.in_collision(q, scene) for q in Q[8:]]
    assert robot._obstacle_cache(view).grid is not None
    assert answers == robot.check(Q, scene).tolist()
    assert 0 < sum(answers) < len(Q)
    for q in Q:
        centres = robot._configuration(q)[2]
        grid_cull = robot._scene_candidates(centres, view)
        touching, near = robot._near(np.array(centres), view)
        element, obstacle = np.nonzero(touching)
        assert grid_cull == (element * len(view.shapes) + near[obstacle]).tolist()
