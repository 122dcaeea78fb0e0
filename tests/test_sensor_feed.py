"""How a scene's contacts reach the sensors: object indices from the query, forces read only
for the contacts a sensor senses.

The fast path (a :class:`~spatialcontact.scene.WorldContacts` of the sensor's own scene) must
give exactly what the leaf-by-leaf path gives (the same records as plain ``Contacts``), after
removals, re-additions and serial renumbering alike.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spatialcontact.scene.scene as scene_module
from spatialcontact import CollisionShapeGroup, Contacts, Cuboid, Scene, Sphere
from spatialcontact.sensors import (
    MatrixContactSensor,
    NamedContactSensor,
    SensorHub,
    resolve_forces,
)
from spatialcontact.sensors._common import ObjectMap, StepData
from spatialcontact.sensors._errors import SensorValueError


def at(x: float, y: float = 0.0, z: float = 0.0) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def row_of_balls(n: int, worlds: int = 0) -> Scene:
    """A slab (global) and ``n`` balls resting 1 cm into it, 1 m apart; with ``worlds``, ball
    ``i`` belongs to world ``i % worlds``."""
    scene = Scene()
    scene.add(Cuboid([1000.0, 10.0, 0.1], pose=at(0, 0, -0.05)), "ground")
    for _ in range(worlds):
        scene.add_world()
    for i in range(n):
        world = i % worlds if worlds else -1
        scene.add(Sphere(0.1, pose=at(float(i), 0, 0.09)), f"ball{i}", world=world)
    return scene


def leaf_by_leaf(scene: Scene, contacts: Contacts) -> tuple[list[int], list[int]]:
    """The object index of each contact's o1 and o2, from the scene's public methods."""
    first = [scene.index_of(scene.name_of(c.o1)) for c in contacts]
    second = [scene.index_of(scene.name_of(c.o2)) for c in contacts]
    return first, second


def test_query_indices_equal_the_leaf_lookups() -> None:
    scene = row_of_balls(6)
    contacts = scene.contacts()
    found = contacts._object_indices(scene)
    assert found is not None
    names, first, second = found
    assert names is scene.names
    assert (first.tolist(), second.tolist()) == leaf_by_leaf(scene, contacts)
    assert first.tolist() == [0] * 6 and second.tolist() == [1, 2, 3, 4, 5, 6]


def test_query_indices_of_another_scene_are_not_used() -> None:
    scene, other = row_of_balls(3), row_of_balls(3)
    contacts = scene.contacts()
    assert contacts._object_indices(other) is None
    # The sensor of the other scene then looks leaves up, and they are not in its scene.
    sensor = MatrixContactSensor(other, "ball*", counterparts="*")
    with pytest.raises(SensorValueError, match="is not in the scene the sensor reads"):
        sensor.update(contacts, forces=np.ones(len(contacts)))


def test_indices_after_removal_and_readding() -> None:
    scene = row_of_balls(5)
    scene.remove("ball1")
    scene.add(Sphere(0.1, pose=at(1.0, 0, 0.09)), "ball1")  # now last
    scene.remove("ball3")
    contacts = scene.contacts()
    found = contacts._object_indices(scene)
    assert found is not None
    assert (found[1].tolist(), found[2].tolist()) == leaf_by_leaf(scene, contacts)


def test_indices_of_pairs_with_several_contacts() -> None:
    scene = row_of_balls(3)
    feet = CollisionShapeGroup(
        [Sphere(0.1, pose=at(10.0, 0, 0.09)), Sphere(0.1, pose=at(10.5, 0, 0.09))]
    )
    scene.add(feet, "feet")  # one pair of objects, two pairs of leaves: two contacts
    scene.add(Sphere(0.1, pose=at(20.0, 0, 0.09)), "last")
    contacts = scene.contacts()
    assert len(contacts) == len(scene.collisions()) + 1 == 6
    found = contacts._object_indices(scene)
    assert found is not None
    assert found[1].tolist() == [0] * 6 and found[2].tolist() == [1, 2, 3, 4, 4, 5]
    assert (found[1].tolist(), found[2].tolist()) == leaf_by_leaf(scene, contacts)


def test_renumbering_keeps_every_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scene_module, "_SERIAL_LIMIT", 8)
    scene = row_of_balls(4)  # serials 0..4
    before = scene.collisions()
    for _ in range(5):  # serials pass 8: the objects are numbered again from 0
        scene.add(Sphere(0.05, pose=at(50.0, 0, 5.0)), "spare")
        scene.remove("spare")
    assert max(r.serial for r in scene._objects.values()) < 8
    scene.add(Sphere(0.1, pose=at(30.0, 0, 0.09)), "late")
    assert scene.collisions() == [*before, ("ground", "late")]  # still in the order added
    contacts = scene.contacts()
    found = contacts._object_indices(scene)
    assert found is not None
    assert (found[1].tolist(), found[2].tolist()) == leaf_by_leaf(scene, contacts)
    assert [r.serial for r in scene._objects.values()] == sorted(
        r.serial for r in scene._objects.values()
    )


def test_world_column_is_each_pairs_world() -> None:
    scene = row_of_balls(7, worlds=3)
    contacts = scene.contacts()
    expected = [
        max(scene.world_of(scene.name_of(c.o1)), scene.world_of(scene.name_of(c.o2)))
        for c in contacts
    ]
    assert contacts.world.tolist() == expected == [0, 1, 2, 0, 1, 2, 0]
    assert not contacts.world.flags.writeable


def test_world_column_outlives_the_scene() -> None:
    scene = row_of_balls(4, worlds=2)
    contacts = scene.contacts()
    del scene
    assert contacts.world.tolist() == [0, 1, 0, 1]


def test_step_sides_read_only_the_rows_asked_for() -> None:
    scene = row_of_balls(5)
    contacts = scene.contacts()
    objects = ObjectMap(scene)
    magnitudes = np.arange(1.0, 6.0)
    rows = np.array([4, 1])
    full, valid = resolve_forces(contacts, magnitudes)
    assert valid
    step = StepData.build(contacts, magnitudes)
    obj, other, packed = step.sides(objects, rows)
    assert obj.tolist() == [0, 0, 5, 2] and other.tolist() == [5, 2, 0, 0]
    # The normals point from the ground (o1) up into each ball: the ground is pushed down.
    assert packed[:, 0:3].tolist() == [[0, 0, -5.0], [0, 0, -2.0], [0, 0, 5.0], [0, 0, 2.0]]
    assert np.array_equal(packed[:2, 0:3], full[rows])
    assert packed[:, 3:6].tolist() == [[0.0] * 3] * 4  # all along the normal: no friction
    assert packed[:, 9].tolist() == [5.0, 2.0, 5.0, 2.0]
    assert np.allclose(packed[:2, 6:9], contacts.pos[rows] * [[5.0], [2.0]])
    assert "normal" in contacts._columns  # built by resolve_forces above, then read
    fresh = scene.contacts()  # a new query: its columns are not built
    step = StepData.build(fresh, np.arange(15.0).reshape(5, 3))
    assert np.array_equal(step.sides(objects, rows)[2][:2, 0:3], [[12, 13, 14], [3, 4, 5]])
    assert "normal" not in fresh._columns and "pos" not in fresh._columns
    assert np.array_equal(step.forces, np.arange(15.0).reshape(5, 3))


def random_scene(seed: int, n: int, worlds: int, removed: list[int]) -> Scene:
    rng = np.random.default_rng(seed)
    scene = Scene()
    scene.add(Cuboid([10.0, 10.0, 0.1], pose=at(0, 0, -0.05)), "ground")
    for _ in range(worlds):
        scene.add_world()
    for i in range(n):
        x, y = rng.uniform(-1.0, 1.0, 2)
        world = int(rng.integers(-1, worlds)) if worlds else -1
        size = rng.uniform(0.2, 0.6, 3).tolist()
        scene.add(Cuboid(size, pose=at(x, y, size[2] / 2 - 0.01)), f"box{i}", world=world)
    for i in removed:
        if i < n:
            scene.remove(f"box{i}")
    return scene


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 12),
    worlds=st.integers(0, 3),
    removed=st.lists(st.integers(0, 11), max_size=4, unique=True),
)
def test_matrix_sensor_fast_path_equals_the_leaf_path(
    seed: int, n: int, worlds: int, removed: list[int]
) -> None:
    scene = random_scene(seed, n, worlds, removed)
    boxes = [name for name in scene.names if name != "ground"]
    sensing = [name for name in boxes if not worlds or scene.world_of(name) >= 0]
    if not sensing:
        return
    contacts = scene.contacts(max_contacts_per_pair=2)
    forces = np.random.default_rng(seed).uniform(0.0, 5.0, len(contacts))
    fast = MatrixContactSensor(scene, sensing, counterparts="*")
    slow = MatrixContactSensor(scene, sensing, counterparts="*")
    fast.update(contacts, forces=forces)
    slow.update(Contacts(list(contacts)), forces=forces)  # plain records: leaf by leaf
    for name in ("total_force", "total_force_friction", "force_matrix", "position_matrix"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
    assert np.array_equal(fast.sensing_transforms, slow.sensing_transforms)
    # And by hand: each sensing object's total is the sum over its contacts, signed by side.
    full, _ = resolve_forces(contacts, forces)
    first, second = leaf_by_leaf(scene, contacts)
    names = scene.names
    assert fast.total_force is not None
    for row, index in enumerate(fast.sensing_indices):
        total = np.zeros(3)
        for k, (i, j) in enumerate(zip(first, second, strict=True)):
            total += (i == index) * full[k] - (j == index) * full[k]
        assert np.allclose(fast.total_force[row], total, atol=1e-12), names[index]


def test_a_hub_and_a_named_sensor_read_the_same_objects() -> None:
    scene = row_of_balls(3)
    named = NamedContactSensor(scene, ["ball1"])
    matrix = MatrixContactSensor(scene, "ball*", counterparts="ground")
    hub = SensorHub(scene, [named, matrix])
    hub.step(0.01, forces=lambda contacts: np.full(len(contacts), 2.0))
    # ground (o1) pushes each ball up with 2 N: the ball's row reads +2 N along z
    assert matrix.force_matrix is not None
    assert matrix.force_matrix[:, 0].tolist() == [[0.0, 0.0, 2.0]] * 3
    messages = named.contacts()
    assert [(m.collision1, m.collision2) for m in messages] == [("ground", "ball1")]
    assert messages[0].wrenches.body_2_force[0].tolist() == [0.0, 0.0, 2.0]


def test_object_map_shapes_follow_the_names() -> None:
    scene = row_of_balls(2)
    objects = ObjectMap(scene)
    assert objects.shapes == [scene[name] for name in scene.names]
    scene.remove("ball0")
    assert objects.shapes == [scene["ground"], scene["ball1"]]


def test_sensing_transforms_follow_moves_and_are_new_arrays() -> None:
    scene = row_of_balls(2)
    feet = CollisionShapeGroup([Sphere(0.1, pose=at(0.0, 0, 0.09))], pose=at(5.0))
    scene.add(feet, "feet")
    sensor = MatrixContactSensor(scene, ["ball1", "feet"], counterparts="ground")
    sensor.update(scene.contacts())
    first = sensor.sensing_transforms
    assert first[:, :3, 3].tolist() == [[1.0, 0.0, 0.09], [5.0, 0.0, 0.0]]
    sensor.update(scene.contacts())  # nothing moved: equal values, a new array
    assert np.array_equal(sensor.sensing_transforms, first)
    assert sensor.sensing_transforms is not first
    feet.T = at(6.0)
    scene["ball1"].T = at(1.5, 0, 0.09)
    sensor.update(scene.contacts())
    assert sensor.sensing_transforms[:, :3, 3].tolist() == [[1.5, 0.0, 0.09], [6.0, 0.0, 0.0]]
    feet[0].T = at(0.5, 0, 0.09)  # a leaf inside: the group's own pose is unchanged
    sensor.update(scene.contacts())
    assert sensor.sensing_transforms[1, :3, 3].tolist() == [6.0, 0.0, 0.0]
    assert first[:, :3, 3].tolist() == [[1.0, 0.0, 0.09], [5.0, 0.0, 0.0]]  # kept as given
