"""Multi-world scenes: worlds side by side, global objects shared (Newton's model).

Known answers are worked out by hand from the poses; the property tests compare the scene with
brute force over every pair of one world and the global objects.
"""

from __future__ import annotations

import itertools
import pickle
from typing import cast

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from spatialcontact import Capsule, CollisionShapeGroup, Cuboid, Scene, Sphere
from spatialcontact.errors import InvalidArgumentError, NotInSceneError, SceneError, ShapeTypeError
from spatialcontact.scene import WorldContacts
from spatialcontact.sensors import MatrixContactSensor
from spatialcontact.sensors._errors import SelectionError


def at(x: float, y: float = 0.0, z: float = 0.0) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def ground() -> Cuboid:
    """A 100 m slab whose top face is z = 0."""
    return Cuboid([100.0, 100.0, 0.1], pose=at(0, 0, -0.05))


def two_worlds() -> Scene:
    """Ground (global); world 0: ball on the ground, touching a box; world 1: the same poses
    (so the two worlds' objects overlap in space, and must still never pair)."""
    scene = Scene()
    scene.add(ground(), "ground")
    for w in (scene.add_world(), scene.add_world()):
        scene.add(Sphere(0.1, pose=at(0, 0, 0.05)), f"ball{w}", world=w)
        scene.add(Cuboid([0.2, 0.2, 0.2], pose=at(0.25, 0, 0.09)), f"box{w}", world=w)
    return scene


# ------------------------------------------------------------------------ the scene


def test_a_scene_without_worlds_is_one_implicit_world() -> None:
    scene = Scene()
    scene.add(ground(), "ground")
    scene.add(Sphere(0.1, pose=at(0, 0, 0.05)), "ball")
    assert scene.worlds == 0
    assert scene.world_of("ball") == -1 and scene.world_of("ground") == -1
    assert scene.collisions() == [("ground", "ball")]
    assert scene.in_collision_per_world().tolist() == [True]
    assert scene.collisions_per_world() == [[("ground", "ball")]]
    contacts = scene.contacts()
    assert isinstance(contacts, WorldContacts)
    assert contacts.world.tolist() == [-1]
    assert scene.in_collision(world=-1)


def test_known_pairs_per_world() -> None:
    # ball: radius 0.1 at z = 0.05 (5 cm into the ground); box: x in [0.15, 0.35], z in
    # [-0.01, 0.19] (1 cm into the ground). The ball reaches x = 0.1 < 0.15: no ball-box contact.
    scene = two_worlds()
    expected = [
        ("ground", "ball0"),
        ("ground", "box0"),
        ("ground", "ball1"),
        ("ground", "box1"),
    ]
    assert scene.collisions() == expected
    assert scene.collisions(world=0) == [("ground", "ball0"), ("ground", "box0")]
    assert scene.collisions(world=1) == [("ground", "ball1"), ("ground", "box1")]
    assert scene.collisions(world=-1) == []
    assert scene.collisions_per_world() == [expected[:2], expected[2:]]
    scene["box1"].T = at(0.15, 0, 0.09)  # into world 1's ball by 0.05, and world 0's
    assert scene.collisions(world=1) == [("ground", "ball1"), ("ground", "box1"), ("ball1", "box1")]
    assert scene.collisions(world=0) == [("ground", "ball0"), ("ground", "box0")]
    contacts = scene.contacts()
    names = [(scene.name_of(c.o1), scene.name_of(c.o2)) for c in contacts]
    assert names == scene.collisions()
    assert contacts.world.tolist() == [0, 0, 1, 1, 1]
    one = scene.contacts(world=1)
    assert one.world.tolist() == [1, 1, 1] and list(one) == list(contacts)[2:]


def test_global_global_pairs_are_world_minus_one() -> None:
    scene = Scene()
    scene.add(ground(), "ground")
    scene.add(Sphere(0.1, pose=at(5, 0, 0)), "rock")  # global, in the ground
    scene.add_world()
    scene.add(Sphere(0.1, pose=at(0, 0, 0.05)), "ball", world=0)
    assert scene.collisions() == [("ground", "rock"), ("ground", "ball")]
    assert scene.contacts().world.tolist() == [-1, 0]
    assert scene.collisions(world=-1) == [("ground", "rock")]
    assert scene.in_collision(world=-1) and scene.in_collision(world=0)
    assert scene.in_collision_per_world().tolist() == [True]
    scene["ball"].T = at(0, 0, 1)
    assert not scene.in_collision(world=0)
    assert scene.in_collision_per_world().tolist() == [False]
    assert scene.in_collision()


def test_global_added_before_and_after_worlds_pairs_with_every_world() -> None:
    scene = Scene()
    scene.add(Cuboid([1, 1, 0.1], pose=at(0, 0, -0.05)), "early")
    scene.add_world()
    scene.add(Sphere(0.1, pose=at(0, 0, 0.05)), "a", world=0)
    scene.add(Cuboid([1, 1, 0.1], pose=at(0, 0, 0.15)), "late")  # global, touches a's top
    scene.add_world()
    scene.add(Sphere(0.1, pose=at(0, 0, 0.05)), "b", world=1)
    assert scene.collisions_per_world() == [
        [("early", "a"), ("a", "late")],
        [("early", "b"), ("late", "b")],
    ]


def test_collide_and_distance_by_world() -> None:
    scene = two_worlds()
    probe = Sphere(0.05, pose=at(0.25, 0, 0.22))  # 0.02 into both boxes' top (z = 0.19)
    assert scene.collide(probe) == ["box0", "box1"]
    assert scene.collide(probe, world=1) == ["box1"]
    assert scene.collide(probe, world=-1) == []
    assert scene.collide(scene["ball1"]) == ["ground"]
    assert scene.collide(scene["ground"], world=0) == ["ball0", "box0"]
    far = Sphere(0.1, pose=at(0, 0, 1.0))
    d, name, _, _ = scene.distance(far, world=1)
    # box1's nearest point is its edge (0.15, 0, 0.19); ball1's top, at z = 0.15, is farther
    assert name == "box1" and d == pytest.approx(np.hypot(0.15, 0.81) - 0.1)
    d, name, _, _ = scene.distance(far, world=-1)
    assert name == "ground" and d == pytest.approx(0.9)
    # an object of a world is measured against its world and the global objects only
    d, name, _, _ = scene.distance(scene["ball0"])
    assert name == "ground" and d == pytest.approx(-0.05)
    assert scene.distance(scene["ball0"], world=1) == (np.inf, None, None, None)
    assert scene.collide(scene["box1"], world=0) == []
    assert scene.collide(scene["box1"], world=-1) == ["ground"]


def test_add_world_and_world_errors() -> None:
    scene = Scene()
    with pytest.raises(InvalidArgumentError, match=r"world must be -1 .* no worlds .* got 0"):
        scene.add(Sphere(0.1), "a", world=0)
    assert scene.add_world() == 0 and scene.add_world() == 1 and scene.worlds == 2
    with pytest.raises(InvalidArgumentError, match=r"worlds 0 to 1; got 2"):
        scene.add(Sphere(0.1), "a", world=2)
    with pytest.raises(InvalidArgumentError, match=r"got -2"):
        scene.add(Sphere(0.1), "a", world=-2)
    with pytest.raises(ShapeTypeError, match=r"world must be an integer .* got True"):
        scene.add(Sphere(0.1), "a", world=True)
    with pytest.raises(ShapeTypeError, match=r"world must be an integer .* got '0'"):
        scene.collisions(world="0")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=r"world must be .* got 5"):
        scene.in_collision(world=5)
    with pytest.raises(InvalidArgumentError, match=r"got 5"):
        scene.contacts(world=5)
    with pytest.raises(InvalidArgumentError, match=r"got 5"):
        scene.collide(Sphere(0.1), world=5)
    with pytest.raises(InvalidArgumentError, match=r"got 5"):
        scene.distance(Sphere(0.1), world=5)
    with pytest.raises(NotInSceneError, match=r"name 'nope' is not in this scene"):
        scene.world_of("nope")
    assert len(scene) == 0  # nothing was added by the refused calls
    shared = Sphere(0.1)
    scene.add(shared, "x", world=0)
    with pytest.raises(SceneError, match=r"already in this scene as 'x'"):
        scene.add(shared, "y", world=1)
    group = CollisionShapeGroup([Sphere(0.1)])
    scene.add(group, "g", world=0)
    with pytest.raises(SceneError, match=r"belongs to a group"):
        scene.add(group[0], "leaf", world=1)


# ------------------------------------------------------------------------ replicate


def arm(n: int = 3) -> CollisionShapeGroup:
    """Capsules stacked along z, each overlapping the next (r 0.05, length 0.3, 0.3 apart)."""
    return CollisionShapeGroup(
        [Capsule(0.05, 0.3, pose=at(0, 0, 0.3 * i + 0.25)) for i in range(n)]
    )


def test_replicate_copies_world_zero_with_groups_and_allowed_pairs() -> None:
    scene = Scene()
    scene.add(ground(), "ground")
    scene.add_world()
    links = arm()
    scene.add(links, "arm", world=0, self_collision=True)
    scene.allow(links[0], links[1])  # the adjacent pairs, as an SRDF's
    scene.allow(links[1], links[2])
    scene.add(Cuboid([0.2, 0.2, 0.2], pose=at(0.5, 0, 0.1)), "box", world=0)
    scene.allow("box", "ground")  # a pair with a global object: copied too
    assert scene.collisions() == []  # the base capsule ends at z = 0.25 - 0.15 - 0.05 = 0.05
    assert scene.replicate(2, spacing=[0, 3.0, 0]) == [1, 2]
    assert scene.names == ("ground", "arm", "box", "arm/1", "box/1", "arm/2", "box/2")
    assert [scene.world_of(n) for n in scene.names] == [-1, 0, 0, 1, 1, 2, 2]
    copy = cast(CollisionShapeGroup, scene["arm/2"])
    assert copy is not links and all(a is not b for a, b in zip(copy, links, strict=True))
    np.testing.assert_allclose(scene["box/2"].T, at(0.5, 6.0, 0.1))
    np.testing.assert_allclose(copy.T, at(0, 6.0, 0))
    assert scene.is_allowed(copy[0], copy[1]) and scene.is_allowed("box/2", "ground")
    assert not scene.is_allowed(copy[0], links[1])
    assert scene.collisions() == []
    copy[2].T = at(
        0, 0, 0.35
    )  # (group frame) into link 0 of its own arm, not adjacent: a self-collision
    assert scene.collisions_per_world() == [[], [], [("arm/2", "arm/2")]]
    scene["box/1"].T = at(0, 3.0, 0.1)  # into its arm's base
    assert scene.collisions(world=1) == [("arm/1", "box/1")]
    assert scene.collisions(world=0) == []


def test_replicate_errors_change_nothing() -> None:
    scene = Scene()
    with pytest.raises(SceneError, match=r"world 0, but the scene has no worlds"):
        scene.replicate(2)
    scene.add_world()
    with pytest.raises(SceneError, match=r"world 0 is empty"):
        scene.replicate(2)
    scene.add(Sphere(0.1), "a", world=0)
    scene.add(Sphere(0.1, pose=at(9, 0, 0)), "a/2")
    with pytest.raises(SceneError, match=r"copy of 'a' a/2, which is already used"):
        scene.replicate(2)
    with pytest.raises(InvalidArgumentError, match=r"n must be an integer >= 1, got 0"):
        scene.replicate(0)
    with pytest.raises(ShapeTypeError, match=r"n must be an integer >= 1, got 1.5"):
        scene.replicate(1.5)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match=r"spacing must hold exactly 3 values"):
        scene.replicate(1, spacing=[1, 2])
    with pytest.raises(InvalidArgumentError, match=r"spacing"):
        scene.replicate(1, spacing=float("nan"))
    assert scene.worlds == 1 and scene.names == ("a", "a/2")


def test_removing_an_object_of_one_world_leaves_the_others() -> None:
    scene = two_worlds()
    before = scene.collisions(world=1)
    removed = scene.remove("box0")
    assert removed is not scene["box1"]
    assert scene.collisions(world=0) == [("ground", "ball0")]
    assert scene.collisions(world=1) == before
    assert "box0" not in scene and scene.world_of("box1") == 1
    scene.remove("ground")  # a global one leaves every world
    assert scene.collisions() == []
    scene["ball1"].T = at(0.15, 0, 0.1)  # into box1
    assert scene.collisions() == [("ball1", "box1")]


def test_pickling_keeps_worlds() -> None:
    scene = two_worlds()
    scene["box1"].T = at(0.15, 0, 0.09)
    loaded = pickle.loads(pickle.dumps(scene))
    assert loaded.worlds == 2
    assert [loaded.world_of(n) for n in loaded.names] == [scene.world_of(n) for n in scene.names]
    assert loaded.collisions_per_world() == scene.collisions_per_world()
    assert loaded.contacts().world.tolist() == scene.contacts().world.tolist()


def test_each_broadphase_holds_only_its_world_and_the_globals() -> None:
    """The structure that keeps Coal from ever seeing a cross-world pair: no broadphase holds
    leaves of two worlds."""
    scene = two_worlds()
    scene.replicate(3)
    scene.collisions()
    for k, tree in enumerate(scene._worlds):
        worlds = {scene._owner(shape).world for shape in tree._by_shape}  # type: ignore[union-attr]
        assert worlds == {-1, k}
    assert {scene._owner(s).world for s in scene._broadphase._by_shape} == {-1}  # type: ignore[union-attr]


# ------------------------------------------------------------------------ properties


def brute_force(scene: Scene) -> set[tuple[str, str]]:
    """Every pair of one world (or with a global object) whose shapes touch."""
    found = set()
    for a, b in itertools.combinations(scene.names, 2):
        wa, wb = scene.world_of(a), scene.world_of(b)
        if wa >= 0 and wb >= 0 and wa != wb:
            continue
        if scene[a].iscollided(scene[b]):
            found.add((a, b))
    return found


coordinate = st.floats(-0.6, 0.6, allow_nan=False)
placement = st.tuples(coordinate, coordinate, coordinate)


@given(
    world0=st.lists(placement, min_size=1, max_size=5),
    globals_=st.lists(placement, max_size=2),
    copies=st.integers(1, 4),
    moves=st.lists(st.tuples(st.integers(0, 100), placement), max_size=25),
)
def test_no_pair_ever_spans_two_worlds(
    world0: list[tuple[float, float, float]],
    globals_: list[tuple[float, float, float]],
    copies: int,
    moves: list[tuple[int, tuple[float, float, float]]],
) -> None:
    scene = Scene()
    for i, p in enumerate(globals_):
        scene.add(Cuboid([0.3, 0.3, 0.3], pose=at(*p)), f"g{i}")
    scene.add_world()
    for i, p in enumerate(world0):
        scene.add(
            Sphere(0.2, pose=at(*p)) if i % 2 else Cuboid([0.3, 0.2, 0.2], pose=at(*p)),
            f"o{i}",
            world=0,
        )
    scene.replicate(copies)  # every world in the same place: cross-world shapes overlap
    assert set(scene.collisions()) == brute_force(scene)
    names = scene.names
    for k, (index, p) in enumerate(moves):  # small and large batches of moves
        scene[names[index % len(names)]].T = at(*p)
        if k % 7 == 6:
            assert set(scene.collisions()) == brute_force(scene)
    expected = brute_force(scene)
    assert set(scene.collisions()) == expected
    for w in range(scene.worlds):
        assert set(scene.collisions(world=w)) == {
            (a, b) for a, b in expected if w in (scene.world_of(a), scene.world_of(b))
        }
    assert scene.contacts().world.tolist() == [
        max(scene.world_of(a), scene.world_of(b)) for a, b in scene.collisions()
    ]  # one contact per pair of leaves, and every object here is one leaf


# ------------------------------------------------------------------------ the matrix sensor


def sensor_scene() -> Scene:
    """Newton's documented layout: a global ground and wall; world 0 with a ball, two boxes;
    world 1 with a ball and one box. Indices: ground 0, b0 1, p0 2, q0 3, b1 4, p1 5, wall 6."""
    scene = Scene()
    scene.add(ground(), "ground")
    scene.add_world()
    scene.add_world()
    scene.add(Sphere(0.1, pose=at(0, 0, 0.05)), "b0", world=0)
    scene.add(Cuboid([0.2, 0.2, 0.2], pose=at(0.2, 0, 0.1)), "p0", world=0)
    scene.add(Cuboid([0.2, 0.2, 0.2], pose=at(-0.2, 0, 0.1)), "q0", world=0)
    scene.add(Sphere(0.1, pose=at(0, 0, 0.05)), "b1", world=1)
    scene.add(Cuboid([0.2, 0.2, 0.2], pose=at(0.2, 0, 0.1)), "p1", world=1)
    scene.add(Cuboid([0.1, 1.0, 1.0], pose=at(0.09, 0, 0)), "wall")  # global, into both balls
    return scene


def test_sensor_global_counterparts_first_then_the_worlds_own() -> None:
    scene = sensor_scene()
    sensor = MatrixContactSensor(scene, ["b0", "b1"], counterparts="*")
    assert sensor.sensing_indices == [1, 4]
    # globals (ground 0, wall 6) first, in index order, then the world's own, in index order
    assert sensor.counterpart_indices == [[0, 6, 2, 3], [0, 6, 5]]
    assert sensor.counterpart_names == [["ground", "wall", "p0", "q0"], ["ground", "wall", "p1"]]
    assert sensor.force_matrix is not None and sensor.force_matrix.shape == (2, 4, 3)


def test_sensor_forces_per_world_with_zero_padding() -> None:
    scene = sensor_scene()
    sensor = MatrixContactSensor(scene, "b*", counterparts=["ground", "wall", "p*", "q*"])
    contacts = scene.contacts()
    pairs = [(scene.name_of(c.o1), scene.name_of(c.o2)) for c in contacts]
    assert ("ground", "b0") in pairs and ("b1", "wall") in pairs
    for (a, b), w in zip(pairs, contacts.world, strict=True):
        assert {scene.world_of(a), scene.world_of(b)} <= {-1, int(w)}
    forces = np.zeros((len(contacts), 3))
    for k in range(len(pairs)):
        forces[k] = (1.0 + k, 0.0, 0.0)  # on o1 from o2
    sensor.update(contacts, forces=forces)
    fm = sensor.force_matrix
    assert fm is not None
    expected = np.zeros((2, 4, 3))
    for k, (a, b) in enumerate(pairs):
        for row, name in enumerate(("b0", "b1")):
            cols = sensor.counterpart_names[row]
            if a == name and b in cols:
                expected[row, cols.index(b)] += forces[k]
            if b == name and a in cols:
                expected[row, cols.index(a)] -= forces[k]
    np.testing.assert_allclose(fm, expected)
    assert not fm[1, 3].any()  # world 1 has one counterpart fewer: its last column is padding
    assert fm[0, 0].any() and fm[1, 0].any()  # the ground reaches both worlds
    assert fm[0, 1].any() and fm[1, 1].any()  # and so does the wall


def test_sensor_in_the_implicit_world_is_unchanged() -> None:
    scene = Scene()
    scene.add(Sphere(0.1), "b")
    scene.add(ground(), "ground")
    scene.add(Sphere(0.1, pose=at(0.15, 0, 0)), "a")
    sensor = MatrixContactSensor(scene, "*", counterparts="*")
    assert sensor.counterpart_indices == [[1, 2], [0, 2], [0, 1]]


def test_sensor_refuses_a_global_sensing_object_when_there_are_worlds() -> None:
    scene = sensor_scene()
    with pytest.raises(SelectionError, match=r"global object 'ground' \(world -1\)"):
        MatrixContactSensor(scene, "*", counterparts="*")


def test_many_moves_at_once_and_a_moving_global_object() -> None:
    """More than the broadphase's tier limit moved in one world (all its pairs asked again),
    and a global object moved (its pairs in every world found again)."""
    rng = np.random.default_rng(5)
    scene = Scene()
    scene.add(ground(), "ground")
    scene.add(Cuboid([1.0, 1.0, 1.0], pose=at(3, 0, 0)), "crate")  # global, away from all
    scene.add_world()
    for i in range(24):
        scene.add(Sphere(0.15, pose=at(*rng.uniform(-0.6, 0.6, 3))), f"s{i}", world=0)
    scene.replicate(2)
    assert set(scene.collisions()) == brute_force(scene)
    for i in range(24):  # every object of world 1 at once
        scene[f"s{i}/1"].T = at(*rng.uniform(-0.6, 0.6, 3))
    assert set(scene.collisions()) == brute_force(scene)
    assert scene.collisions(world=0) != scene.collisions(world=1)  # world 1 alone moved
    scene["crate"].T = at(0, 0, 0)  # into objects of every world
    expected = brute_force(scene)
    assert set(scene.collisions()) == expected
    for w in range(3):
        assert any(a == "crate" and scene.world_of(b) == w for a, b in expected)
    scene["ground"].T = at(0, 0, 5)  # the ground leaves every world
    assert set(scene.collisions()) == brute_force(scene)
    assert not any("ground" in pair for pair in scene.collisions())
