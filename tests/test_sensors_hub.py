"""SensorHub on a real Scene: one query and one force computation per step, fed to all sensors.

Also checks that the core package never imports the sensors, and the sensors never import
matplotlib until something is drawn.
"""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import trans

import spatialcontact as sc
from spatialcontact.sensors import (
    MatrixContactSensor,
    NamedContactSensor,
    ObjectContactSensor,
    PenaltyForce,
    SensorHub,
    SensorTypeError,
    SensorValueError,
)


class Table:
    """A table whose top is the plane z = 0, a unit box above it and a wall at x = 3."""

    def __init__(self) -> None:
        self.scene = sc.Scene()
        self.table = sc.Cuboid([4, 4, 1], pose=trans(0, 0, -0.5))
        self.box = sc.Cuboid([1, 1, 1], pose=trans(0, 0, 2))
        self.wall = sc.Cuboid([1, 4, 4], pose=trans(3, 0, 2))
        self.scene.add(self.table, "table")
        self.scene.add(self.box, "box")
        self.scene.add(self.wall, "wall")

    def place_box(self, x: float, z: float) -> None:
        self.box.T = trans(x, 0, z)


@pytest.fixture
def world() -> Table:
    return Table()


def test_one_step_feeds_all_three_kinds(world: Table) -> None:
    on_box = ObjectContactSensor(world.box)
    matrix = MatrixContactSensor(world.scene, "box", counterparts="*")
    named = NamedContactSensor(world.scene, ["box"])
    hub = SensorHub(world.scene, [on_box, matrix, named], force_model=PenaltyForce(1e4))
    world.place_box(0.0, 0.49)  # bottom face at z = -0.01: overlap 0.01 with the table
    contacts = hub.step(0.01)
    assert len(contacts) == 1 and hub.contacts is contacts and hub.forces_valid
    # 1e4 N/m x 0.01 m = 100 N, pushing the box (o2) up
    np.testing.assert_allclose(on_box.force, [0, 0, 100], atol=1e-6)
    assert on_box.forces_valid and on_box.in_contact and on_box.started
    assert on_box.partners == [world.table] and on_box.contact_time == 0.01
    np.testing.assert_allclose(on_box.record_forces, [[0, 0, 100]], atol=1e-6)
    assert matrix.total_force is not None and matrix.force_matrix is not None
    np.testing.assert_allclose(matrix.total_force, [[0, 0, 100]], atol=1e-6)
    np.testing.assert_allclose(matrix.force_matrix, [[[0, 0, 100], [0, 0, 0]]], atol=1e-6)
    (message,) = named.contacts()
    assert (message.collision1, message.collision2, message.time) == ("table", "box", 0.01)
    np.testing.assert_allclose(message.wrenches.body_2_force, [[0, 0, 100]], atol=1e-6)
    np.testing.assert_allclose(message.normals, [[0, 0, -1]], atol=1e-9)  # box into table
    np.testing.assert_allclose(hub.forces, [[0, 0, -100]], atol=1e-6)  # on the table (o1)


def test_timers_through_scripted_poses(world: Table) -> None:
    on_box = ObjectContactSensor(world.box)
    on_wall = ObjectContactSensor(world.wall)
    hub = SensorHub(world.scene, [on_box, on_wall])
    # (x, z) of the box per 0.25 s step; the table top is z = 0, the wall face is x = 2.5.
    script = [
        ((0.0, 2.0), False, 0.0, 0.25),  # in the air
        ((0.0, 0.49), True, 0.25, 0.0),  # lands
        ((1.0, 0.49), True, 0.5, 0.0),  # slides
        ((2.01, 0.49), True, 0.75, 0.0),  # slides into the wall too
        ((2.01, 2.0), True, 1.0, 0.0),  # lifted, still against the wall
        ((0.0, 2.0), False, 0.0, 0.25),  # free
    ]
    wall_contact = [False, False, False, True, True, False]
    for k, ((x, z), touching, contact_time, air_time) in enumerate(script):
        world.place_box(x, z)
        hub.step(0.25)
        assert on_box.in_contact is touching, f"step {k}"
        assert (on_box.contact_time, on_box.air_time) == (contact_time, air_time), f"step {k}"
        assert on_wall.in_contact is wall_contact[k], f"step {k}"
        assert not on_box.forces_valid and not on_box.force.any()  # no force model
    assert on_box.ended and not on_box.started
    assert on_wall.ended and on_wall.air_time == 0.25
    assert hub.time == 1.5


def test_partners_are_leaves_from_the_scene(world: Table) -> None:
    on_box = ObjectContactSensor(world.box)
    hub = SensorHub(world.scene, [on_box])
    world.place_box(2.01, 0.49)  # on the table and against the wall
    hub.step(0.1)
    assert on_box.partners == [world.table, world.wall]
    normals = sorted(r.normal.round(6).tolist() for r in on_box.reports)
    assert normals == [[-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]  # pushed back from the wall, up


def test_hub_feeds_as_the_written_loop_does(world: Table) -> None:
    # The hub's vectorised feed must match clear / add / add_force / tick written by hand.
    world.place_box(2.01, 0.49)  # on the table and against the wall
    by_hub, by_hand = ObjectContactSensor(world.box), ObjectContactSensor(world.box)
    hub = SensorHub(world.scene, [by_hub], force_model=PenaltyForce(1e4))
    contacts = hub.step(0.1)
    forces = hub.forces
    by_hand.clear()
    net = np.zeros(3)
    for c, f in zip(contacts, forces, strict=True):
        sign = 1.0 if c.o1 is world.box else -1.0  # forces are on o1 from o2
        by_hand.add(c, force=sign * f)
        net += sign * f
    by_hand.add_force(net)
    by_hand.tick(0.1)
    assert by_hub.records == by_hand.records and by_hub.partners == by_hand.partners
    np.testing.assert_allclose(by_hub.record_forces, by_hand.record_forces)
    np.testing.assert_allclose(by_hub.force, by_hand.force)
    # 0.01 m into the table and 0.01 m into the wall, 1e4 N/m: 100 N up and 100 N back
    np.testing.assert_allclose(by_hub.force, [-100, 0, 100], atol=1e-6)
    assert (by_hub.contact_time, by_hub.started) == (by_hand.contact_time, by_hand.started)


def test_many_sensors_on_one_step_read_as_one_sensor_alone() -> None:
    # A step's contacts are read record by record for the first sensors, then worked out
    # once for all of them when enough rows were asked for (normals, positions, both sides
    # of each contact): every sensor must read what it reads alone, in either regime.
    scene = sc.Scene()
    scene.add(sc.Cuboid([40.0, 40.0, 1.0], pose=trans(0, 0, -0.5)), "table")
    for b in range(12):
        spheres = [sc.Sphere(0.1, pose=trans(0.25 * k, 0, 0.09 - 0.002 * k)) for k in range(5)]
        scene.add(sc.CollisionShapeGroup(spheres, pose=trans(1.5 * b, 0, 0)), f"brick_{b:02d}")
    contacts = scene.contacts()
    assert len(contacts) == 60

    def make() -> list[Any]:
        return [MatrixContactSensor(scene, [1 + b], counterparts="*") for b in range(12)] + [
            MatrixContactSensor(scene, "*", counterparts="*"),
            ObjectContactSensor(scene["table"]),
        ]

    together = make()
    SensorHub(scene, together, force_model=PenaltyForce(1e4)).feed(contacts, 0.1)
    for k, alone in enumerate(make()):
        SensorHub(scene, [alone], force_model=PenaltyForce(1e4)).feed(scene.contacts(), 0.1)
        for name in ("force_matrix", "position_matrix", "force"):
            if hasattr(alone, name):
                mine, theirs = getattr(together[k], name), getattr(alone, name)
                np.testing.assert_allclose(mine, theirs, atol=1e-9)
    # brick_00's 5 spheres dip 0.010, 0.012, ... 0.018 m: 1e4 N/m pushes it up by 700 N
    np.testing.assert_allclose(together[0].force_matrix[0, 0], [0.0, 0.0, 700.0], atol=1e-9)


def test_caller_forces_override_the_model(world: Table) -> None:
    on_box = ObjectContactSensor(world.box)
    hub = SensorHub(world.scene, [on_box], force_model=PenaltyForce(1e4))
    world.place_box(0.0, 0.49)
    hub.step(0.1, forces=[[0.0, 0.0, -7.0]])  # on the table (o1) from the box
    np.testing.assert_allclose(on_box.force, [0, 0, 7])
    hub.step(0.1, forces=lambda contacts: np.full(len(contacts), 3.0))  # magnitudes
    np.testing.assert_allclose(on_box.force, [0, 0, 3], atol=1e-9)
    with pytest.raises(SensorValueError, match=r"forces must have shape \(1, 3\) or \(1,\)"):
        hub.step(0.1, forces=[1.0, 2.0])


def test_without_forces_sensors_say_so(world: Table) -> None:
    on_box = ObjectContactSensor(world.box)
    matrix = MatrixContactSensor(world.scene, "box")
    named = NamedContactSensor(world.scene, ["box"])
    hub = SensorHub(world.scene, [on_box, matrix, named])
    world.place_box(0.0, 0.49)
    hub.step(0.1)
    assert not hub.forces_valid and not on_box.forces_valid
    assert not matrix.forces_valid and not named.forces_valid
    assert on_box.in_contact and not on_box.force.any()


def test_free_step_with_a_force_model_is_a_zero_measurement(world: Table) -> None:
    on_box = ObjectContactSensor(world.box)
    hub = SensorHub(world.scene, [on_box], force_model=PenaltyForce(1e4))
    hub.step(0.1)  # the box is in the air
    assert on_box.forces_valid and not on_box.force.any() and not on_box.in_contact


def test_damping_uses_the_hub_step(world: Table) -> None:
    on_box = ObjectContactSensor(world.box)
    hub = SensorHub(world.scene, [on_box], force_model=PenaltyForce(1e4, damping=1e3))
    world.place_box(0.0, 0.49)
    hub.step(0.01)  # first step: no history, 1e4 x 0.01 = 100 N
    np.testing.assert_allclose(on_box.force, [0, 0, 100], atol=1e-6)
    world.place_box(0.0, 0.48)  # overlap 0.02, rate (0.02 - 0.01) / 0.01 = 1 m/s
    hub.step(0.01)  # 0.02 x (1e4 + 1e3 x 1) = 220 N
    np.testing.assert_allclose(on_box.force, [0, 0, 220], atol=1e-6)
    hub.step(0.01, approach_speed=[2.0])  # given: 0.02 x (1e4 + 2e3) = 240 N
    np.testing.assert_allclose(on_box.force, [0, 0, 240], atol=1e-6)


def test_named_sensor_in_a_hub_is_throttled(world: Table) -> None:
    named = NamedContactSensor(world.scene, ["box"], update_rate=20.0)  # every 0.05 s
    hub = SensorHub(world.scene, [named])
    world.place_box(0.0, 0.49)
    updates = []
    named.connect_updated(lambda: updates.append(named.last_update_time))
    for _ in range(10):
        hub.step(0.02)
    # 0.02 steps: 0.06 (delay 0.01), 0.1 (0.04 + 0.01 = 0.05, delay 0), 0.16, 0.2
    assert updates == [0.06, 0.1, 0.16, 0.2]
    assert [m.time for m in named.contacts()] == [0.18, 0.2]  # the steps since 0.16


def test_time_is_kept_in_whole_nanoseconds(world: Table) -> None:
    hub = SensorHub(world.scene, [])
    for _ in range(10):
        hub.step(0.1)
    assert hub.time == 1.0  # not 0.9999999999999999


def test_self_contact_inside_an_object(world: Table) -> None:
    left, right = (
        sc.Cuboid([1, 1, 1], pose=trans(0, 0, 0)),
        sc.Cuboid([1, 1, 1], pose=trans(0.9, 0, 0)),
    )
    arm = sc.CollisionShapeGroup([left, right], pose=trans(0, 10, 5))
    world.scene.add(arm, "arm", self_collision=True)
    on_arm = ObjectContactSensor(arm)
    matrix = MatrixContactSensor(world.scene, "arm", counterparts="*")
    hub = SensorHub(world.scene, [on_arm, matrix], force_model=PenaltyForce(100.0))
    contacts = hub.step(0.1)
    assert len(contacts) == 1 and contacts[0].o1 is left and contacts[0].o2 is right
    # the arm touches itself: a contact, but the two forces on it cancel
    assert on_arm.in_contact and on_arm.partners == [right] and on_arm.forces_valid
    np.testing.assert_allclose(on_arm.force, 0.0, atol=1e-9)
    assert matrix.total_force is not None and matrix.force_matrix is not None
    np.testing.assert_allclose(matrix.total_force, 0.0, atol=1e-9)
    assert matrix.counterpart_indices == [[0, 1, 2]] and not matrix.force_matrix.any()


def test_feed_already_queried_contacts(world: Table) -> None:
    on_box = ObjectContactSensor(world.box)
    hub = SensorHub(world.scene, [on_box], force_model=PenaltyForce(1e4))
    world.place_box(0.0, 0.49)
    contacts = world.scene.contacts()
    hub.feed(contacts, 0.05)
    assert on_box.in_contact and hub.contacts is contacts and hub.time == 0.05


def test_reset(world: Table) -> None:
    on_box = ObjectContactSensor(world.box)
    named = NamedContactSensor(world.scene, ["box"])
    model = PenaltyForce(1e4, damping=1e3)
    hub = SensorHub(world.scene, [on_box, named], force_model=model)
    world.place_box(0.0, 0.49)
    hub.step(0.5)
    hub.reset()
    assert hub.time == 0.0 and len(hub.contacts) == 0 and not hub.forces_valid
    assert on_box.contact_time == 0.0 and named.last_update_time == 0.0
    hub.step(0.25)  # the model forgot the overlap: no rate, 100 N
    np.testing.assert_allclose(on_box.force, [0, 0, 100], atol=1e-6)
    assert named.last_update_time == 0.25


def test_a_single_sensor_is_accepted(world: Table) -> None:
    on_box = ObjectContactSensor(world.box)
    assert SensorHub(world.scene, on_box).sensors == (on_box,)  # type: ignore[arg-type]


def test_construction_errors(world: Table) -> None:
    other = Table()
    with pytest.raises(SensorTypeError, match="sensors must be ObjectContactSensor"):
        SensorHub(world.scene, ["box"])  # type: ignore[list-item]
    with pytest.raises(SensorTypeError, match="sensors must be an iterable of sensors, got 3"):
        SensorHub(world.scene, 3)  # type: ignore[arg-type]
    with pytest.raises(SensorValueError, match="reads another scene than the hub's"):
        SensorHub(world.scene, [MatrixContactSensor(other.scene, "box")])
    with pytest.raises(SensorTypeError, match="force_model must be a PenaltyForce or None"):
        SensorHub(world.scene, [], force_model=100.0)  # type: ignore[arg-type]
    with pytest.raises(SensorValueError, match="max_contacts_per_pair must be an integer >= 1"):
        SensorHub(world.scene, [], max_contacts_per_pair=0)
    with pytest.raises(SensorTypeError, match=r"scene must be a spatialcontact\.Scene"):
        SensorHub(None, [])


# ------------------------------------------------------------------ scene membership


def touching_spheres() -> sc.Scene:
    """The reviewer's scene: spheres "a" and "b" of radius 0.1, 0.15 apart (0.05 overlap)."""
    scene = sc.Scene()
    scene.add(sc.Sphere(0.1), "a")
    scene.add(sc.Sphere(0.1, pose=trans(0.15, 0, 0)), "b")
    return scene


OFF_SCENE = (
    r"^sensor ObjectContactSensor\(shape=Sphere, in_contact=False, contacts=0\) is on "
    r"Sphere\(radius=0\.1, .*\), a shape not in the hub's scene Scene\(2 objects: \['a', "
    r"'b'\]\): no contact names it, so the sensor would never fire \(a copy of a scene object "
    r"is a new shape; mount the sensor on the object itself, scene\[name\], and add it to the "
    r"scene before making the hub\)$"
)


@pytest.mark.parametrize(
    "make",
    [
        lambda shape: sc.Sphere(0.1),  # equal to "a", but another shape
        copy.copy,
        copy.deepcopy,
        lambda shape: pickle.loads(pickle.dumps(shape)),
    ],
    ids=["new shape", "copy", "deepcopy", "unpickled"],
)
def test_an_object_sensor_off_the_scene_is_refused(
    make: Callable[[sc.CollisionShape], sc.CollisionShape],
) -> None:
    # Such a sensor never fires: contacts name the scene's own shapes, never a copy.
    scene = touching_spheres()
    stray = ObjectContactSensor(make(scene["a"]))
    with pytest.raises(SensorValueError, match=OFF_SCENE):
        SensorHub(scene, [stray])
    with pytest.raises(SensorValueError, match=OFF_SCENE):
        SensorHub(scene, stray)  # type: ignore[arg-type]
    with pytest.raises(sc.errors.InvalidArgumentError, match="a shape not in the hub's scene"):
        SensorHub(scene, [ObjectContactSensor(scene["b"]), stray])
    on_a = ObjectContactSensor(scene["a"])  # the object itself
    SensorHub(scene, [on_a]).step(0.01)
    assert on_a.in_contact and on_a.partners == [scene["b"]]


def test_replacing_the_sensors_checks_them_too() -> None:
    scene = touching_spheres()
    on_a = ObjectContactSensor(scene["a"])
    hub = SensorHub(scene, [on_a])
    with pytest.raises(SensorValueError, match=OFF_SCENE):
        hub.sensors = [ObjectContactSensor(copy.copy(scene["a"]))]
    with pytest.raises(SensorValueError, match="reads another scene than the hub's"):
        hub.sensors = [NamedContactSensor(touching_spheres(), "a")]
    with pytest.raises(SensorTypeError, match="sensors must be ObjectContactSensor"):
        hub.sensors = ["a"]  # type: ignore[list-item]
    assert hub.sensors == (on_a,)  # kept when refused
    on_b = ObjectContactSensor(scene["b"])
    hub.sensors = [on_a, on_b]
    assert hub.sensors == (on_a, on_b)
    hub.step(0.01)
    assert on_a.partners == [scene["b"]] and on_b.partners == [scene["a"]]


def test_an_object_sensor_needs_its_shape_in_the_scene_when_the_hub_is_made() -> None:
    scene = touching_spheres()
    late = sc.Sphere(0.1, pose=trans(0, 0.15, 0))
    on_late = ObjectContactSensor(late)
    with pytest.raises(SensorValueError, match="a shape not in the hub's scene"):
        SensorHub(scene, [on_late])  # add the objects first, then make the hub
    scene.add(late, "late")
    hub = SensorHub(scene, [on_late])
    hub.step(0.01)
    assert on_late.in_contact and on_late.partners == [scene["a"]]
    scene.remove("late")  # an object that leaves reads no contacts, as a removed name
    hub.step(0.01)
    assert not on_late.in_contact and on_late.air_time == 0.01


def test_object_sensors_on_parts_and_groups_of_scene_objects() -> None:
    scene = touching_spheres()
    near, far = sc.Sphere(0.1, pose=trans(0, 0, 0)), sc.Sphere(0.1, pose=trans(0, 0, 5))
    robot = sc.CollisionShapeGroup([near, far], pose=trans(0, -0.15, 0))  # near touches "a"
    scene.add(robot, "robot")
    around_b = sc.CollisionShapeGroup([scene["b"]])  # made around an object already added
    on_near, on_far = ObjectContactSensor(near), ObjectContactSensor(far)
    on_group = ObjectContactSensor(around_b)  # not in the scene, but its leaf is
    SensorHub(scene, [on_near, on_far, on_group]).step(0.01)
    assert on_near.partners == [scene["a"]] and not on_far.in_contact
    assert on_group.partners == [scene["a"]]
    with pytest.raises(SensorValueError, match=r"is on CollisionShapeGroup\(\[Sphere"):
        SensorHub(scene, [ObjectContactSensor(copy.copy(robot))])  # copies of every leaf
    with pytest.raises(SensorValueError, match="a shape not in the hub's scene"):
        SensorHub(scene, [ObjectContactSensor(sc.CollisionShapeGroup([sc.Sphere(0.1)]))])


# ------------------------------------------------------------------ time


def test_a_named_sensor_ahead_of_the_hub_is_refused(world: Table) -> None:
    named = NamedContactSensor(world.scene, ["box"])
    world.place_box(0.0, 0.49)
    named.on_contacts(world.scene.contacts(), sim_time=1.0)  # by hand, before the hub
    on_box = ObjectContactSensor(world.box)
    hub = SensorHub(world.scene, [on_box, named])
    ahead = (
        r"^sensor NamedContactSensor\(collisions=\['box'\], update_rate=0, active=True\) was "
        r"given sim_time 1\.0, later than the hub's time after this step, 0\.5: its messages' "
        r"times would go back; reset\(\) starts a new run for the hub and its sensors$"
    )
    with pytest.raises(SensorValueError, match=ahead):
        hub.step(0.5)
    with pytest.raises(SensorValueError, match=ahead):
        hub.feed(world.scene.contacts(), 0.5)
    # refused before anything changed
    assert hub.time == 0.0 and not on_box.in_contact and named.last_update_time == 0.0
    hub.step(1.0)  # the same time is fine
    assert named.last_update_time == 1.0
    assert [m.time for m in named.contacts()] == [1.0, 1.0]
    with pytest.raises(SensorValueError, match=r"got 0\.5$"):
        named.on_contacts(world.scene.contacts(), sim_time=0.5)  # behind the hub, by hand
    hub.reset()  # a new run for the hub and its sensors
    hub.step(0.5)
    assert named.last_update_time == 0.5


def test_step_errors(world: Table) -> None:
    hub = SensorHub(world.scene, [])
    with pytest.raises(SensorValueError, match=r"^dt must be positive seconds in .* got 0$"):
        hub.step(0)
    with pytest.raises(SensorValueError, match="approach_speed needs a force_model"):
        hub.step(0.1, approach_speed=[])
    modelled = SensorHub(world.scene, [], force_model=PenaltyForce(1.0))
    with pytest.raises(SensorValueError, match="cannot go with caller forces"):
        modelled.step(0.1, forces=[], approach_speed=[])
    with pytest.raises(SensorTypeError, match=r"contacts must be a spatialcontact\.Contacts"):
        hub.feed([], 0.1)  # type: ignore[arg-type]
    assert hub.time == 0.0


def test_repr(world: Table) -> None:
    hub = SensorHub(world.scene, [ObjectContactSensor(world.box)])
    assert repr(hub) == "SensorHub(1 sensors, force_model=None, time=0)"


# ------------------------------------------------------------------------ imports


def _modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return set(done.stdout.split())


def test_the_core_does_not_import_the_sensors() -> None:
    loaded = _modules_after("import spatialcontact")
    assert "spatialcontact" in loaded
    assert "spatialcontact.sensors" not in loaded
    assert not any(name.startswith("matplotlib") for name in loaded)


def test_the_sensors_import_matplotlib_only_to_draw() -> None:
    loaded = _modules_after("import spatialcontact.sensors")
    assert "spatialcontact.sensors" in loaded
    assert not any(name.startswith("matplotlib") for name in loaded)


# ------------------------------------------------------------------ argument checks


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (0, SensorValueError, r"^max_contacts_per_pair must be an integer >= 1, got 0$"),
        (-3, SensorValueError, r"^max_contacts_per_pair must be an integer >= 1, got -3$"),
        (1.5, SensorTypeError, r"^max_contacts_per_pair must be an integer >= 1, got 1\.5$"),
        (2.0, SensorTypeError, r"^max_contacts_per_pair must be an integer >= 1, got 2\.0$"),
        (True, SensorTypeError, r"^max_contacts_per_pair must be an integer >= 1, got True$"),
        ("2", SensorTypeError, r"^max_contacts_per_pair must be an integer >= 1, got '2'$"),
    ],
)
def test_max_contacts_per_pair_errors_match_the_scene(
    world: Table, value: object, error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        SensorHub(world.scene, [], max_contacts_per_pair=value)  # type: ignore[arg-type]
    # the scene's own query raises errors of the same built-in and core families
    family = TypeError if error is SensorTypeError else sc.errors.InvalidArgumentError
    with pytest.raises(family, match="max_contacts_per_pair must be an integer >= 1"):
        world.scene.contacts(max_contacts_per_pair=value)  # type: ignore[arg-type]
    with pytest.raises(family, match="max_contacts_per_pair must be an integer >= 1"):
        SensorHub(world.scene, [], max_contacts_per_pair=value)  # type: ignore[arg-type]


def test_max_contacts_per_pair_takes_numpy_integers(world: Table) -> None:
    assert SensorHub(world.scene, [], max_contacts_per_pair=np.int64(3)).max_contacts_per_pair == 3


@pytest.mark.parametrize(
    ("dt", "error", "message"),
    [
        (1e-12, SensorValueError, r"^dt must be positive seconds in \[1e-09, 1e\+09\] \(the "),
        (4e-10, SensorValueError, r"counts whole nanoseconds\), got 4e-10$"),
        (-0.1, SensorValueError, r"^dt must be positive seconds in .* got -0\.1$"),
        (2e9, SensorValueError, r"^dt must be positive seconds in .* got 2000000000\.0$"),
        (float("nan"), SensorValueError, r"^dt must be finite, got nan$"),
        (float("inf"), SensorValueError, r"^dt must be finite, got inf$"),
        ("0.1", SensorTypeError, r"^dt must be a real number, got '0\.1'$"),
        (True, SensorTypeError, r"^dt must be a real number, got True$"),
        (None, SensorTypeError, r"^dt must be a real number, got None$"),
    ],
)
def test_bad_dt_leaves_the_time(world: Table, dt: object, error: type, message: str) -> None:
    hub = SensorHub(world.scene, [ObjectContactSensor(world.box)])
    hub.step(0.5)
    with pytest.raises(error, match=message):
        hub.step(dt)  # type: ignore[arg-type]
    with pytest.raises(error, match=message):
        hub.feed(sc.Contacts(), dt)  # type: ignore[arg-type]
    assert hub.time == 0.5


def test_time_counts_whole_nanoseconds(world: Table) -> None:
    hub = SensorHub(world.scene, [])
    hub.step(1e-9)
    assert hub.time == 1e-9
    hub.step(1.5e-9)  # rounded to 2 ns
    assert hub.time == 3e-9
    for _ in range(1000):
        hub.feed(sc.Contacts(), 0.001)
    assert hub.time == pytest.approx(1.000000003, abs=1e-15)


# ------------------------------------------------------------------ sensors listed once


def test_a_sensor_listed_twice_is_refused(world: Table) -> None:
    # Fed twice per step, it would count every step twice (0.2 s of contact after 0.1 s).
    named = NamedContactSensor(world.scene, ["box"])
    on_box = ObjectContactSensor(world.box)
    twice = (
        r"^sensors must list each sensor once, got NamedContactSensor\(collisions=\['box'\], "
        r"update_rate=0, active=True\) at index 0 and again at index 1$"
    )
    with pytest.raises(SensorValueError, match=twice):
        SensorHub(world.scene, [named, named, on_box, on_box])
    with pytest.raises(
        SensorValueError,
        match=r"^sensors must list each sensor once, got ObjectContactSensor\(shape=Cuboid, "
        r"in_contact=False, contacts=0\) at index 1 and again at index 3$",
    ):
        SensorHub(world.scene, [named, on_box, ObjectContactSensor(world.box), on_box])
    hub = SensorHub(world.scene, [named, on_box])
    with pytest.raises(SensorValueError, match=r"at index 0 and again at index 1$"):
        hub.sensors = [named, named]
    assert hub.sensors == (named, on_box)  # kept when refused
    world.place_box(0.0, 0.49)
    hub.step(0.1)
    assert on_box.contact_time == 0.1 and [m.time for m in named.contacts()] == [0.1]


def test_a_string_is_not_a_list_of_sensors(world: Table) -> None:
    with pytest.raises(
        SensorTypeError, match=r"^sensors must be an iterable of sensors, got 'abc'$"
    ):
        SensorHub(world.scene, "abc")  # type: ignore[arg-type]
    hub = SensorHub(world.scene, [])
    with pytest.raises(
        SensorTypeError, match=r"^sensors must be an iterable of sensors, got b'a'$"
    ):
        hub.sensors = b"a"  # type: ignore[assignment]
    assert hub.sensors == ()


def test_max_contacts_per_pair_has_an_upper_limit(world: Table) -> None:
    assert SensorHub(world.scene, [], max_contacts_per_pair=2**30).max_contacts_per_pair == 2**30
    with pytest.raises(
        SensorValueError,
        match=r"^max_contacts_per_pair must be at most 1073741824 \(MAX_CONTACTS_PER_PAIR\), "
        r"got 1073741825$",
    ):
        SensorHub(world.scene, [], max_contacts_per_pair=2**30 + 1)
    with pytest.raises(SensorValueError, match=r"got 1000000000000000000000\d+\.\.\.$"):
        SensorHub(world.scene, [], max_contacts_per_pair=10**400)


# ------------------------------------------------------------------ refused steps change nothing


def state(hub: SensorHub) -> list[Any]:
    """Everything a caller can read from the hub, its force model and its sensors."""

    def plain(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            return value.tolist()
        return list(value) if isinstance(value, list) else value

    out: list[Any] = [hub.time, hub.contacts, plain(hub.forces), hub.forces_valid]
    if hub.force_model is not None:
        out.append(hub.force_model._previous)  # the overlaps damping reads next
    for sensor in hub.sensors:
        if isinstance(sensor, ObjectContactSensor):
            names = ["in_contact", "partners", "records", "record_forces", "force"]
            names += ["forces_valid", "contact_time", "air_time", "started", "ended"]
        elif isinstance(sensor, MatrixContactSensor):
            names = ["forces_valid", "sensing_transforms", "total_force", "force_matrix"]
            names += ["total_force_friction", "force_matrix_friction", "position_matrix"]
        else:
            names = ["_reading", "forces_valid", "last_update_time", "last_measurement_time"]
            names.append("_clock_ns")  # the latest time it was given
        out += [(name, plain(getattr(sensor, name))) for name in names]
        if isinstance(sensor, NamedContactSensor):
            out.append(list(sensor._queue))  # the steps waiting for an update
    return out


def three_sensors(world: Table, model: PenaltyForce | None = None) -> SensorHub:
    """A hub with one sensor of each kind, after one step with the box on the table."""
    sensors: list[ObjectContactSensor | MatrixContactSensor | NamedContactSensor] = [
        ObjectContactSensor(world.box),
        MatrixContactSensor(world.scene, "box", counterparts="*"),
        NamedContactSensor(world.scene, ["box"], update_rate=5.0),  # queues between updates
    ]
    hub = SensorHub(world.scene, sensors, force_model=model)
    world.place_box(0.0, 0.49)
    hub.step(0.1)
    return hub


def refused_unchanged(hub: SensorHub, match: str, call: Callable[[], Any]) -> None:
    """``call`` raises a SensorValueError matching ``match`` and leaves :func:`state` as it
    was."""
    before = state(hub)
    with pytest.raises(SensorValueError, match=match):
        call()
    assert state(hub) == before


def test_a_step_refused_for_a_stale_matrix_sensor_changes_nothing() -> None:
    world = Table()
    lamp = sc.Sphere(0.1, pose=trans(9, 9, 9))
    world.scene.add(lamp, "lamp")  # the matrix sensor is made with it, then it leaves
    hub = three_sensors(world, PenaltyForce(1e4, damping=10.0))
    world.scene.remove("lamp")
    world.place_box(0.0, 0.48)
    refused_unchanged(
        hub,
        r"^objects were removed from the scene since the sensor was made, so its object "
        r"indices are stale \(names then: \['table', 'box', 'wall', 'lamp'\]\); make a new "
        r"sensor$",
        lambda: hub.step(0.1),
    )


def test_named_sensors_publish_once_every_sensor_holds_the_step(world: Table) -> None:
    named = NamedContactSensor(world.scene, ["box"])  # listed first: it used to publish first
    on_box = ObjectContactSensor(world.box)
    hub = SensorHub(world.scene, [named, on_box])
    world.place_box(0.0, 0.49)
    hub.step(0.1)
    seen: list[bool] = []

    def callback() -> None:
        seen.append(on_box.in_contact)
        raise RuntimeError("a subscriber failing")

    named.connect_updated(callback)
    world.place_box(0.0, 5.0)  # off the table
    with pytest.raises(RuntimeError, match="a subscriber failing"):
        hub.step(0.1)
    # The callback saw the step whole, and its error left no sensor a step behind.
    assert seen == [False]
    assert hub.time == pytest.approx(0.2) and not on_box.in_contact and on_box.ended


def test_a_feed_of_contacts_outside_the_scene_changes_nothing(world: Table) -> None:
    hub = three_sensors(world, PenaltyForce(1e4, damping=10.0))
    stranger = sc.Sphere(0.5, pose=trans(0, 0, 0.49))
    outside = world.table.contacts(stranger)
    refused_unchanged(
        hub,
        r"^contact shape Sphere\(radius=0\.5, .*\) is not in the scene the sensor reads",
        lambda: hub.feed(outside, 0.1),
    )
    # an object sensor alone reads no such contact, but the hub refuses them all the same
    alone = SensorHub(world.scene, [ObjectContactSensor(world.box)])
    with pytest.raises(SensorValueError, match="is not in the scene the sensor reads"):
        alone.feed(outside, 0.1)
    assert alone.time == 0.0


def test_a_step_whose_forces_overflow_changes_nothing(world: Table) -> None:
    # The box on the table and against the wall: two contacts on it, 1e308 N each way.
    hub = three_sensors(world)
    world.place_box(2.01, 0.49)
    contacts = world.scene.contacts()
    assert len(contacts) == 2
    refused_unchanged(
        hub,
        r"^forces must sum to a finite net force on the sensor's shape Cuboid\(",
        lambda: hub.feed(contacts, 0.1, forces=[[1e308, 0.0, 0.0], [-1e308, 0.0, 0.0]]),
    )


def test_a_model_force_that_overflows_changes_nothing(world: Table) -> None:
    hub = three_sensors(world, PenaltyForce(1e12, damping=1e12, exponent=3.0))
    world.place_box(0.0, 0.48)  # deeper: overlaps the model must not remember
    refused_unchanged(
        hub,
        r"^the force of contact 0 is not finite \(inf\)",
        lambda: hub.step(0.1, approach_speed=[1e300]),
    )


def test_the_hub_time_stops_at_the_sensors_limit(world: Table) -> None:
    hub = three_sensors(world)  # at 0.1 s
    refused_unchanged(
        hub,
        r"^dt must keep the hub's time at most 1e\+09 s \(the sensors' clock limit\), so "
        r"at most 999999999\.9 s from its time 0\.1, got 1000000000\.0; reset\(\) starts a new "
        r"run$",
        lambda: hub.step(1e9),
    )
    hub.step(1e9 - 0.1)  # exactly 1e9 s: the latest time a sensor accepts
    assert hub.time == 1e9
    at_limit = r"so at most 0\.0 s from its time 1000000000\.0, "
    refused_unchanged(hub, at_limit, lambda: hub.step(1e-9))
    refused_unchanged(hub, at_limit, lambda: hub.feed(sc.Contacts(), 1e-9))
    named = hub.sensors[2]
    assert isinstance(named, NamedContactSensor)
    named.update(hub.time, force=True)  # the hub left its sensors at a time they accept
    hub.reset()
    hub.step(0.1)
    assert hub.time == 0.1
