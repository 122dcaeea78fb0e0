"""CollisionShapeGroup: list behaviour, parents, world poses, queries, errors and pickling.

Random scenes compared with a leaf-by-leaf loop live in ``test_group_properties.py``.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from spatialgeometry import Axes
from spatialgeometry import Sphere as SGSphere
from spatialmath import SE3

from spatialcontact import (
    CollisionDisabledError,
    CollisionShape,
    CollisionShapeGroup,
    Cuboid,
    InvalidArgumentError,
    InvalidPoseError,
    InvalidShapeError,
    ShapeTypeError,
    Sphere,
)

ATOL = 1e-9


def trans(x: float, y: float = 0.0, z: float = 0.0) -> Any:
    return SE3.Trans(x, y, z)


def spheres(n: int) -> list[Sphere]:
    """``n`` unit spheres 10 m apart along x."""
    return [Sphere(1.0, pose=trans(10.0 * i), name=f"s{i}") for i in range(n)]


def assert_point(actual: Any, expected: Any) -> None:
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected, dtype=float), atol=1e-6)


# ------------------------------------------------------------------------ list behaviour


def test_constructor_len_iteration_indexing() -> None:
    a, b, c = spheres(3)
    g = CollisionShapeGroup([a, b, c])
    assert len(g) == 3
    assert list(g) == [a, b, c]
    assert g[0] is a and g[-1] is c
    assert g[1:] == [b, c]
    assert g[::-1] == [c, b, a]
    assert b in g and Sphere(1.0) not in g
    assert g.index(c) == 2
    assert g.count(a) == 1
    with pytest.raises(IndexError):
        g[3]
    assert len(CollisionShapeGroup()) == 0
    assert list(CollisionShapeGroup(x for x in spheres(2))) != []


def test_slicing_returns_a_plain_list_and_leaves_parents_alone() -> None:
    a, b = spheres(2)
    g = CollisionShapeGroup([a, b])
    part = g[0:1]
    assert type(part) is list
    assert part == [a]
    assert a.scene_parent is g


def test_append_insert_extend_iadd_set_parent_and_order() -> None:
    a, b, c, d, e = spheres(5)
    g = CollisionShapeGroup([a])
    g.append(c)
    g.insert(1, b)
    g.extend([d])
    same = g
    g += [e]
    assert g is same
    assert list(g) == [a, b, c, d, e]
    assert all(x.scene_parent is g for x in (a, b, c, d, e))


def test_nested_group_is_an_element() -> None:
    a, b = spheres(2)
    inner = CollisionShapeGroup([b])
    g = CollisionShapeGroup([a, inner])
    assert g[1] is inner and inner.scene_parent is g and b.scene_parent is inner
    assert g.leaves() == [a, b]
    assert len(g) == 2


def test_item_assignment_swaps_parents() -> None:
    a, b, c = spheres(3)
    g = CollisionShapeGroup([a, b])
    g[1] = c
    assert list(g) == [a, c]
    assert c.scene_parent is g and b.scene_parent is None
    g[0] = a  # the same element again: nothing changes
    assert a.scene_parent is g and list(g) == [a, c]


def test_slice_assignment_replaces_reorders_and_keeps() -> None:
    a, b, c, d = spheres(4)
    g = CollisionShapeGroup([a, b, c])
    g[0:2] = [b, a]  # reorder: both stay in the group
    assert list(g) == [b, a, c] and a.scene_parent is g and b.scene_parent is g
    g[1:3] = [d]  # a and c leave, d joins
    assert list(g) == [b, d]
    assert a.scene_parent is None and c.scene_parent is None and d.scene_parent is g
    g[::2] = [c]  # extended slice of the same length
    assert list(g) == [c, d] and b.scene_parent is None and c.scene_parent is g
    g[:] = []
    assert len(g) == 0 and c.scene_parent is None and d.scene_parent is None


def test_slice_assignment_of_wrong_length_changes_nothing() -> None:
    a, b, c, d = spheres(4)
    g = CollisionShapeGroup([a, b, c])
    with pytest.raises(
        InvalidArgumentError,
        match=r"^the extended slice \[::2\] holds 2 elements, got 1 shapes to put in it$",
    ):
        g[::2] = [d]
    for wrong in (d, 5, "ab"):
        with pytest.raises(
            ShapeTypeError, match=r"^a slice of a group takes an iterable of shapes, got "
        ):
            g[0:1] = wrong  # type: ignore[assignment]
    assert list(g) == [a, b, c] and d.scene_parent is None
    assert all(x.scene_parent is g for x in (a, b, c))


def test_slice_assignment_refuses_an_element_twice() -> None:
    a, b = spheres(2)
    g = CollisionShapeGroup([a, b])
    with pytest.raises(InvalidShapeError, match="given twice"):
        g[0:1] = [a, a]
    assert list(g) == [a, b]
    with pytest.raises(InvalidShapeError, match="given twice"):
        g.extend([Sphere(1.0), (c := Sphere(2.0)), c])
    assert list(g) == [a, b] and c.scene_parent is None


def test_reverse_and_data_copy() -> None:
    a, b = spheres(2)
    g = CollisionShapeGroup([a, b])
    g.reverse()
    assert list(g) == [b, a] and a.scene_parent is g
    data = g.data
    data.clear()
    assert len(g) == 2


REMOVERS: dict[str, Callable[[CollisionShapeGroup, CollisionShape], None]] = {
    "remove": lambda g, x: g.remove(x),
    "pop": lambda g, x: None if g.pop() is x else pytest.fail("pop returned another element"),
    "pop(0)": lambda g, x: None if g.pop(0) is x else pytest.fail("pop returned another"),
    "del item": lambda g, x: g.__delitem__(g.index(x)),
    "del slice": lambda g, x: g.__delitem__(slice(0, len(g))),
    "clear": lambda g, x: g.clear(),
    "item assignment": lambda g, x: g.__setitem__(g.index(x), Sphere(0.1)),
    "slice assignment": lambda g, x: g.__setitem__(slice(0, len(g)), []),
}


@pytest.mark.parametrize("how", sorted(REMOVERS))
def test_every_removal_clears_parent_and_restores_own_pose(how: str) -> None:
    # The group sits at x = 5 and the unit sphere at x = 1 in it: world x = 6. The probe, a
    # unit sphere at the origin, is 6 - 1 - 1 = 4 away. Out of the group, the sphere is back
    # at its own T (x = 1): 1 - 1 - 1 = -1 from the probe, overlapping.
    element = Sphere(1.0, pose=trans(1.0))
    g = CollisionShapeGroup([element], pose=trans(5.0))
    probe = Sphere(1.0)
    assert element.distance(probe) == pytest.approx(4.0, abs=ATOL)
    assert_point(element.world_T[:3, 3], [6, 0, 0])
    REMOVERS[how](g, element)
    assert element.scene_parent is None
    assert element not in g
    np.testing.assert_array_equal(element.world_T, element.T)
    assert element.distance(probe) == pytest.approx(-1.0, abs=ATOL)
    assert element.iscollided(probe)
    assert not g.iscollided(probe)


def test_remove_of_a_stranger_raises() -> None:
    a, b = spheres(2)
    g = CollisionShapeGroup([a])
    with pytest.raises(ValueError, match="not in this group"):
        g.remove(b)
    assert b.scene_parent is None and list(g) == [a]


def test_scene_parent_is_read_only() -> None:
    g = CollisionShapeGroup()
    s = Sphere(1.0)
    with pytest.raises(AttributeError):
        s.scene_parent = g  # type: ignore[misc]


# ----------------------------------------------------------------- refused elements

Adder = Callable[[CollisionShapeGroup, CollisionShape, Any], Any]


def _iadd(g: CollisionShapeGroup, good: CollisionShape, bad: Any) -> None:
    g += [good, bad]


ADDERS: dict[str, Adder] = {
    "constructor": lambda g, good, bad: CollisionShapeGroup([good, bad]),
    "append": lambda g, good, bad: g.append(bad),
    "insert": lambda g, good, bad: g.insert(0, bad),
    "extend": lambda g, good, bad: g.extend([good, bad]),
    "+=": _iadd,
    "item assignment": lambda g, good, bad: g.__setitem__(0, bad),
    "slice assignment": lambda g, good, bad: g.__setitem__(slice(0, 1), [good, bad]),
}

# Made in the test (spatialgeometry objects kept alive until exit make nanobind complain).
NOT_SHAPES: list[tuple[Callable[[], Any], str]] = [
    (lambda: Axes(1.0), "Axes"),
    (lambda: SGSphere(1.0), "Sphere"),  # spatialgeometry's own sphere is not one of ours
    (lambda: 3, "int"),
    (lambda: "cube", "str"),
    (lambda: None, "NoneType"),
    (lambda: [Sphere(1.0)], "list"),
]


@pytest.mark.parametrize("how", sorted(ADDERS))
@pytest.mark.parametrize(("make_bad", "type_name"), NOT_SHAPES, ids=[t for _, t in NOT_SHAPES])
def test_every_way_in_refuses_non_shapes_and_adds_nothing(
    how: str, make_bad: Callable[[], Any], type_name: str
) -> None:
    bad = make_bad()
    first, good = spheres(2)
    g = CollisionShapeGroup([first])
    with pytest.raises(TypeError, match=rf"only accepts CollisionShape .*got {type_name}\b"):
        ADDERS[how](g, good, bad)
    with pytest.raises(ShapeTypeError):
        ADDERS[how](g, good, bad)
    assert list(g) == [first] and first.scene_parent is g
    assert good.scene_parent is None


def test_iadd_with_a_non_iterable_names_its_type() -> None:
    g = CollisionShapeGroup()
    with pytest.raises(TypeError, match="'Axes' object is not iterable"):
        g += Axes(1.0)
    assert len(g) == 0


@pytest.mark.parametrize("how", sorted(ADDERS))
def test_every_way_in_refuses_a_member_of_another_group(how: str) -> None:
    first, good, taken = spheres(3)
    owner = CollisionShapeGroup([taken])
    g = CollisionShapeGroup([first])
    with pytest.raises(InvalidShapeError, match="already in a group"):
        ADDERS[how](g, good, taken)
    assert taken.scene_parent is owner and list(owner) == [taken]
    assert list(g) == [first] and good.scene_parent is None


def test_an_element_cannot_be_added_twice() -> None:
    a = Sphere(1.0)
    with pytest.raises(InvalidShapeError, match="given twice"):
        CollisionShapeGroup([a, a])
    assert a.scene_parent is None
    g = CollisionShapeGroup([a])
    with pytest.raises(InvalidShapeError, match="already in a group"):
        g.append(a)
    assert list(g) == [a]


@pytest.mark.parametrize("how", ["append", "insert", "extend", "+=", "item assignment"])
def test_a_group_cannot_enter_itself_or_its_descendant(how: str) -> None:
    leaf = Sphere(1.0)
    inner = CollisionShapeGroup([leaf])
    mid = CollisionShapeGroup([Sphere(2.0), inner])
    top = CollisionShapeGroup([mid])
    for target, item in ((top, top), (inner, top), (mid, top)):
        with pytest.raises(InvalidShapeError, match="inside itself or its own descendant"):
            ADDERS[how](target, Sphere(3.0), item)
    assert list(top) == [mid] and list(inner) == [leaf] and top.scene_parent is None


# ---------------------------------------------------------------- no single geometry


def test_geometry_is_not_available_and_to_dict_nests_the_elements() -> None:
    g = CollisionShapeGroup([Sphere(1.0, pose=trans(1.0))], pose=trans(0.0, 2.0), name="g")
    d = g.to_dict()
    assert (d["stype"], d["name"], d["collision"], d["t"]) == ("group", "g", True, [0, 2, 0])
    assert d["elements"] == [g[0].to_dict()] and d["elements"][0]["t"] == [1.0, 2.0, 0.0]
    with pytest.raises(NotImplementedError, match="no single Coal geometry"):
        g.geometry  # noqa: B018
    with pytest.raises(NotImplementedError, match="no single Coal geometry"):
        g._build_geometry()


def test_element_to_dict_gives_its_world_pose() -> None:
    s = Sphere(1.0, pose=trans(1.0))
    CollisionShapeGroup([s], pose=trans(0.0, 2.0))
    assert s.to_dict()["t"] == pytest.approx([1.0, 2.0, 0.0])


def test_repr_and_equals() -> None:
    def build(r: float, x: float) -> CollisionShapeGroup:
        inner = CollisionShapeGroup([Sphere(r, pose=trans(x))], name="inner")
        return CollisionShapeGroup([Cuboid([1, 2, 3]), inner], pose=trans(0, 0, 1))

    g = build(1.0, 2.0)
    assert repr(g).startswith("CollisionShapeGroup([Cuboid(") and "name='inner'" in repr(g)
    assert g.equals(build(1.0, 2.0))
    assert not g.equals(build(1.5, 2.0))
    assert not g.equals(build(1.0, 2.5))
    assert not g.equals(Sphere(1.0))
    assert g != build(1.0, 2.0)  # == is identity


# ------------------------------------------------------------------------ world poses

TOP = SE3.Trans(1, 2, 3) * SE3.Rz(0.5)
MID = SE3.Trans(0, 1, 0) * SE3.Rx(0.3)
INNER = SE3.Rz(math.pi / 2) * SE3.Trans(1, 0, 0)
LEAF = SE3.Trans(0, 0, 2) * SE3.Ry(-0.7)


def three_deep() -> tuple[CollisionShapeGroup, CollisionShapeGroup, CollisionShapeGroup, Sphere]:
    leaf = Sphere(0.25, pose=LEAF)
    inner = CollisionShapeGroup([leaf], pose=INNER)
    mid = CollisionShapeGroup([inner], pose=MID)
    top = CollisionShapeGroup([mid], pose=TOP)
    return top, mid, inner, leaf


def test_world_T_composes_three_levels() -> None:
    top, mid, inner, leaf = three_deep()
    np.testing.assert_allclose(leaf.T, LEAF.A, atol=ATOL)  # T stays relative to the group
    np.testing.assert_allclose(top.world_T, TOP.A, atol=ATOL)
    np.testing.assert_allclose(mid.world_T, TOP.A @ MID.A, atol=ATOL)
    np.testing.assert_allclose(inner.world_T, TOP.A @ MID.A @ INNER.A, atol=ATOL)
    world = TOP.A @ MID.A @ INNER.A @ LEAF.A
    np.testing.assert_allclose(leaf.world_T, world, atol=ATOL)
    # The Coal transform used by queries is the same pose: a probe sphere of radius 0.5
    # three metres along world x from the leaf's centre is 3 - 0.25 - 0.5 = 2.25 away.
    probe = Sphere(0.5, pose=trans(*(world[:3, 3] + [3.0, 0.0, 0.0])))
    assert top.distance(probe) == pytest.approx(2.25, abs=ATOL)
    assert leaf.distance(probe) == pytest.approx(2.25, abs=ATOL)


def test_group_world_T_is_read_only_and_pose_checked() -> None:
    g = CollisionShapeGroup(pose=trans(1.0))
    with pytest.raises(ValueError, match="read-only"):
        g.world_T[0, 3] = 5.0
    bad = np.eye(4)
    bad[0, 0] = 2.0
    with pytest.raises(InvalidPoseError):
        g.T = bad
    with pytest.raises(InvalidPoseError):
        CollisionShapeGroup(pose=bad)
    np.testing.assert_array_equal(g.T, trans(1.0).A)


def test_pose_setters_accept_se3_and_arrays() -> None:
    g = CollisionShapeGroup([Sphere(1.0)])
    g.pose = trans(0, 3)
    np.testing.assert_allclose(g[0].world_T[:3, 3], [0, 3, 0])
    g.T = trans(0, 0, 4).A
    np.testing.assert_allclose(g[0].world_T[:3, 3], [0, 0, 4])


def test_moving_a_group_moves_its_shapes_for_the_next_query() -> None:
    # Unit sphere in a group; probe of radius 0.5 at x = 5. At the origin the gap is
    # 5 - 1.5 = 3.5; with the group moved to x = 4.5 the sphere reaches x = 5.5 and
    # overlaps the probe by 1.5 - 0.5 = 1.0. No update() call in between.
    leaf = Sphere(1.0)
    g = CollisionShapeGroup([leaf])
    probe = Sphere(0.5, pose=trans(5.0))
    assert not g.iscollided(probe) and not probe.iscollided(g) and not leaf.iscollided(probe)
    assert g.distance(probe) == pytest.approx(3.5, abs=ATOL)
    g.T = trans(4.5)
    assert g.iscollided(probe) and probe.iscollided(g) and leaf.iscollided(probe)
    assert g.distance(probe) == pytest.approx(-1.0, abs=ATOL)
    assert probe.distance(g) == pytest.approx(-1.0, abs=ATOL)
    assert len(g.contacts(probe)) == 1


def test_moving_and_resizing_a_leaf_inside_a_group_changes_the_group_answer() -> None:
    # Leaf at x = 1 in a group at x = 2: world x = 3, probe (r = 0.5) at x = 10:
    # 10 - 3 - 1 - 0.5 = 5.5. Leaf moved to local x = 4: 10 - 6 - 1.5 = 2.5.
    # Radius 2: 10 - 6 - 2.5 = 1.5.
    leaf = Sphere(1.0, pose=trans(1.0))
    g = CollisionShapeGroup([Cuboid([1, 1, 1], pose=trans(-20.0)), leaf], pose=trans(2.0))
    probe = Sphere(0.5, pose=trans(10.0))
    assert g.distance(probe) == pytest.approx(5.5, abs=ATOL)
    leaf.T = trans(4.0)
    assert g.distance(probe) == pytest.approx(2.5, abs=ATOL)
    leaf.radius = 2.0
    assert g.distance(probe) == pytest.approx(1.5, abs=ATOL)
    assert_point(leaf.world_T[:3, 3], [6, 0, 0])


def test_appending_to_a_posed_group_places_relative_to_it() -> None:
    # Group at x = 2 rotated 90° about z; element at local x = 1 -> world (2, 1, 0).
    g = CollisionShapeGroup(pose=trans(2.0) * SE3.Rz(math.pi / 2))
    s = Sphere(0.5, pose=trans(1.0))
    g.append(s)
    assert_point(s.world_T[:3, 3], [2, 1, 0])
    np.testing.assert_allclose(s.T, trans(1.0).A, atol=ATOL)
    # Probe r = 1 at (2, 4, 0): 3 - 0.5 - 1 = 1.5, closest points (2, 1.5, 0) and (2, 3, 0).
    probe = Sphere(1.0, pose=trans(2.0, 4.0))
    d, p1, p2 = g.closest_point(probe, inf_dist=10.0)
    assert d == pytest.approx(1.5, abs=ATOL)
    assert_point(p1, [2, 1.5, 0])
    assert_point(p2, [2, 3, 0])


def test_three_deep_nesting_moves_with_each_parent() -> None:
    # top at x = 10, mid turned 90° about z, inner at x = 2 in mid: the unit sphere is at
    # (10, 0, 0) + Rz(90°)(2, 0, 0) = (10, 2, 0). Other group: top2 at (10, 6, 0), mid2 turned
    # 180° about x holding a sphere r = 0.5 at local y = 1 -> world (10, 5, 0).
    leaf = Sphere(1.0)
    inner = CollisionShapeGroup([leaf], pose=trans(2.0))
    mid = CollisionShapeGroup([inner], pose=SE3.Rz(math.pi / 2))
    top = CollisionShapeGroup([mid, Cuboid([1, 1, 1], pose=trans(0, 0, -10))], pose=trans(10))
    other_leaf = Sphere(0.5, pose=trans(0, 1))
    top2 = CollisionShapeGroup(
        [CollisionShapeGroup([other_leaf], pose=SE3.Rx(math.pi))], pose=trans(10, 6)
    )
    # 3 - 1 - 0.5 = 1.5 between the centres' gap; points (10, 3, 0) and (10, 4.5, 0).
    d, p1, p2 = top.closest_point(top2, inf_dist=math.inf)
    assert d == pytest.approx(1.5, abs=ATOL)
    assert_point(p1, [10, 3, 0])
    assert_point(p2, [10, 4.5, 0])
    d, p1, p2 = top2.closest_point(top, inf_dist=math.inf)
    assert d == pytest.approx(1.5, abs=ATOL)
    assert_point(p1, [10, 4.5, 0])
    assert_point(p2, [10, 3, 0])
    # mid back to identity: leaf at (12, 0, 0), sqrt(2² + 5²) - 1.5 = sqrt(29) - 1.5.
    mid.T = np.eye(4)
    assert top.distance(top2) == pytest.approx(math.sqrt(29) - 1.5, abs=ATOL)
    # top moved to (10, 3, 0): leaf at (12, 3, 0), sqrt(4 + 4) - 1.5.
    top.T = trans(10, 3)
    assert top.distance(top2) == pytest.approx(math.sqrt(8) - 1.5, abs=ATOL)
    # inner moved to (0, 2.5, 0) in mid: leaf at (10, 5.5, 0), overlapping other_leaf:
    # 0.5 - 1.5 = -1.0.
    inner.T = trans(0, 2.5)
    assert top.iscollided(top2) and top2.iscollided(top)
    assert top.distance(top2) == pytest.approx(-1.0, abs=ATOL)
    (c,) = top.contacts(top2)
    assert c.o1 is leaf and c.o2 is other_leaf


# ---------------------------------------------------------------------------- queries


def group_a() -> tuple[CollisionShapeGroup, Sphere, Cuboid]:
    """Unit sphere at the origin and a 2 m cube centred at x = 3 (faces at x = 2 and 4)."""
    s = Sphere(1.0, name="sA")
    c = Cuboid([2, 2, 2], pose=trans(3.0), name="cA")
    return CollisionShapeGroup([s, c]), s, c


def test_group_vs_shape_known_answers() -> None:
    g, _, _ = group_a()
    # Probe r = 0.5 at x = -3: sphere 3 - 1.5 = 1.5; cube face x = 2: 2 - (-3) - 0.5 = 4.5.
    probe = Sphere(0.5, pose=trans(-3.0))
    assert not g.iscollided(probe) and not (g & probe) and not (probe & g)
    d, p1, p2 = g.closest_point(probe)  # inf_dist = 1.0 by default: 1.5 is beyond it
    assert (d, p1, p2) == (None, None, None)
    d, p1, p2 = g.closest_point(probe, inf_dist=1.5)  # equal to the cut-off: returned
    assert d == pytest.approx(1.5, abs=ATOL)
    assert_point(p1, [-1, 0, 0])  # on the group (self)
    assert_point(p2, [-2.5, 0, 0])  # on the probe
    d, p1, p2 = probe.closest_point(g, inf_dist=2)
    assert d == pytest.approx(1.5, abs=ATOL)
    assert_point(p1, [-2.5, 0, 0])  # on the probe (self)
    assert_point(p2, [-1, 0, 0])
    assert g.distance(probe) == pytest.approx(1.5, abs=ATOL)
    assert probe.distance(g) == pytest.approx(1.5, abs=ATOL)
    assert len(g.contacts(probe)) == 0 and len(probe.contacts(g)) == 0


def test_contacts_union_deepest_first_with_leaves() -> None:
    g, s, c = group_a()
    # Probe r = 0.6 at x = 1.45 spans [0.85, 2.05]: into the sphere 1.45 - 1.6 = -0.15,
    # into the cube 2 - 2.05 = -0.05.
    probe = Sphere(0.6, pose=trans(1.45))
    assert g.iscollided(probe) and probe.iscollided(g) and (g & probe)
    assert g.distance(probe) == pytest.approx(-0.15, abs=ATOL)
    found = g.contacts(probe, max_contacts=3)
    assert [x.o1 for x in found] == [s, c] and all(x.o2 is probe for x in found)
    np.testing.assert_allclose(found.penetration_depth, [-0.15, -0.05], atol=ATOL)
    np.testing.assert_allclose(found.normal, [[1, 0, 0], [-1, 0, 0]], atol=ATOL)  # o1 -> o2
    back = probe.contacts(g)
    assert [x.o2 for x in back] == [s, c] and all(x.o1 is probe for x in back)
    np.testing.assert_allclose(back.normal, [[-1, 0, 0], [1, 0, 0]], atol=ATOL)
    # A report from the group's side names the leaf's partner.
    assert found[0].report(g).other is probe


def test_contacts_security_margin_adds_near_leaves() -> None:
    g, s, c = group_a()
    # Probe r = 0.6 at x = 1.15 spans [0.55, 1.75]: sphere 1.15 - 1.6 = -0.45, cube 2 - 1.75
    # = 0.25 apart: reported only with a margin above 0.25.
    probe = Sphere(0.6, pose=trans(1.15))
    assert [x.o1 for x in g.contacts(probe)] == [s]
    assert [x.o1 for x in g.contacts(probe, security_margin=0.2)] == [s]
    found = g.contacts(probe, security_margin=0.3)
    assert [x.o1 for x in found] == [s, c]
    np.testing.assert_allclose(found.penetration_depth, [-0.45, 0.25], atol=ATOL)


def test_group_vs_group_known_answers() -> None:
    ga, _, c = group_a()
    sb = Sphere(0.5, pose=trans(0, 5))
    cb = Cuboid([1, 1, 1], pose=trans(6.0))
    gb = CollisionShapeGroup([sb, cb])
    # Pairs: sA-sB 5 - 1.5 = 3.5; sA-cB 5.5 - 1 = 4.5; cA-sB |(0,5)-(2,1)| - 0.5 =
    # sqrt(20) - 0.5 = 3.97; cA-cB 5.5 - 4 = 1.5 (the closest).
    assert not ga.iscollided(gb)
    d, p1, p2 = ga.closest_point(gb, inf_dist=2.0)
    assert d == pytest.approx(1.5, abs=ATOL)
    assert p1 is not None and p2 is not None
    assert p1[0] == pytest.approx(4.0) and p2[0] == pytest.approx(5.5)
    assert_point(p2 - p1, [1.5, 0, 0])
    assert ga.closest_point(gb, inf_dist=1.4) == (None, None, None)
    d, p1, p2 = gb.closest_point(ga, inf_dist=2.0)
    assert d == pytest.approx(1.5, abs=ATOL)
    assert p1 is not None and p1[0] == pytest.approx(5.5)
    # gb moved by -1.6: cB spans x in [3.9, 4.9], 0.1 into cA; sB at (-1.6, 5) stays away.
    gb.T = trans(-1.6)
    assert ga.iscollided(gb) and gb.iscollided(ga)
    assert ga.distance(gb) == pytest.approx(-0.1, abs=ATOL)
    (contact,) = ga.contacts(gb)
    assert contact.o1 is c and contact.o2 is cb
    assert contact.penetration_depth == pytest.approx(-0.1, abs=ATOL)


def test_a_group_meets_a_shape_inside_it() -> None:
    # A group against one of its own leaves: the leaf overlaps itself (distance -2 for a
    # unit sphere is not asserted: only that it collides).
    g, s, _ = group_a()
    assert g.iscollided(s) and s.iscollided(g)


def test_empty_group_answers() -> None:
    g = CollisionShapeGroup()
    probe = Sphere(1.0)
    assert not g.iscollided(probe) and not probe.iscollided(g)
    assert g.closest_point(probe, inf_dist=math.inf) == (None, None, None)
    assert g.distance(probe) == math.inf and probe.distance(g) == math.inf
    assert len(g.contacts(probe)) == 0
    assert not g.iscollided(CollisionShapeGroup([CollisionShapeGroup()]))


def test_collision_false_leaves_are_skipped() -> None:
    # The disabled unit sphere overlaps the probe (r = 0.5 at the origin); the enabled one
    # at x = 5 is 5 - 1.5 = 3.5 away.
    off = Sphere(1.0, collision=False)
    on = Sphere(1.0, pose=trans(5.0))
    g = CollisionShapeGroup([off, on])
    probe = Sphere(0.5)
    assert g.leaves() == [off, on]
    assert not g.iscollided(probe) and not probe.iscollided(g)
    assert g.distance(probe) == pytest.approx(3.5, abs=ATOL)
    _, p1, _ = g.closest_point(probe, inf_dist=10)
    assert_point(p1, [4, 0, 0])
    assert len(g.contacts(probe)) == 0
    only_off = CollisionShapeGroup([Sphere(1.0, collision=False)])
    assert not only_off.iscollided(probe)
    assert only_off.distance(probe) == math.inf


@pytest.mark.parametrize("query", ["iscollided", "closest_point", "distance", "contacts"])
def test_disabled_group_cannot_be_queried(query: str) -> None:
    g = CollisionShapeGroup([Sphere(1.0)], collision=False)
    probe = Sphere(1.0)
    with pytest.raises(CollisionDisabledError, match=r"self .*collision=False"):
        getattr(g, query)(probe)
    with pytest.raises(CollisionDisabledError, match=r"other .*collision=False"):
        getattr(probe, query)(g)
    with pytest.raises(CollisionDisabledError, match="collision=False"):
        getattr(CollisionShapeGroup([Sphere(1.0)]), query)(g)


@pytest.mark.parametrize("query", ["iscollided", "closest_point", "distance", "contacts"])
def test_queries_refuse_non_shapes(query: str) -> None:
    g, _, _ = group_a()
    with pytest.raises(ShapeTypeError, match=r"other must be a CollisionShape .*got Axes"):
        getattr(g, query)(Axes(1.0))
    with pytest.raises(ShapeTypeError, match=r"other must be a CollisionShape .*got list"):
        getattr(g, query)([Sphere(1.0)])


def test_query_argument_errors_on_groups() -> None:
    g, _, _ = group_a()
    probe = Sphere(1.0)
    with pytest.raises(ShapeTypeError, match="inf_dist must be a real number, got 'far'"):
        g.closest_point(probe, inf_dist="far")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="inf_dist must not be NaN"):
        g.closest_point(probe, inf_dist=math.nan)
    with pytest.raises(InvalidArgumentError, match="max_contacts must be an integer >= 1, got 0"):
        g.contacts(probe, max_contacts=0)
    with pytest.raises(InvalidArgumentError, match="security_margin must be finite"):
        g.contacts(probe, security_margin=math.inf)
    with pytest.raises(TypeError):
        g & 3


# --------------------------------------------------------------------------- pickling


def test_pickled_nested_group_round_trips_with_the_same_answers() -> None:
    top, _, _, leaf = three_deep()
    top.append(Cuboid([1, 2, 3], pose=trans(0, 1)))
    probe = CollisionShapeGroup([Sphere(0.3, pose=SE3(leaf.world_T) * trans(0.4))])
    copy, probe_copy = pickle.loads(pickle.dumps((top, probe)))
    assert copy.equals(top) and copy is not top
    assert copy[0].scene_parent is copy and copy[0][0][0].scene_parent is copy[0][0]
    np.testing.assert_allclose(copy[0][0][0].world_T, leaf.world_T, atol=ATOL)
    assert copy.iscollided(probe_copy) == top.iscollided(probe)
    assert copy.distance(probe_copy) == pytest.approx(top.distance(probe), abs=ATOL)
    d0, p0, q0 = top.closest_point(probe, inf_dist=5)
    d1, p1, q1 = copy.closest_point(probe_copy, inf_dist=5)
    assert d1 == pytest.approx(d0, abs=ATOL)
    assert_point(p1, p0)
    assert_point(q1, q0)
    c0, c1 = top.contacts(probe), copy.contacts(probe_copy)
    assert len(c0) == len(c1) == 1
    np.testing.assert_allclose(c1.penetration_depth, c0.penetration_depth, atol=ATOL)
    assert c1[0].o1 is copy[0][0][0]
    # The copy still moves as a whole.
    copy.T = SE3(copy.T) * trans(0, 0, 50)
    assert not copy.iscollided(probe_copy)


def test_pickled_element_of_a_group_keeps_its_world_pose() -> None:
    _, mid, inner, leaf = three_deep()
    for original in (leaf, inner, mid):
        copy = pickle.loads(pickle.dumps(original))
        np.testing.assert_allclose(copy.world_T, original.world_T, atol=ATOL)
        probe = Sphere(0.1, pose=SE3(leaf.world_T) * trans(1.0))
        # 1 - 0.25 - 0.1 = 0.65 from the leaf, whichever object the copy was made from.
        assert copy.distance(probe) == pytest.approx(0.65, abs=ATOL)
