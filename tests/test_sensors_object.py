"""ObjectContactSensor: IR-SIM's Contact2D readings on a 3D shape, fed by hand.

The timers and flags are checked step by step over scripted sequences (start, hold, end,
restart). Steps of 0.25 s keep every sum exact in binary floating point.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_contact
from hypothesis import given
from hypothesis import strategies as st

import spatialcontact as sc
from spatialcontact.sensors import ObjectContactSensor, SensorTypeError, SensorValueError


def contact(
    a: sc.CollisionShape,
    b: sc.CollisionShape,
    depth: float = -0.1,
    normal: tuple[float, float, float] = (1.0, 0.0, 0.0),
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0),
) -> sc.Contact:
    return make_contact(a, b, normal, pos, depth)


def run_step(sensor: ObjectContactSensor, contacts: list[sc.Contact], dt: float = 0.25) -> None:
    """One simulation step as a loop writes it: clear, add each contact, tick."""
    sensor.clear()
    for c in contacts:
        sensor.add(c)
    sensor.tick(dt)


def test_fresh_sensor_reads_nothing() -> None:
    shape = sc.Sphere(1.0)
    sensor = ObjectContactSensor(shape)
    assert sensor.parent is shape and sensor.shape is shape
    assert sensor.sensor_type == "contact"
    assert (sensor.in_contact, sensor.started, sensor.ended) == (False, False, False)
    assert sensor.partners == [] and sensor.records == [] and sensor.reports == []
    assert sensor.force.tolist() == [0.0, 0.0, 0.0] and not sensor.forces_valid
    assert (sensor.contact_time, sensor.air_time) == (0.0, 0.0)
    assert sensor.record_forces.shape == (0, 3)


def test_timers_and_flags_over_start_hold_end_restart() -> None:
    box, table = sc.Cuboid([1, 1, 1]), sc.Cuboid([4, 4, 1])
    sensor = ObjectContactSensor(box)
    touching = [contact(box, table)]
    # (contacts, in_contact, started, ended, contact_time, air_time) after each tick of 0.25 s
    script = [
        ([], False, False, False, 0.0, 0.25),  # free from the start: nothing ended
        ([], False, False, False, 0.0, 0.5),
        (touching, True, True, False, 0.25, 0.0),  # start: air time held at zero
        (touching, True, False, False, 0.5, 0.0),  # hold
        (touching, True, False, False, 0.75, 0.0),
        ([], False, False, True, 0.0, 0.25),  # end: contact time back to zero
        ([], False, False, False, 0.0, 0.5),
        (touching, True, True, False, 0.25, 0.0),  # restart counts from zero again
        ([], False, False, True, 0.0, 0.25),  # a one-step contact ends at once
    ]
    for k, (contacts, in_contact, started, ended, contact_time, air_time) in enumerate(script):
        run_step(sensor, contacts)
        got = (sensor.in_contact, sensor.started, sensor.ended, sensor.contact_time)
        assert got == (in_contact, started, ended, contact_time), f"step {k}"
        assert sensor.air_time == air_time, f"step {k}"


@given(st.lists(st.booleans(), min_size=1, max_size=30))
def test_timers_count_the_current_run(pattern: list[bool]) -> None:
    box, table = sc.Cuboid([1, 1, 1]), sc.Cuboid([4, 4, 1])
    sensor = ObjectContactSensor(box)
    previous, run = False, 0  # a fresh sensor counts as free
    for touching in pattern:
        run_step(sensor, [contact(box, table)] if touching else [])
        run = run + 1 if touching == previous else 1
        assert sensor.started == (touching and not previous)
        assert sensor.ended == (previous and not touching)
        # 0.25 s steps: run * 0.25 is exact in binary floating point
        assert sensor.contact_time == (0.25 * run if touching else 0.0)
        assert sensor.air_time == (0.0 if touching else 0.25 * run)
        previous = touching


def test_first_step_in_contact_starts() -> None:
    box, table = sc.Cuboid([1, 1, 1]), sc.Cuboid([4, 4, 1])
    sensor = ObjectContactSensor(box)
    run_step(sensor, [contact(box, table)], dt=0.5)
    assert (sensor.started, sensor.ended, sensor.contact_time, sensor.air_time) == (
        True,
        False,
        0.5,
        0.0,
    )


def test_reset_forgets_the_timers() -> None:
    box, table = sc.Cuboid([1, 1, 1]), sc.Cuboid([4, 4, 1])
    sensor = ObjectContactSensor(box)
    run_step(sensor, [contact(box, table)])
    sensor.add_force([1.0, 2.0, 3.0])
    sensor.reset()
    assert (sensor.in_contact, sensor.started, sensor.ended) == (False, False, False)
    assert (sensor.contact_time, sensor.air_time) == (0.0, 0.0)
    assert sensor.records == [] and sensor.partners == [] and not sensor.force.any()
    # after a reset the next contact starts again
    run_step(sensor, [contact(box, table)])
    assert sensor.started and sensor.contact_time == 0.25


def test_clear_keeps_the_timers_and_makes_new_lists() -> None:
    box, table = sc.Cuboid([1, 1, 1]), sc.Cuboid([4, 4, 1])
    sensor = ObjectContactSensor(box)
    run_step(sensor, [contact(box, table)])
    records, partners = sensor.records, sensor.partners
    sensor.clear()
    assert sensor.contact_time == 0.25 and sensor.started  # until the next tick
    assert not sensor.in_contact and sensor.records == [] and sensor.partners == []
    assert len(records) == 1 and len(partners) == 1  # the old lists are left as they were


def test_partners_are_listed_once_in_order_of_first_contact() -> None:
    box, table, wall = sc.Cuboid([1, 1, 1]), sc.Cuboid([4, 4, 1]), sc.Cuboid([1, 4, 4])
    sensor = ObjectContactSensor(box)
    sensor.clear()
    for c in (contact(box, wall), contact(table, box), contact(box, wall), contact(box, table)):
        sensor.add(c)
    assert sensor.partners == [wall, table]
    assert len(sensor.records) == 4


def test_reports_are_seen_from_each_side() -> None:
    a, b = sc.Sphere(1.0), sc.Sphere(1.0)
    # Coal's record: normal from o1 = a to o2 = b is +x, depth -0.2 (overlap 0.2).
    c = contact(a, b, depth=-0.2, normal=(1.0, 0.0, 0.0), pos=(0.9, 0.0, 0.0))
    on_a, on_b = ObjectContactSensor(a), ObjectContactSensor(b)
    on_a.add(c)
    on_b.add(c)
    (ra,), (rb,) = on_a.reports, on_b.reports
    # On a, the contact pushes along -x (from b into a); on b along +x. Depth +0.2 on both.
    assert ra.normal.tolist() == [-1.0, 0.0, 0.0] and rb.normal.tolist() == [1.0, 0.0, 0.0]
    assert ra.depth == pytest.approx(0.2) and rb.depth == pytest.approx(0.2)
    assert ra.other is b and rb.other is a
    assert ra.point.tolist() == [0.9, 0.0, 0.0]
    assert on_a.partners == [b] and on_b.partners == [a]
    # the raw record keeps Coal's convention
    assert on_a.records[0].normal.tolist() == [1.0, 0.0, 0.0]


def test_sensor_on_a_group_counts_its_leaves() -> None:
    finger, palm = sc.Sphere(0.1), sc.Cuboid([0.2, 0.2, 0.05])
    hand = sc.CollisionShapeGroup([finger, palm])
    table = sc.Cuboid([4, 4, 1])
    sensor = ObjectContactSensor(hand)
    sensor.add(contact(table, finger, normal=(0.0, 0.0, 1.0)))
    assert sensor.in_contact and sensor.partners == [table]
    assert sensor.reports[0].normal.tolist() == [0.0, 0.0, 1.0]  # from the table into the hand


def test_add_refuses_a_contact_of_other_shapes() -> None:
    a, b, c = sc.Sphere(1.0), sc.Sphere(1.0), sc.Sphere(1.0)
    sensor = ObjectContactSensor(a)
    with pytest.raises(SensorValueError, match="does not involve the sensor's shape"):
        sensor.add(contact(b, c))
    with pytest.raises(SensorTypeError, match=r"contact must be a spatialcontact\.Contact"):
        sensor.add("contact")  # type: ignore[arg-type]
    assert not sensor.in_contact and sensor.records == []


def test_add_keeps_each_contact_force() -> None:
    a, b = sc.Sphere(1.0), sc.Sphere(1.0)
    sensor = ObjectContactSensor(a)
    sensor.add(contact(a, b), force=[-3.0, 0.0, 0.0])
    sensor.add(contact(a, b))
    np.testing.assert_array_equal(sensor.record_forces, [[-3.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    assert not sensor.force.any() and not sensor.forces_valid  # the net comes from add_force


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]),
        ([[1.0], [2.0], [3.0]], [1.0, 2.0, 3.0]),
        ([1.0, 2.0], [1.0, 2.0, 0.0]),  # IR-SIM's planar (2,) force
        ([[1.0], [2.0]], [1.0, 2.0, 0.0]),  # and its (2, 1) column
    ],
)
def test_add_force_accumulates(value: object, expected: list[float]) -> None:
    sensor = ObjectContactSensor(sc.Sphere(1.0))
    sensor.add_force(value)
    assert sensor.forces_valid
    sensor.add_force(value)
    assert sensor.force.tolist() == [2.0 * v for v in expected]
    sensor.clear()
    assert not sensor.forces_valid and not sensor.force.any()


def test_add_force_refuses_a_net_force_that_overflows() -> None:
    sensor = ObjectContactSensor(sc.Sphere(1.0))
    sensor.add_force([1e308, 0.0, 0.0])
    with pytest.raises(
        SensorValueError,
        match=r"^force must keep the net force finite, got \[1e\+308, 0\.0, 0\.0\] to add to "
        r"\[1e\+308, 0\.0, 0\.0\], which overflows; give smaller forces$",
    ):
        sensor.add_force([1e308, 0.0, 0.0])
    assert sensor.force.tolist() == [1e308, 0.0, 0.0] and sensor.forces_valid
    sensor.add_force([-1e308, 1e308, 0.0])
    assert sensor.force.tolist() == [0.0, 1e308, 0.0]


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        ([1.0, 2.0, 3.0, 4.0], SensorValueError, r"force must have shape \(3,\).*got shape \(4,\)"),
        ([1.0, float("inf"), 0.0], SensorValueError, "force must be finite"),
        ("abc", SensorTypeError, "force must be 2 or 3 numbers, got 'abc'"),
        ([{"x": 1}, 1.0, 2.0], SensorTypeError, "force must be 2 or 3 numbers"),
        (
            ["1", "2", "3"],
            SensorTypeError,
            r"^force must be 2 or 3 numbers, got \['1', '2', '3'\] \(strings\)$",
        ),
        (
            [True, 0.0, 0.0],
            SensorTypeError,
            r"^force must be 2 or 3 numbers, got \[True, 0\.0, 0\.0\] \(booleans or masked",
        ),
        (
            np.ma.masked_array([1.0, 2.0, 3.0]),
            SensorTypeError,
            r"(?s)got masked_array\(.* \(a masked array: fill or compress it first\)$",
        ),
    ],
)
def test_add_force_errors(value: object, error: type, match: str) -> None:
    sensor = ObjectContactSensor(sc.Sphere(1.0))
    with pytest.raises(error, match=match):
        sensor.add_force(value)
    assert not sensor.forces_valid


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        (-0.1, SensorValueError, r"step_time must be zero or positive seconds, .* got -0\.1$"),
        (2e9, SensorValueError, r"step_time must be .* at most 1e\+09, got 2000000000\.0$"),
        (True, SensorTypeError, r"^step_time must be a real number, got True$"),
        (float("nan"), ValueError, "step_time must be finite"),
        ("0.1", TypeError, "step_time must be a real number, got '0.1'"),
    ],
)
def test_tick_errors(value: object, error: type, match: str) -> None:
    sensor = ObjectContactSensor(sc.Sphere(1.0))
    with pytest.raises(error, match=match):
        sensor.tick(value)  # type: ignore[arg-type]
    assert sensor.air_time == 0.0


def test_tick_zero_switches_flags_without_time() -> None:
    a, b = sc.Sphere(1.0), sc.Sphere(1.0)
    sensor = ObjectContactSensor(a)
    run_step(sensor, [contact(a, b)], dt=0.0)
    assert sensor.started and sensor.contact_time == 0.0


def test_step_keeps_the_state_and_changes_no_reading() -> None:
    sensor = ObjectContactSensor(sc.Sphere(1.0))
    sensor.step(np.array([1.0, 2.0, 0.5]))
    assert not sensor.in_contact and sensor.air_time == 0.0


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"force_scale": -1.0}, SensorValueError, "force_scale must be zero or positive"),
        ({"marker_size": "big"}, TypeError, "marker_size must be a real number"),
        ({"alpha": 1.5}, SensorValueError, r"alpha must be in \[0, 1\], got 1.5"),
        ({"alpha": True}, SensorTypeError, r"^alpha must be a real number, got True$"),
        ({"linewidth": float("nan")}, SensorValueError, r"^linewidth must be finite, got nan$"),
        ({"color": 3}, SensorTypeError, "color must be a matplotlib colour"),
        ({"name": 3}, SensorTypeError, "name must be a string or None, got 3"),
    ],
)
def test_construction_errors(kwargs: dict[str, object], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        ObjectContactSensor(sc.Sphere(1.0), **kwargs)  # type: ignore[arg-type]


def test_construction_needs_a_shape() -> None:
    with pytest.raises(SensorTypeError, match="shape must be a CollisionShape, got 'ball'"):
        ObjectContactSensor("ball")  # type: ignore[arg-type]


def test_repr() -> None:
    sensor = ObjectContactSensor(sc.Sphere(1.0), name="foot")
    assert repr(sensor) == "ObjectContactSensor('foot', shape=Sphere, in_contact=False, contacts=0)"
