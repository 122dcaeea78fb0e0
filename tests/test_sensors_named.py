"""NamedContactSensor: Gazebo's contact sensor, throttling, callbacks and the name filter.

Times are chosen so that Gazebo's arithmetic (whole nanoseconds) can be followed by hand. The
scene has, by index: 0 ``floor``, 1 ``ball``, 2 ``box``, 3 ``lamp``.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_contact, trans

import spatialcontact as sc
from spatialcontact.sensors import (
    Connection,
    ContactsMessage,
    NamedContactSensor,
    SensorTypeError,
    SensorValueError,
)


def contact(
    a: sc.CollisionShape,
    b: sc.CollisionShape,
    normal: tuple[float, float, float] = (0.0, 0.0, 1.0),
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0),
    depth: float = -0.02,
) -> sc.Contact:
    return make_contact(a, b, normal, pos, depth)


class World:
    def __init__(self) -> None:
        self.scene = sc.Scene()
        self.floor = sc.HalfSpace([0, 0, 1], 0.0)
        self.ball = sc.Sphere(0.5, pose=trans(0, 0, 0.49))
        self.box = sc.Cuboid([1, 1, 1], pose=trans(2, 0, 0.5))
        self.lamp = sc.Sphere(0.1, pose=trans(2, 0, 1.1))
        for obj, name in (
            (self.floor, "floor"),
            (self.ball, "ball"),
            (self.box, "box"),
            (self.lamp, "lamp"),
        ):
            self.scene.add(obj, name)

    def ball_on_floor(self) -> sc.Contacts:
        return sc.Contacts([contact(self.floor, self.ball, (0, 0, 1), (0, 0, -0.01))])


@pytest.fixture
def world() -> World:
    return World()


# ------------------------------------------------------------------------ names


def test_collision_names(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball", "box"])
    assert sensor.collision_count == 2
    assert sensor.collisions == ("ball", "box")
    assert sensor.collision_name(0) == "ball" and sensor.collision_name(1) == "box"
    assert sensor.collision_name(2) == ""  # out of range: an empty string, as Gazebo
    assert sensor.collision_name(-1) == ""  # Gazebo's index is unsigned
    assert sensor.collision_name(np.int64(1)) == "box"
    with pytest.raises(SensorTypeError, match=r"index must be an integer, got 1\.0"):
        sensor.collision_name(1.0)  # type: ignore[arg-type]
    assert NamedContactSensor(world.scene, "lamp").collisions == ("lamp",)


@pytest.mark.parametrize(
    ("collisions", "error", "match"),
    [
        ([], SensorValueError, "collisions is empty"),
        (["ball", "chair"], SensorValueError, "names 'chair', which is not a scene object"),
        (["ball", "ball"], SensorValueError, "collisions names 'ball' twice"),
        (["ball", 2], SensorTypeError, r"collisions must hold object names \(str\), got 2"),
        ({"ball"}, SensorTypeError, "collisions must be a list of object names"),
    ],
)
def test_collisions_errors(world: World, collisions: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        NamedContactSensor(world.scene, collisions)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"update_rate": -1.0}, SensorValueError, r"^update_rate must be 0 or in .* got -1\.0$"),
        ({"update_rate": 1e-300}, SensorValueError, r"0 or in \[1e-09, 1e\+09\] Hz .* got 1e-300$"),
        ({"update_rate": 2e9}, SensorValueError, r"a period of 1 ns to 1e\+09 s\), got 2000000000"),
        ({"update_rate": float("inf")}, SensorValueError, r"^update_rate must be finite, got inf"),
        ({"update_rate": True}, SensorTypeError, r"^update_rate must be a real number, got True"),
        ({"active": 1}, SensorTypeError, r"^active must be True or False, got 1$"),
        ({"update_rate": "fast"}, TypeError, "update_rate must be a real number"),
        ({"active": "yes"}, SensorTypeError, "active must be True or False, got 'yes'"),
        ({"name": 5}, SensorTypeError, "name must be a string or None, got 5"),
    ],
)
def test_construction_errors(
    world: World, kwargs: dict[str, object], error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        NamedContactSensor(world.scene, ["ball"], **kwargs)  # type: ignore[arg-type]


def test_update_rate_at_its_limits(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"], update_rate=1e9)
    assert sensor.update_rate == 1e9  # a period of 1 ns
    sensor.update_rate = 1e-9
    assert sensor.update_rate == pytest.approx(1e-9)
    with pytest.raises(SensorValueError, match="update_rate"):
        sensor.update_rate = 1e-10
    assert sensor.update_rate == pytest.approx(1e-9)


def test_update_rate_round_trip(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"], update_rate=10.0)
    assert sensor.update_rate == 10.0
    sensor.update_rate = 0
    assert sensor.update_rate == 0.0
    sensor.update_rate = 250.0  # period 4 ms
    assert sensor.update_rate == 250.0


# ------------------------------------------------------------------------ throttling


def test_throttling_with_gazebo_catch_up(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"], update_rate=10.0)  # period 0.1 s
    contacts = world.ball_on_floor()
    # Steps of 0.03 s. Gazebo updates when (t - last_update + delay) >= 0.1, then keeps
    # delay = that sum - 0.1:
    #   0.12: 0.12 >= 0.1, delay 0.02 | 0.21: 0.09 + 0.02 = 0.11, delay 0.01
    #   0.30: 0.09 + 0.01 = 0.10, delay 0 | 0.42: 0.12, delay 0.02
    updates = []
    for k in range(1, 15):
        t = round(0.03 * k, 2)
        sensor.on_contacts(contacts, sim_time=t)
        if sensor.update(t):
            updates.append(t)
    assert updates == [0.12, 0.21, 0.3, 0.42]
    assert sensor.last_update_time == 0.42 and sensor.last_measurement_time == 0.42


def test_an_update_publishes_every_step_queued_since_the_last(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"], update_rate=10.0)
    contacts = world.ball_on_floor()
    for t in (0.03, 0.06, 0.09):
        sensor.on_contacts(contacts, sim_time=t)
        assert not sensor.update(t)
        assert len(sensor.contacts()) == 0  # nothing published yet
    sensor.on_contacts(contacts, sim_time=0.12)
    assert sensor.update(0.12)
    reading = sensor.contacts()
    assert isinstance(reading, ContactsMessage) and reading.time == 0.12
    assert [m.time for m in reading] == [0.03, 0.06, 0.09, 0.12]
    assert reading.contact == tuple(reading)
    # the reading is kept until the next update that publishes
    sensor.on_contacts(sc.Contacts(), sim_time=0.15)
    assert not sensor.update(0.15)
    assert sensor.contacts() is reading
    assert sensor.collision_contact_count("ball") == 4


def test_a_free_step_empties_the_reading(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"])  # rate 0: every new time updates
    sensor.on_contacts(world.ball_on_floor(), sim_time=0.01)
    assert sensor.update(0.01) and len(sensor.contacts()) == 1
    sensor.on_contacts(sc.Contacts(), sim_time=0.02)  # contact over: the step is still queued
    assert sensor.update(0.02)
    assert len(sensor.contacts()) == 0 and sensor.contacts().time == 0.02
    assert sensor.collision_contact_count("ball") == 0


def test_no_update_without_queued_steps_or_new_time(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"])
    assert not sensor.update(0.5)  # nothing queued: nothing changes
    assert sensor.last_update_time == 0.0 and sensor.last_measurement_time == 0.0
    sensor.on_contacts(world.ball_on_floor(), sim_time=0.5)
    assert sensor.update(0.5)
    sensor.on_contacts(world.ball_on_floor(), sim_time=0.5)
    assert not sensor.update(0.5)  # sim time not after the last update
    assert not sensor.update(0.4)
    assert sensor.update(0.5, force=True)  # forced: same time is fine
    assert not sensor.update(0.6, force=True)  # forced, but the queue is empty


def test_force_updates_early_and_when_inactive(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"], update_rate=1.0)
    sensor.on_contacts(world.ball_on_floor(), sim_time=0.01)
    assert not sensor.update(0.01)
    assert sensor.update(0.01, force=True)
    assert sensor.last_update_time == 0.01
    sensor.on_contacts(world.ball_on_floor(), sim_time=0.02)
    sensor.active = False
    assert not sensor.update(5.0)
    assert sensor.update(5.0, force=True)  # the step queued while active is published
    with pytest.raises(SensorTypeError, match="force must be True or False, got 1"):
        sensor.update(6.0, force=1)  # type: ignore[arg-type]


def test_inactive_sensor_queues_nothing(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"], active=False)
    assert not sensor.active
    sensor.on_contacts(world.ball_on_floor(), sim_time=0.01)
    assert not sensor.update(0.01)
    sensor.active = True
    assert not sensor.update(0.02)  # the step came while inactive: not queued
    sensor.on_contacts(world.ball_on_floor(), sim_time=0.03)
    assert sensor.update(0.03) and [m.time for m in sensor.contacts()] == [0.03]


def test_at_most_100_steps_wait(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"], update_rate=0.1)  # every 10 s
    contacts = world.ball_on_floor()
    for k in range(1, 151):
        sensor.on_contacts(contacts, sim_time=k * 0.01)
    assert sensor.update(10.0)
    times = [m.time for m in sensor.contacts()]
    assert len(times) == 100 and times[0] == 0.51 and times[-1] == 1.5  # the oldest 50 dropped


def test_reset_last_update_time(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"])
    sensor.on_contacts(world.ball_on_floor(), sim_time=2.0)
    assert sensor.update(2.0)
    sensor.reset_last_update_time()
    assert sensor.last_update_time == 0.0 and sensor.last_measurement_time == 0.0
    sensor.on_contacts(world.ball_on_floor(), sim_time=0.5)  # a new run from time zero
    assert sensor.update(0.5)


def went_back(last: str, got: str) -> str:
    """The message of a sim_time earlier than the latest one given (both as regex)."""
    return (
        rf"^sim_time must not be earlier than the last time given to the sensor, {last} "
        r"\(simulation time does not go back; reset_last_update_time\(\) starts a new run\), "
        rf"got {got}$"
    )


def test_steps_may_not_go_back_in_time(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"], update_rate=10.0)
    sensor.on_contacts(world.ball_on_floor(), sim_time=1.0)
    with pytest.raises(SensorValueError, match=went_back(r"1\.0", r"0\.5")):
        sensor.on_contacts(world.ball_on_floor(), sim_time=0.5)
    with pytest.raises(sc.errors.InvalidArgumentError, match=went_back(r"1\.0", r"0\.999999999")):
        sensor.on_contacts(world.ball_on_floor(), sim_time=0.999999999)  # 1 ns is enough
    sensor.on_contacts(world.ball_on_floor(), sim_time=1.0)  # the same time again is fine
    sensor.active = False
    with pytest.raises(SensorValueError, match=went_back(r"1\.0", r"0\.5")):
        sensor.on_contacts(world.ball_on_floor(), sim_time=0.5)  # checked when inactive too
    sensor.active = True
    assert sensor.update(1.0)
    assert [m.time for m in sensor.contacts()] == [1.0, 1.0]  # the refused steps: not queued


def test_updates_may_not_go_back_where_they_could_publish(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"])
    sensor.on_contacts(world.ball_on_floor(), sim_time=0.2)
    # a reading at 0.1 would hold a step of 0.2
    with pytest.raises(SensorValueError, match=went_back(r"0\.2", r"0\.1")):
        sensor.update(0.1)
    assert sensor.last_update_time == 0.0
    assert sensor.update(0.2)
    assert not sensor.update(0.1)  # Gazebo's rule: not after the last update, nothing happens
    with pytest.raises(SensorValueError, match=went_back(r"0\.2", r"0\.1")):
        sensor.update(0.1, force=True)  # forced, it would publish a reading older than 0.2
    assert sensor.contacts().time == 0.2 and sensor.last_update_time == 0.2
    assert not sensor.update(0.3)  # nothing queued, but the sensor was told it is 0.3
    with pytest.raises(SensorValueError, match=went_back(r"0\.3", r"0\.25")):
        sensor.on_contacts(world.ball_on_floor(), sim_time=0.25)
    sensor.reset_last_update_time()  # a new run from time zero
    sensor.on_contacts(world.ball_on_floor(), sim_time=0.1)
    assert sensor.update(0.1) and [m.time for m in sensor.contacts()] == [0.1]


@pytest.mark.parametrize("bad", [-0.1, float("nan"), "1", True, 2e9, 10**400])
def test_time_errors(world: World, bad: object) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"])
    with pytest.raises((ValueError, TypeError), match="sim_time must be"):
        sensor.update(bad)  # type: ignore[arg-type]
    with pytest.raises((ValueError, TypeError), match="sim_time must be"):
        sensor.on_contacts(world.ball_on_floor(), bad)  # type: ignore[arg-type]


# ------------------------------------------------------------------------ callbacks


def test_callbacks_run_after_each_publishing_update(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"], update_rate=10.0)
    calls: list[tuple[str, float]] = []
    first = sensor.connect_updated(lambda: calls.append(("first", sensor.last_update_time)))
    second = sensor.connect_updated(lambda: calls.append(("second", sensor.last_update_time)))
    assert isinstance(first, Connection) and first.connected
    for t in (0.05, 0.1, 0.15, 0.2):
        sensor.on_contacts(world.ball_on_floor(), sim_time=t)
        sensor.update(t)
    # updates at 0.1 and 0.2 only; the callbacks see the new update time, in connection order
    assert calls == [("first", 0.1), ("second", 0.1), ("first", 0.2), ("second", 0.2)]
    sensor.disconnect_updated(first)
    assert not first.connected and second.connected
    sensor.disconnect_updated(first)  # twice does nothing
    sensor.on_contacts(world.ball_on_floor(), sim_time=0.3)
    sensor.update(0.3)
    assert calls[-1] == ("second", 0.3) and len(calls) == 5


def test_callback_errors(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"])
    other = NamedContactSensor(world.scene, ["box"])
    handle = other.connect_updated(lambda: None)
    with pytest.raises(SensorTypeError, match="callback must be callable, got 3"):
        sensor.connect_updated(3)  # type: ignore[arg-type]
    with pytest.raises(SensorValueError, match="belongs to another sensor"):
        sensor.disconnect_updated(handle)
    with pytest.raises(SensorTypeError, match="connection must be a Connection"):
        sensor.disconnect_updated("handle")  # type: ignore[arg-type]
    assert handle.connected


# ------------------------------------------------------------------------ the name filter


def test_filter_keeps_contacts_with_a_watched_name_on_either_side(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["box"])
    contacts = sc.Contacts(
        [
            world.ball_on_floor()[0],  # floor-ball: not watched
            contact(world.floor, world.box, (0, 0, 1), (2, 0, 0)),  # box is collision2
            contact(world.floor, world.box, (0, 0, 1), (2.4, 0, 0)),  # same pair: same message
            contact(world.box, world.lamp, (0, 0, 1), (2, 0, 1)),  # box is collision1
        ]
    )
    sensor.on_contacts(contacts, sim_time=0.1)
    assert sensor.update(0.1)
    messages = sensor.contacts()
    assert [(m.collision1, m.collision2, len(m)) for m in messages] == [
        ("floor", "box", 2),
        ("box", "lamp", 1),
    ]
    assert sensor.collision_contact_count("box") == 3  # points, over all its messages
    assert sensor.collision_contact_count("lamp") == 1
    assert sensor.collision_contact_count("ball") == 0  # not in the reading
    by_other = sensor.contacts("box")
    assert sorted(by_other) == ["floor", "lamp"]
    assert by_other["floor"].positions.tolist() == [[2, 0, 0], [2.4, 0, 0]]
    assert sensor.contacts("lamp") == {"box": messages[1]}
    assert sensor.contacts("chair") == {}
    with pytest.raises(SensorTypeError, match="collision_name must be a string"):
        sensor.contacts(3)  # type: ignore[call-overload]
    with pytest.raises(SensorTypeError, match="collision_name must be a string"):
        sensor.collision_contact_count(None)  # type: ignore[arg-type]


def test_contacts_by_name_keeps_the_latest_step(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"], update_rate=10.0)
    sensor.on_contacts(world.ball_on_floor(), sim_time=0.05)
    sensor.on_contacts(world.ball_on_floor(), sim_time=0.1)
    assert sensor.update(0.1)
    assert len(sensor.contacts()) == 2
    assert sensor.contacts("ball")["floor"].time == 0.1  # as a std::map, the later one wins


def test_message_conventions_and_wrenches(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["box"])
    # box (o1, origin (2, 0, 0.5)) against lamp (o2, origin (2, 0, 1.1)); Coal normal +z from
    # box to lamp, overlap 0.02 at (2.1, 0, 1.0); force on the box from the lamp (1, 0, -3).
    c = contact(world.box, world.lamp, (0, 0, 1), (2.1, 0, 1.0), depth=-0.02)
    sensor.on_contacts(sc.Contacts([c]), sim_time=0.25, forces=[[1.0, 0.0, -3.0]])
    assert sensor.update(0.25) and sensor.forces_valid
    (m,) = sensor.contacts()
    assert (m.collision1, m.collision2, m.time) == ("box", "lamp", 0.25)
    assert m.normals.tolist() == [[0.0, 0.0, -1.0]]  # from collision2 into collision1
    assert m.depths.tolist() == [pytest.approx(0.02)]  # positive on overlap
    assert m.positions.tolist() == [[2.1, 0.0, 1.0]]
    w = m.wrenches
    assert w.body_1_force.tolist() == [[1.0, 0.0, -3.0]]
    assert w.body_2_force.tolist() == [[-1.0, 0.0, 3.0]]
    # torque on the box about (2, 0, 0.5): r = (0.1, 0, 0.5), r x (1, 0, -3)
    #   = (0*-3 - 0.5*0, 0.5*1 - 0.1*-3, 0.1*0 - 0*1) = (0, 0.8, 0)
    np.testing.assert_allclose(w.body_1_torque, [[0.0, 0.8, 0.0]], atol=1e-12)
    # on the lamp about (2, 0, 1.1): r = (0.1, 0, -0.1), r x (-1, 0, 3)
    #   = (0*3 - -0.1*0, -0.1*-1 - 0.1*3, 0.1*0 - 0*-1) = (0, -0.2, 0)
    np.testing.assert_allclose(w.body_2_torque, [[0.0, -0.2, 0.0]], atol=1e-12)
    assert not m.normals.flags.writeable and not w.body_1_force.flags.writeable
    assert repr(m) == "ContactMessage('box', 'lamp', 1 points, time=0.25)"


def test_without_forces_wrenches_are_zero(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"])
    sensor.on_contacts(world.ball_on_floor(), sim_time=0.1)
    assert sensor.update(0.1)
    assert not sensor.forces_valid
    (m,) = sensor.contacts()
    assert not m.wrenches.body_1_force.any() and not m.wrenches.body_2_torque.any()


def test_names_are_looked_up_again_after_a_removal(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["lamp"])
    world.scene.remove("ball")  # box and lamp move down one index
    sensor.on_contacts(sc.Contacts([contact(world.box, world.lamp)]), sim_time=0.1)
    assert sensor.update(0.1)
    assert [(m.collision1, m.collision2) for m in sensor.contacts()] == [("box", "lamp")]


def test_contacts_outside_the_scene_are_refused(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"])
    stranger = sc.Sphere(1.0)
    with pytest.raises(SensorValueError, match="is not in the scene the sensor reads"):
        sensor.on_contacts(sc.Contacts([contact(world.ball, stranger)]), sim_time=0.1)


@pytest.mark.parametrize("active", [True, False])
def test_contacts_outside_the_scene_leave_the_time(world: World, active: bool) -> None:
    sensor = NamedContactSensor(world.scene, ["ball"], active=active)
    stranger = sc.Sphere(1.0)
    with pytest.raises(
        SensorValueError,
        match=r"^contact shape Sphere\(radius=1\.0, .*\) is not in the scene the sensor reads",
    ):
        sensor.on_contacts(sc.Contacts([contact(world.ball, stranger)]), sim_time=1.0)
    sensor.on_contacts(world.ball_on_floor(), sim_time=0.5)  # the refused 1.0 s was not kept
    assert sensor.update(0.5, force=True) is active  # inactive, it queued nothing
    assert [m.time for m in sensor.contacts()] == ([0.5] if active else [])


def test_a_torque_that_overflows_is_refused(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["box"])
    # 1.7e308 N sideways, 3 m above the box's origin: the torque about it overflows
    contacts = sc.Contacts([contact(world.box, world.lamp, (0, 0, 1), (2, 0, 3.5))])
    with pytest.raises(
        SensorValueError,
        match=r"^forces must give finite torques, got forces whose torque at contact 0 "
        r"overflows; give smaller forces$",
    ):
        sensor.on_contacts(contacts, sim_time=1.0, forces=[[1.7e308, 0.0, 0.0]])
    sensor.on_contacts(contacts, sim_time=0.5, forces=[[1.0, 0.0, 0.0]])
    assert sensor.update(0.5) and [m.time for m in sensor.contacts()] == [0.5]


def test_repr(world: World) -> None:
    sensor = NamedContactSensor(world.scene, ["ball", "box"], update_rate=20.0, name="bumper")
    assert repr(sensor) == (
        "NamedContactSensor('bumper', collisions=['ball', 'box'], update_rate=20, active=True)"
    )
    assert repr(sensor.contacts()) == "ContactsMessage(0 contact messages, time=0)"
