"""MatrixContactSensor: Newton's selection rules and outputs, against hand sums.

The scene has four objects, by index: 0 ``table``, 1 ``box_a`` (a group of two cubes),
2 ``box_b`` (a sphere), 3 ``wall``. Contacts are made by hand between their leaves, with
``o1`` on the lower index as the scene gives them, and forces chosen so that the sums are easy.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from conftest import make_contact, trans
from hypothesis import given
from hypothesis import strategies as st

import spatialcontact as sc
from spatialcontact.sensors import (
    MatrixContactSensor,
    SelectionError,
    SelectionIndexError,
    SensorTypeError,
    SensorValueError,
)


def contact(
    a: sc.CollisionShape,
    b: sc.CollisionShape,
    normal: tuple[float, float, float],
    pos: tuple[float, float, float],
    depth: float = -0.01,
) -> sc.Contact:
    return make_contact(a, b, normal, pos, depth)


class World:
    """The four-object scene and its leaves."""

    def __init__(self) -> None:
        self.scene = sc.Scene()
        self.table = sc.Cuboid([4, 4, 1], pose=trans(0, 0, -0.5))
        self.a1 = sc.Cuboid([0.5, 0.5, 0.5], pose=trans(0, 0, 0.25))
        self.a2 = sc.Cuboid([0.5, 0.5, 0.5], pose=trans(1, 0, 0.25))
        self.box_a = sc.CollisionShapeGroup([self.a1, self.a2])
        self.box_b = sc.Sphere(0.5, pose=trans(1.0, 0, 1))
        self.wall = sc.Cuboid([1, 4, 4], pose=trans(2.5, 0, 1))
        for obj, name in (
            (self.table, "table"),
            (self.box_a, "box_a"),
            (self.box_b, "box_b"),
            (self.wall, "wall"),
        ):
            self.scene.add(obj, name)

    def step(self) -> tuple[sc.Contacts, np.ndarray]:
        """Five contacts and the force on each ``o1`` from ``o2``.

        c0 table-a1, normal +z at (0, 0, 0): force on the table (1, 0, -10), on box_a (-1, 0, 10)
        c1 table-a2, normal +z at (1, 0, 0): on the table (0, 2, -30), on box_a (0, -2, 30)
        c2 a1-box_b, normal +x at (0.5, 0, 1): on box_a (-5, 0, 0), on box_b (5, 0, 0)
        c3 box_b-wall, normal +x at (2, 0, 1): on box_b (-4, 1, 0), on the wall (4, -1, 0)
        c4 a1-a2 (box_a with itself), normal +y at (0, 0.5, 0.5): (0, -7, 0) and back: cancels
        """
        contacts = sc.Contacts(
            [
                contact(self.table, self.a1, (0, 0, 1), (0, 0, 0)),
                contact(self.table, self.a2, (0, 0, 1), (1, 0, 0)),
                contact(self.a1, self.box_b, (1, 0, 0), (0.5, 0, 1)),
                contact(self.box_b, self.wall, (1, 0, 0), (2, 0, 1)),
                contact(self.a1, self.a2, (0, 1, 0), (0, 0.5, 0.5)),
            ]
        )
        forces = np.array(
            [[1, 0, -10], [0, 2, -30], [-5, 0, 0], [-4, 1, 0], [0, -7, 0]], dtype=float
        )
        return contacts, forces


@pytest.fixture
def world() -> World:
    return World()


# ------------------------------------------------------------------------ selection rules


@pytest.mark.parametrize(
    ("sensing", "rows"),
    [
        ("box_*", [1, 2]),  # a glob, ascending index order
        ("*", [0, 1, 2, 3]),
        ("box_[b]", [2]),
        (["wall", "box_a"], [1, 3]),  # a list of globs: ascending, not the list's order
        (["b*", "box_a"], [1, 2]),  # matched by two patterns, listed once
        (re.compile(r"box_."), [1, 2]),  # full match
        (re.compile(r"t.*|w.*"), [0, 3]),
        ([3, 1], [3, 1]),  # indices keep the caller's order
        ((2,), [2]),
        (np.array([2, 0]), [2, 0]),
        ([np.int64(1)], [1]),
    ],
)
def test_sensing_selection(world: World, sensing: Any, rows: list[int]) -> None:
    sensor = MatrixContactSensor(world.scene, sensing)
    assert sensor.sensing_indices == rows
    names = world.scene.names
    assert sensor.sensing_names == tuple(names[i] for i in rows)


def test_counterparts_are_ascending_without_the_row_itself(world: World) -> None:
    sensor = MatrixContactSensor(world.scene, "box_*", counterparts=[3, 0, 1])
    # row box_a (1): counterparts 0, 3 (not itself); row box_b (2): 0, 1, 3.
    assert sensor.counterpart_indices == [[0, 3], [0, 1, 3]]
    assert sensor.counterpart_names == [["table", "wall"], ["table", "box_a", "wall"]]
    assert sensor.counterpart_type == "object" and sensor.sensing_type == "object"
    assert sensor.force_matrix is not None and sensor.force_matrix.shape == (2, 3, 3)


@pytest.mark.parametrize(
    ("selection", "error", "match"),
    [
        ("nothing*", SelectionError, r"no scene object matched sensing='nothing\*'"),
        ("Box_*", SelectionError, "no scene object matched"),  # case-sensitive
        (re.compile("box"), SelectionError, "no scene object matched"),  # must match whole names
        (["x*", "y*"], SelectionError, "no scene object matched"),
        ([], SelectionError, "sensing is empty"),
        ([1, 1], SelectionError, "sensing contains duplicate index 1"),
        ([0, 4], SelectionIndexError, "sensing contains index 4, but the scene has 4 objects"),
        ([-1], SelectionIndexError, "sensing contains index -1"),
        (["box_a", 1], SensorTypeError, "list of str patterns or a list of int indices"),
        ([True], SensorTypeError, "got items of type bool"),
        ([1.0], SensorTypeError, "got items of type float"),
        (1, SensorTypeError, "sensing must be a glob string, a list of globs"),
        (np.array([0.5]), SensorTypeError, "sensing as an array must be 1-D integers"),
    ],
)
def test_selection_errors(world: World, selection: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        MatrixContactSensor(world.scene, selection)


def test_selection_errors_are_builtin_errors() -> None:
    assert issubclass(SelectionError, ValueError)
    assert issubclass(SelectionIndexError, IndexError)
    assert issubclass(SelectionIndexError, ValueError)


def test_counterpart_selection_errors(world: World) -> None:
    with pytest.raises(SelectionError, match="no scene object matched counterparts='x'"):
        MatrixContactSensor(world.scene, "box_a", counterparts="x")
    with pytest.raises(SelectionError, match="counterparts contains duplicate index 0"):
        MatrixContactSensor(world.scene, "box_a", counterparts=[0, 0])


def test_measure_total_false_needs_counterparts(world: World) -> None:
    with pytest.raises(SensorValueError, match="measure_total=False with counterparts=None"):
        MatrixContactSensor(world.scene, "box_a", measure_total=False)
    with pytest.raises(SensorTypeError, match="measure_total must be True or False, got 1"):
        MatrixContactSensor(world.scene, "box_a", measure_total=1)  # type: ignore[arg-type]


def test_scene_must_be_a_scene() -> None:
    with pytest.raises(SensorTypeError, match=r"scene must be a spatialcontact\.Scene"):
        MatrixContactSensor(["table"], "table")


# ------------------------------------------------------------------------ outputs


def test_outputs_before_any_update_are_zero(world: World) -> None:
    sensor = MatrixContactSensor(world.scene, "box_*", counterparts="*")
    assert sensor.total_force is not None and not sensor.total_force.any()
    assert sensor.total_force.shape == (2, 3)
    assert sensor.position_matrix is not None and not sensor.position_matrix.any()
    assert not sensor.forces_valid
    np.testing.assert_array_equal(sensor.sensing_transforms, np.tile(np.eye(4), (2, 1, 1)))


def test_total_and_matrix_against_hand_sums(world: World) -> None:
    contacts, forces = world.step()
    sensor = MatrixContactSensor(world.scene, "box_*", counterparts="*")
    sensor.update(contacts, forces)
    assert sensor.forces_valid
    assert sensor.counterpart_indices == [[0, 2, 3], [0, 1, 3]]
    # box_a: c0 (-1, 0, 10) + c1 (0, -2, 30) + c2 (-5, 0, 0) + c4 cancelled = (-6, -2, 40)
    # box_b: c2 (5, 0, 0) + c3 (-4, 1, 0) = (1, 1, 0)
    assert sensor.total_force is not None
    np.testing.assert_allclose(sensor.total_force, [[-6, -2, 40], [1, 1, 0]])
    # friction = force minus its part along the contact normal:
    # c0 (-1, 0, 10) on z -> (-1, 0, 0); c1 (0, -2, 30) -> (0, -2, 0); c2 along x -> 0;
    # c3 (-4, 1, 0) on x -> (0, 1, 0).
    assert sensor.total_force_friction is not None
    np.testing.assert_allclose(sensor.total_force_friction, [[-1, -2, 0], [0, 1, 0]])
    # rows: box_a -> [table, box_b, wall], box_b -> [table, box_a, wall]
    expected = [
        [[-1, -2, 40], [-5, 0, 0], [0, 0, 0]],
        [[0, 0, 0], [5, 0, 0], [-4, 1, 0]],
    ]
    assert sensor.force_matrix is not None and sensor.force_matrix_friction is not None
    np.testing.assert_allclose(sensor.force_matrix, expected)
    np.testing.assert_allclose(
        sensor.force_matrix_friction,
        [[[-1, -2, 0], [0, 0, 0], [0, 0, 0]], [[0, 0, 0], [0, 0, 0], [0, 1, 0]]],
    )


def test_position_matrix_is_force_weighted(world: World) -> None:
    contacts, forces = world.step()
    sensor = MatrixContactSensor(world.scene, "box_*", counterparts="*")
    sensor.update(contacts, forces)
    # box_a-table: c0 at (0, 0, 0) weighs |(1, 0, -10)| = sqrt(101), c1 at (1, 0, 0) weighs
    # |(0, 2, -30)| = sqrt(904): x = sqrt(904) / (sqrt(101) + sqrt(904))
    #   = 30.0666 / 40.1165 = 0.74948
    x = float(np.sqrt(904) / (np.sqrt(101) + np.sqrt(904)))
    expected: list[list[list[float]]] = [
        [[x, 0, 0], [0.5, 0, 1], [0, 0, 0]],  # no force from the wall: zero
        [[0, 0, 0], [0.5, 0, 1], [2, 0, 1]],
    ]
    assert sensor.position_matrix is not None
    np.testing.assert_allclose(sensor.position_matrix, expected)
    assert x == pytest.approx(0.749483, abs=1e-6)


def test_rows_in_caller_order_and_zero_padding(world: World) -> None:
    contacts, forces = world.step()
    sensor = MatrixContactSensor(world.scene, [2, 1], counterparts=["table", "box_a"])
    sensor.update(contacts, forces)
    # row 0 = box_b: [table, box_a]; row 1 = box_a: [table] and one column of padding.
    assert sensor.counterpart_indices == [[0, 1], [0]]
    assert sensor.force_matrix is not None
    np.testing.assert_allclose(
        sensor.force_matrix, [[[0, 0, 0], [5, 0, 0]], [[-1, -2, 40], [0, 0, 0]]]
    )
    assert sensor.total_force is not None
    np.testing.assert_allclose(sensor.total_force, [[1, 1, 0], [-6, -2, 40]])


def test_none_outputs(world: World) -> None:
    contacts, forces = world.step()
    totals_only = MatrixContactSensor(world.scene, "box_a")
    totals_only.update(contacts, forces)
    assert totals_only.force_matrix is None
    assert totals_only.force_matrix_friction is None
    assert totals_only.position_matrix is None
    assert totals_only.counterpart_type is None and totals_only.counterpart_indices == [[]]
    pairs_only = MatrixContactSensor(world.scene, "box_a", counterparts="*", measure_total=False)
    pairs_only.update(contacts, forces)
    assert pairs_only.total_force is None and pairs_only.total_force_friction is None
    assert pairs_only.force_matrix is not None


def test_magnitudes_are_forces_against_the_normal(world: World) -> None:
    contacts, _ = world.step()
    sensor = MatrixContactSensor(world.scene, "box_b", counterparts="*")
    # c2 (a1-box_b, +x) 6 N and c3 (box_b-wall, +x) 2 N: on box_b +6 x from box_a (o2 side)
    # and -2 x from the wall (o1 side).
    sensor.update(contacts, [1.0, 1.0, 6.0, 2.0, 1.0])
    assert sensor.total_force is not None and sensor.force_matrix is not None
    np.testing.assert_allclose(sensor.total_force, [[4.0, 0.0, 0.0]])
    np.testing.assert_allclose(sensor.force_matrix[0, 1:], [[6, 0, 0], [-2, 0, 0]])


def test_without_forces_everything_reads_zero(world: World) -> None:
    contacts, forces = world.step()
    sensor = MatrixContactSensor(world.scene, "box_*", counterparts="*")
    sensor.update(contacts, forces)
    sensor.update(contacts)
    assert not sensor.forces_valid
    assert sensor.total_force is not None and not sensor.total_force.any()
    assert sensor.position_matrix is not None and not sensor.position_matrix.any()


def test_empty_step_reads_zero(world: World) -> None:
    sensor = MatrixContactSensor(world.scene, "box_*", counterparts="*")
    sensor.update(sc.Contacts(), np.zeros((0, 3)))
    assert sensor.forces_valid
    assert sensor.force_matrix is not None and sensor.force_matrix.shape == (2, 3, 3)
    assert not sensor.force_matrix.any()


def test_sensing_transforms_are_world_poses(world: World) -> None:
    contacts, forces = world.step()
    sensor = MatrixContactSensor(world.scene, ["wall", "box_b"])
    sensor.update(contacts, forces)
    np.testing.assert_array_equal(sensor.sensing_transforms, [trans(1.0, 0, 1), trans(2.5, 0, 1)])


def test_update_errors(world: World) -> None:
    contacts, forces = world.step()
    sensor = MatrixContactSensor(world.scene, "box_*")
    with pytest.raises(SensorValueError, match=r"forces must have shape \(5, 3\) or \(5,\)"):
        sensor.update(contacts, forces[:4])
    with pytest.raises(SensorTypeError, match=r"contacts must be a spatialcontact\.Contacts"):
        sensor.update(list(contacts), forces)  # type: ignore[arg-type]
    stranger = sc.Sphere(1.0)
    outside = sc.Contacts([contact(world.box_b, stranger, (1, 0, 0), (0, 0, 0))])
    with pytest.raises(SensorValueError, match="is not in the scene the sensor reads"):
        sensor.update(outside, [[1.0, 0.0, 0.0]])


def state(sensor: MatrixContactSensor) -> list[Any]:
    """Every output of the sensor, as plain lists."""
    names = ["total_force", "total_force_friction", "force_matrix", "force_matrix_friction"]
    names += ["position_matrix", "sensing_transforms"]
    values = [getattr(sensor, name) for name in names]
    return [sensor.forces_valid] + [None if v is None else v.tolist() for v in values]


def test_a_refused_update_changes_nothing(world: World) -> None:
    contacts, forces = world.step()
    sensor = MatrixContactSensor(world.scene, "box_*", counterparts="*")
    sensor.update(contacts)  # no forces: zeros, forces_valid False
    world.box_b.T = trans(1.0, 0, 2)  # a sensing object moves
    stranger = sc.Sphere(1.0)
    outside = sc.Contacts([contact(world.box_b, stranger, (1, 0, 0), (0, 0, 0))])
    before = state(sensor)
    refused = r"^contact shape Sphere\(radius=1\.0, .*\) is not in the scene the sensor reads"
    with pytest.raises(SensorValueError, match=refused):
        sensor.update(outside, forces=[1.0])
    with pytest.raises(SensorValueError, match=refused):
        sensor.update(outside)  # refused without forces too
    assert state(sensor) == before
    assert not sensor.forces_valid and sensor.sensing_transforms[1, 2, 3] == 1.0  # old pose
    sensor.update(contacts, forces)
    assert sensor.forces_valid and sensor.sensing_transforms[1, 2, 3] == 2.0


def test_forces_that_overflow_when_summed_are_refused(world: World) -> None:
    contacts, _ = world.step()
    sensor = MatrixContactSensor(world.scene, "box_*", counterparts="*")
    before = state(sensor)
    # c0 and c1 push box_a up by 1e308 N each: their sum overflows
    huge = np.zeros((5, 3))
    huge[:2, 2] = -1e308
    with pytest.raises(
        SensorValueError,
        match=r"^forces must sum to finite values on each sensing object, got forces whose "
        r"total, friction or force-weighted position on 'box_a' overflows; give smaller forces$",
    ):
        sensor.update(contacts, huge)
    assert state(sensor) == before
    by_matrix_only = MatrixContactSensor(
        world.scene, "box_*", counterparts="*", measure_total=False
    )
    with pytest.raises(SensorValueError, match="position on 'box_a' overflows"):
        by_matrix_only.update(contacts, huge)


def test_objects_added_later_count_in_totals_only(world: World) -> None:
    sensor = MatrixContactSensor(world.scene, "box_b", counterparts="*")
    lamp = sc.Sphere(0.2, pose=trans(1.0, 0, 1.6))
    world.scene.add(lamp, "lamp")
    contacts = sc.Contacts([contact(world.box_b, lamp, (0, 0, 1), (1, 0, 1.5))])
    sensor.update(contacts, [[0.0, 0.0, -3.0]])
    assert sensor.total_force is not None and sensor.force_matrix is not None
    np.testing.assert_allclose(sensor.total_force, [[0, 0, -3]])
    assert sensor.counterpart_indices == [[0, 1, 3]] and not sensor.force_matrix.any()


def test_removing_an_object_makes_update_raise(world: World) -> None:
    sensor = MatrixContactSensor(world.scene, "box_b", counterparts="*")
    world.scene.remove("table")  # box_b moves from index 2 to 1
    with pytest.raises(SensorValueError, match="objects were removed from the scene"):
        sensor.update(sc.Contacts(), np.zeros((0, 3)))


def test_repr(world: World) -> None:
    sensor = MatrixContactSensor(world.scene, "box_*", counterparts="*")
    assert repr(sensor) == (
        "MatrixContactSensor(2 sensing, 3 counterpart columns, measure_total=True)"
    )


# ------------------------------------------------------------------------ properties


@given(
    st.lists(
        st.tuples(
            st.integers(0, 4),  # leaf on one side: table, a1, a2, box_b, wall
            st.integers(0, 4),
            st.tuples(st.floats(-50, 50), st.floats(-50, 50), st.floats(-50, 50)),
        ),
        max_size=12,
    )
)
def test_totals_are_row_sums_of_the_matrix(steps: list[Any]) -> None:
    w = World()
    leaves = [w.table, w.a1, w.a2, w.box_b, w.wall]
    records = [contact(leaves[i], leaves[j], (0, 0, 1), (i, j, 0)) for i, j, _ in steps]
    forces = np.array([f for _, _, f in steps], dtype=float).reshape(-1, 3)
    sensor = MatrixContactSensor(w.scene, "*", counterparts="*")
    sensor.update(sc.Contacts(records), forces)
    assert sensor.total_force is not None and sensor.force_matrix is not None
    # every other object is a counterpart and self-contacts cancel, so the total is the row sum
    np.testing.assert_allclose(sensor.total_force, sensor.force_matrix.sum(axis=1), atol=1e-9)
    # action and reaction: the forces on all objects add up to zero
    np.testing.assert_allclose(sensor.total_force.sum(axis=0), 0.0, atol=1e-9)
    assert sensor.position_matrix is not None
    # an entry with force has a position among its contacts' (x in 0..4, z = 0)
    assert np.all(sensor.position_matrix[..., 2] == 0.0)
    assert np.all((sensor.position_matrix[..., :2] >= 0) & (sensor.position_matrix[..., :2] <= 4))
