"""Scene: known answers worked out by hand, change tracking, allowed pairs and every error."""

from __future__ import annotations

import copy
import math
import pickle
from typing import Any

import numpy as np
import pytest
import trimesh
from conftest import HULL_POINTS, OCTREE_POINTS, rot, trans

from spatialcontact import (
    Capsule,
    CollisionDisabledError,
    CollisionShapeGroup,
    ConvexHull,
    Cuboid,
    Ellipsoid,
    HalfSpace,
    Mesh,
    OcTree,
    Scene,
    ShapeTypeError,
    Sphere,
    UnsupportedPairError,
)
from spatialcontact.errors import InvalidArgumentError, NotInSceneError, SceneError
from spatialcontact.scene.broadphase import _geometry_pairs


def ball(x: float, radius: float = 0.5, y: float = 0.0) -> Sphere:
    return Sphere(radius, pose=trans(x, y))


def scene_of(**objects: Any) -> Scene:
    scene = Scene()
    for name, shape in objects.items():
        scene.add(shape, name)
    return scene


# ----------------------------------------------------------------------- basic answers


def test_a_pair_is_found_and_lost_when_an_object_moves() -> None:
    # Radii 0.5 + 0.5 = 1.0 > 0.9 between centres: 0.1 m of overlap; at 1.1 a 0.1 m gap.
    b = ball(0.9)
    scene = scene_of(a=ball(0.0), b=b)
    assert scene.in_collision()
    assert scene.collisions() == [("a", "b")]
    b.T = trans(1.1)
    assert not scene.in_collision()
    assert scene.collisions() == []
    b.pose = trans(0.95)  # through the SE3-or-array setter too
    assert scene.collisions() == [("a", "b")]


def test_pairs_are_named_in_the_order_the_objects_were_added() -> None:
    scene = scene_of(second=ball(0.0), first=ball(0.9))
    assert scene.collisions() == [("second", "first")]


def test_a_move_inside_a_group_is_picked_up() -> None:
    g = CollisionShapeGroup([ball(0.0), ball(3.0)])
    scene = scene_of(g=g, other=ball(10.0))
    assert not scene.in_collision()
    g[1].T = trans(9.2)  # centres 0.8 apart: overlap
    assert scene.collisions() == [("g", "other")]
    g.T = trans(-5.0)  # the leaf is now at 4.2 in the world
    assert not scene.in_collision()


def test_a_resize_is_picked_up() -> None:
    a = ball(0.0)
    scene = scene_of(a=a, b=ball(1.2))  # gap 1.2 - 1.0 = 0.2
    assert not scene.in_collision()
    a.radius = 0.8  # 0.8 + 0.5 = 1.3 > 1.2
    assert scene.collisions() == [("a", "b")]


def test_a_change_of_a_groups_contents_is_picked_up() -> None:
    g = CollisionShapeGroup([ball(-5.0)])
    scene = scene_of(g=g, target=ball(0.0))
    assert not scene.in_collision()
    leaf = ball(0.6)
    g.append(leaf)
    assert scene.collisions() == [("g", "target")]
    assert scene.name_of(leaf) == "g"
    del g[1]
    assert not scene.in_collision()
    with pytest.raises(NotInSceneError, match="is not in this scene"):
        scene.name_of(leaf)


def test_objects_that_move_together_are_checked_against_each_other() -> None:
    a, b, c = ball(0.0), ball(5.0), ball(10.0)
    scene = scene_of(a=a, b=b, c=c)
    assert not scene.in_collision()
    a.T = trans(20.0)
    b.T = trans(20.5)  # a and b both moved, onto each other
    assert scene.collisions() == [("a", "b")]
    c.T = trans(21.2)  # b stays: c at 0.7 from b, 1.2 from a
    assert scene.collisions() == [("a", "b"), ("b", "c")]


def test_a_shape_in_two_scenes_is_followed_by_both() -> None:
    moving = ball(5.0)
    one = scene_of(moving=moving, a=ball(0.0))
    two = scene_of(b=ball(0.0), moving=moving)
    assert not one.in_collision() and not two.in_collision()
    moving.T = trans(0.5)
    assert one.collisions() == [("moving", "a")]
    assert two.collisions() == [("b", "moving")]


# ----------------------------------------------------------------------------- names


def test_generated_names_skip_taken_ones_and_are_not_reused() -> None:
    scene = Scene()
    assert scene.add(ball(0.0), "object_1") == "object_1"
    assert scene.add(ball(3.0)) == "object_0"
    assert scene.add(ball(6.0)) == "object_2"
    scene.remove("object_0")
    assert scene.add(ball(9.0)) == "object_3"


def test_names_indices_and_membership() -> None:
    a, b, c = ball(0.0), ball(3.0), ball(6.0)
    scene = scene_of(a=a, b=b, c=c)
    assert scene.names == ("a", "b", "c")
    assert list(scene) == ["a", "b", "c"] and len(scene) == 3
    assert [scene.index_of(n) for n in "abc"] == [0, 1, 2]
    assert "b" in scene and b in scene and "z" not in scene and ball(0.0) not in scene
    assert 5 not in scene
    assert scene["b"] is b
    assert scene.remove("b") is b
    assert scene.names == ("a", "c") and scene.index_of("c") == 1
    assert "b" not in scene and b not in scene
    assert repr(scene) == "Scene(2 objects: ['a', 'c'])"


def test_name_of_a_leaf_a_group_and_a_nested_shape() -> None:
    inner = ball(0.0)
    sub = CollisionShapeGroup([inner])
    g = CollisionShapeGroup([sub, ball(2.0)])
    solo = ball(9.0)
    scene = scene_of(g=g, solo=solo)
    assert scene.name_of(inner) == "g"
    assert scene.name_of(sub) == "g"
    assert scene.name_of(g) == "g"
    assert scene.name_of(solo) == "solo"


def test_removing_an_object_leaves_the_rest_working() -> None:
    a, b = ball(0.0), ball(0.9)
    scene = scene_of(a=a, b=b, c=ball(1.8))
    assert scene.collisions() == [("a", "b"), ("b", "c")]
    scene.remove("b")
    assert scene.collisions() == []
    b.T = trans(0.2)  # no longer in the scene: its moves are not followed
    assert not scene.in_collision()
    assert not b._observers  # the scene no longer watches it
    a.T = trans(1.0)
    assert scene.collisions() == [("a", "c")]


# ------------------------------------------------------------------ allowed collisions


def test_allow_and_disallow() -> None:
    # a-b and b-c overlap by 0.1; a and c are 1.8 apart (gap 0.8).
    scene = scene_of(a=ball(0.0), b=ball(0.9), c=ball(1.8))
    assert scene.collisions() == [("a", "b"), ("b", "c")]
    scene.allow("c", "b")
    scene.allow("b", "c")  # twice is harmless
    assert scene.is_allowed("b", "c") and scene.is_allowed("c", "b")
    assert scene.allowed_pairs == [("b", "c")]
    assert scene.collisions() == [("a", "b")]
    assert scene.in_collision()
    scene.allow("a", "b")
    assert not scene.in_collision() and scene.collisions() == []
    assert len(scene.contacts()) == 0
    scene.disallow("b", "a")
    assert scene.collisions() == [("a", "b")]
    scene.disallow("a", "c")  # never allowed: nothing to undo
    assert scene.allowed_pairs == [("b", "c")]


def test_allowing_a_group_skips_all_of_its_leaves() -> None:
    g = CollisionShapeGroup([ball(0.0), ball(3.0)])
    scene = scene_of(g=g, near_first=ball(0.9), near_second=ball(3.9))
    assert scene.collisions() == [("g", "near_first"), ("g", "near_second")]
    scene.allow("g", "near_first")
    assert scene.collisions() == [("g", "near_second")]
    g.T = trans(0.1)  # allowed pairs stay allowed after a move
    assert scene.collisions() == [("g", "near_second")]


def test_removing_an_object_forgets_its_allowed_pairs() -> None:
    scene = scene_of(a=ball(0.0), b=ball(0.9))
    scene.allow("a", "b")
    scene.remove("b")
    assert scene.allowed_pairs == []
    scene.add(ball(0.9), "b")
    assert scene.collisions() == [("a", "b")]


def test_self_collision_is_off_by_default_and_can_be_turned_on() -> None:
    # Two leaves 0.6 apart with radius 0.5: 0.4 m of overlap inside the group.
    g = CollisionShapeGroup([ball(0.0), ball(0.6)])
    plain = scene_of(g=g)
    assert not plain.in_collision() and plain.collisions() == []
    checked = Scene()
    checked.add(g, "g", self_collision=True)
    assert checked.collisions() == [("g", "g")]
    (c,) = checked.contacts()
    assert c.o1 is g[0] and c.o2 is g[1]
    assert c.penetration_depth == pytest.approx(-0.4)
    g[1].T = trans(1.5)
    assert not checked.in_collision()


# --------------------------------------------------------------------------- contacts


def test_contacts_known_answer_with_o1_from_the_object_added_first() -> None:
    # Spheres of radius 1 at x = 1.5 (added first) and x = 0: depth 2 - 1.5 = 0.5; the normal
    # points from o1 (at 1.5) to o2 (at 0); the witness points are x = 0.5 on o1 and x = 1.0
    # on o2, the contact position their midpoint 0.75.
    first, second = Sphere(1.0, pose=trans(1.5)), Sphere(1.0)
    scene = scene_of(first=first, second=second)
    (c,) = scene.contacts()
    assert c.o1 is first and c.o2 is second
    assert c.penetration_depth == pytest.approx(-0.5)
    np.testing.assert_allclose(c.normal, [-1.0, 0.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(c.nearest_points, [[0.5, 0, 0], [1.0, 0, 0]], atol=1e-9)
    np.testing.assert_allclose(c.pos, [0.75, 0.0, 0.0], atol=1e-9)
    assert scene.name_of(c.o1) == "first" and scene.name_of(c.o2) == "second"
    assert scene.contacts() == scene.contacts()  # reused until something moves


def test_contacts_are_grouped_by_pair_of_objects_then_deepest_first() -> None:
    # g's leaves at 0 and 1.6, radius 0.5; ball at 0.9: 0.9 from leaf 0 (depth -0.1) and 0.7
    # from leaf 1 (depth -0.3). third (radius 0.5) at 2.3 touches leaf 1 only: 0.7 apart,
    # depth -0.3, and the ball 1.4 apart: none.
    g = CollisionShapeGroup([ball(0.0), ball(1.6)])
    middle = ball(0.9)
    third = ball(2.3)
    scene = scene_of(g=g, middle=middle, third=third)
    found = scene.contacts()
    assert [(c.o1, c.o2) for c in found] == [(g[1], middle), (g[0], middle), (g[1], third)]
    np.testing.assert_allclose(found.penetration_depth, [-0.3, -0.1, -0.3], atol=1e-9)
    assert scene.collisions() == [("g", "middle"), ("g", "third")]


def test_contacts_keep_the_deepest_per_pair_of_leaves() -> None:
    # A 0.4 m cube spanning x 0.25..0.65 crosses the surface of a hollow icosphere of radius
    # 0.5 (its inner corners are 0.38 from the centre, its outer ones 0.71): several triangles
    # touch it, and max_contacts_per_pair keeps the deepest of them.
    sphere_mesh = Mesh.from_trimesh(trimesh.creation.icosphere(subdivisions=2, radius=0.5))
    scene = scene_of(mesh=sphere_mesh, box=Cuboid([0.4, 0.4, 0.4], pose=trans(0.45)))
    one = scene.contacts()
    three = scene.contacts(max_contacts_per_pair=3)
    assert len(one) == 1
    assert len(three) == 3
    assert one[0] == three[0]
    assert list(three.penetration_depth) == sorted(three.penetration_depth)


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (0, InvalidArgumentError, "max_contacts_per_pair must be an integer >= 1, got 0"),
        (1.5, ShapeTypeError, "max_contacts_per_pair must be an integer >= 1, got 1.5"),
        (True, ShapeTypeError, "max_contacts_per_pair must be an integer >= 1, got True"),
    ],
)
def test_contacts_refuse_a_bad_count(value: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message) as info:
        Scene().contacts(max_contacts_per_pair=value)
    assert type(info.value) is error  # an argument out of range, not a shape's size


# ------------------------------------------------------------------- collide, distance


def test_collide_with_an_outside_shape() -> None:
    g = CollisionShapeGroup([ball(6.0)])
    scene = scene_of(a=ball(0.0), b=ball(3.0), g=g)
    assert scene.collide(ball(0.9)) == ["a"]
    assert scene.collide(ball(1.5)) == []  # 1.5 from a and from b: gaps of 0.5
    # Radius 4 at x = 3 reaches 7: every object (the last leaf spans 5.5 to 6.5).
    assert scene.collide(Sphere(4.0, pose=trans(3.0))) == ["a", "b", "g"]
    probe = CollisionShapeGroup([ball(0.0), ball(6.2)])
    assert scene.collide(probe) == ["a", "g"]


def test_collide_with_an_object_of_the_scene_leaves_it_and_its_allowed_pairs_out() -> None:
    arm = CollisionShapeGroup([ball(0.0), ball(0.9), ball(1.8)])  # touching links
    scene = scene_of(arm=arm, post=ball(2.7), base=ball(-0.9))
    assert scene.collide(arm) == ["post", "base"]
    assert scene.collide(arm[2]) == ["post"]  # a link: its own group is left out
    scene.allow("arm", "base")
    assert scene.collide(arm) == ["post"]
    assert scene.collide(arm[0]) == []
    assert scene.collide(scene["post"]) == ["arm"]


def test_distance_known_answer() -> None:
    # Probe of radius 0.5 at the origin; a at x = 3 (gap 3 - 1 = 2), b at x = -2 (gap 1).
    scene = scene_of(a=ball(3.0), b=ball(-2.0))
    d, name, p1, p2 = scene.distance(ball(0.0))
    assert name == "b"
    assert d == pytest.approx(1.0)
    assert p1 is not None and p2 is not None
    np.testing.assert_allclose(p1, [-0.5, 0, 0], atol=1e-9)
    np.testing.assert_allclose(p2, [-1.5, 0, 0], atol=1e-9)
    # Overlap: 0.4 between centres, so -0.6.
    d, name, _, _ = scene.distance(ball(2.6))
    assert (name, d) == ("a", pytest.approx(-0.6))


def test_distance_from_an_object_of_the_scene() -> None:
    # b at -2 and a at 3: 5 apart, gap 4; c at 10 is farther.
    scene = scene_of(a=ball(3.0), b=ball(-2.0), c=ball(10.0))
    d, name, p1, p2 = scene.distance(scene["b"])
    assert (name, d) == ("a", pytest.approx(4.0))
    assert p1 is not None and p2 is not None
    np.testing.assert_allclose([p1[0], p2[0]], [-1.5, 2.5], atol=1e-9)
    scene.allow("a", "b")
    assert scene.distance(scene["b"])[:2] == (pytest.approx(11.0), "c")


def test_distance_ties_go_to_the_object_added_first_and_empty_gives_inf() -> None:
    assert Scene().distance(ball(0.0)) == (math.inf, None, None, None)
    lone = scene_of(only=ball(0.0))
    assert lone.distance(lone["only"]) == (math.inf, None, None, None)
    # Both at 2 from the probe: gap 1.0 to each.
    assert scene_of(left=ball(-2.0), right=ball(2.0)).distance(ball(0.0))[1] == "left"
    assert scene_of(right=ball(2.0), left=ball(-2.0)).distance(ball(0.0))[1] == "right"


# ------------------------------------------------------------------ other shape types


def test_half_spaces_in_any_orientation() -> None:
    # Two half-spaces whose normals are not opposite always meet.
    h1 = HalfSpace([0, 0, 1], 0.0, pose=rot("x", 0.7))
    h2 = HalfSpace([0, 0, 1], 0.0, pose=rot("y", -1.1) @ trans(0, 0, 5))
    assert scene_of(h1=h1, h2=h2).collisions() == [("h1", "h2")]
    # {z <= 0} and {-z <= -1} = {z >= 1}, turned by the same rotation: 1 m apart.
    R = rot("x", 0.4) @ rot("z", 1.0)
    below = HalfSpace([0, 0, 1], 0.0, pose=R)
    above = HalfSpace([0, 0, -1], -1.0, pose=R)
    scene = scene_of(below=below, above=above, probe=Sphere(0.4, pose=R @ trans(0, 0, 0.5)))
    assert not scene.in_collision()  # the sphere spans z 0.1 to 0.9 in their frame
    scene["probe"].T = R @ trans(0, 0, 0.7)  # now up to z = 1.1: into `above`
    assert scene.collisions() == [("above", "probe")]


def test_convex_hulls_are_found_in_the_broadphase() -> None:
    # The hull is a cube of side 0.8 (faces at +-0.4); the sphere of radius 0.5 at x = 0.8
    # reaches 0.3: 0.1 m inside. The second hull at x = 0.7 has its faces at 0.3 and 1.1.
    hull = ConvexHull(HULL_POINTS)
    other = ConvexHull(HULL_POINTS, pose=trans(0.7))
    probe = ball(0.8)
    scene = scene_of(hull=hull, other=other, probe=probe)
    assert scene.collisions() == [("hull", "other"), ("hull", "probe"), ("other", "probe")]
    probe.T = trans(0.0, y=3.0)
    assert scene.collisions() == [("hull", "other")]
    assert scene.collide(ball(-0.8)) == ["hull"]
    assert hull.geometry.cost_density == 1.0  # the shape's own geometry is left as it was


def test_octrees_match_the_shape_queries() -> None:
    octree = OcTree(OCTREE_POINTS, 0.1)
    big = Sphere(1.0, pose=trans(5.0))
    box = Cuboid([0.6, 0.6, 0.6], pose=trans(-5.0))  # as large as the whole cloud
    scene = scene_of(octree=octree, big=big, box=box)
    assert not scene.in_collision()
    big.T = trans(0.5)  # a sphere of radius 1 over the whole 0.6 m cloud
    assert octree.iscollided(big)
    assert scene.collisions() == [("octree", "big")]
    octree.T = trans(-5.0)  # the octree moves onto the box
    assert octree.iscollided(box) and not octree.iscollided(big)
    assert scene.collisions() == [("octree", "box")]
    assert scene.collide(Sphere(1.0, pose=trans(-5.0))) == ["octree", "box"]
    assert scene.collide(OcTree(OCTREE_POINTS, 0.1, pose=trans(-5.0))) == ["octree", "box"]


def test_a_pair_coal_cannot_answer_raises_at_every_query() -> None:
    ellipsoid = Ellipsoid([0.5, 0.3, 0.4], pose=trans(5.0))
    scene = scene_of(octree=OcTree(OCTREE_POINTS, 0.1), ellipsoid=ellipsoid)
    assert not scene.in_collision()  # far apart: their boxes do not meet
    ellipsoid.T = trans(0.1)
    with pytest.raises(UnsupportedPairError, match="between an OcTree and an Ellipsoid"):
        scene.in_collision()
    with pytest.raises(UnsupportedPairError, match="between an OcTree and an Ellipsoid"):
        scene.collisions()  # not answered from half-found results
    ellipsoid.T = trans(5.0)
    assert not scene.in_collision()


def test_mesh_pairs_with_many_contacts() -> None:
    # Two hollow icospheres of radius 0.5, 0.3 apart: their surfaces cross along a circle,
    # so Coal reports many triangle pairs for one pair of objects.
    def icosphere(x: float) -> Mesh:
        return Mesh.from_trimesh(
            trimesh.creation.icosphere(subdivisions=2, radius=0.5), pose=trans(x)
        )

    a, b, c = icosphere(0.0), icosphere(0.3), icosphere(1.2)  # c: 0.9 from b, 1.2 from a
    scene = scene_of(a=a, b=b, c=c, far=icosphere(5.0))
    expected = [
        (n1, n2)
        for i, n1 in enumerate(scene.names)
        for n2 in scene.names[i + 1 :]
        if scene[n1].iscollided(scene[n2])
    ]
    assert expected == [("a", "b"), ("b", "c")]
    assert len(a.contacts(b, max_contacts=1000)) > 20
    assert scene.collisions() == expected
    c.T = trans(0.5)  # c moves: now across both a and b
    assert scene.collisions() == [("a", "b"), ("a", "c"), ("b", "c")]


class _FakeGeometry:
    def __init__(self, ident: int) -> None:
        self.ident = ident

    def id(self) -> int:
        return self.ident


class _FakeContact:
    def __init__(self, i: int, j: int) -> None:
        self.o1, self.o2 = _FakeGeometry(i), _FakeGeometry(j)


class _FakeResult:
    """Stands for a Coal CollisionResult and counts the contacts read."""

    def __init__(self, pairs: list[tuple[int, int]]) -> None:
        self.contacts = [_FakeContact(i, j) for i, j in pairs]
        self.reads = 0

    def numContacts(self) -> int:
        return len(self.contacts)

    def getContact(self, i: int) -> _FakeContact:
        self.reads += 1
        return self.contacts[i]


@pytest.mark.parametrize(
    ("runs", "most_reads"),
    [
        ([], 0),
        ([1], 1),
        ([1, 1, 1], 3),
        ([1, 1], 2),
        ([40], 13),  # doubling to 32 (reads 1, 2, 4, 8, 16, 32), then bisecting 32..40
        ([5, 1, 3, 100], 40),
    ],
)
def test_geometry_pairs_reads_each_run_once(runs: list[int], most_reads: int) -> None:
    pairs = [(k, k + 100) for k, run in enumerate(runs) for _ in range(run)]
    result = _FakeResult(pairs)
    assert _geometry_pairs(result) == [(k, k + 100) for k in range(len(runs))]
    assert result.reads <= most_reads


# ---------------------------------------------------------------------------- pickling


def test_copies_of_a_scenes_shapes_are_not_in_it() -> None:
    # Pickling the scene itself: tests/test_scene_pickle.py.
    a, b = ball(0.0), ball(3.0)
    scene = scene_of(a=a, b=b)
    for twin in (pickle.loads(pickle.dumps(b)), copy.deepcopy(b), copy.copy(b)):
        assert twin.equals(b)
        twin.T = trans(0.2)  # moving a copy is not a move of b
        assert not scene.in_collision()
    b.T = trans(0.2)
    assert scene.in_collision()


# ------------------------------------------------------------------------------ errors


def test_add_refuses_what_is_not_a_shape_or_not_a_bool() -> None:
    scene = Scene()
    with pytest.raises(
        ShapeTypeError, match="obj must be a CollisionShape or CollisionShapeGroup, got int: 5"
    ):
        scene.add(5)  # type: ignore[arg-type]
    with pytest.raises(ShapeTypeError, match="self_collision must be True or False, got 'yes'"):
        scene.add(ball(0.0), self_collision="yes")  # type: ignore[arg-type]
    with pytest.raises(ShapeTypeError, match="name must be a string, got 3"):
        scene.add(ball(0.0), 3)  # type: ignore[arg-type]
    with pytest.raises(SceneError, match="name must be a non-empty string, got ''"):
        scene.add(ball(0.0), "")
    assert len(scene) == 0
    assert scene.add(ball(0.0)) == "object_0"  # no name was used up by the failures


def test_add_refuses_a_taken_name_a_held_shape_and_a_grouped_shape() -> None:
    a = ball(0.0)
    scene = scene_of(a=a)
    with pytest.raises(SceneError, match="name 'a' is already used in this scene"):
        scene.add(ball(1.0), "a")
    with pytest.raises(SceneError, match="is already in this scene as 'a'"):
        scene.add(a, "again")
    group = CollisionShapeGroup([ball(5.0)])
    with pytest.raises(SceneError, match=r"belongs to a group \(CollisionShapeGroup"):
        scene.add(group[0])
    with pytest.raises(CollisionDisabledError, match="has collision=False: a scene only"):
        scene.add(Sphere(1.0, collision=False))
    assert scene.names == ("a",)


def test_a_leaf_cannot_belong_to_two_objects() -> None:
    x = ball(0.0)
    scene = scene_of(x=x)
    holder = CollisionShapeGroup([x])  # a group in no scene takes x
    assert scene.name_of(x) == "x"
    with pytest.raises(SceneError, match="is part of 'x' and of the object being added"):
        scene.add(holder, "g")
    assert scene.names == ("x",)
    del holder[0]
    g = CollisionShapeGroup()
    scene.add(g, "g")
    with pytest.raises(SceneError, match="is part of 'x' and of 'g'"):
        g.append(x)  # x would be both an object and inside g: refused at once
    assert len(g) == 0 and x.scene_parent is None
    assert not scene.in_collision()


def test_a_leaf_sharing_a_coal_geometry_is_refused_at_once() -> None:
    a, twin = ball(0.0), ball(5.0)
    twin._geometry = a._geometry  # two shapes on one Coal geometry (contacts could not tell)
    scene = scene_of(a=a)
    g = CollisionShapeGroup()
    scene.add(g, "g")
    with pytest.raises(SceneError, match="shares its Coal geometry with a leaf of 'a'"):
        g.append(twin)
    assert len(g) == 0
    with pytest.raises(SceneError, match="shares its Coal geometry with a leaf of 'a'"):
        scene.add(twin, "twin")
    g.append(ball(0.9))
    assert scene.collisions() == [("a", "g")]  # the scene works on, at every query


def test_a_leaf_may_leave_an_object_and_join_another_between_queries() -> None:
    leaf = ball(0.9)
    g, h = CollisionShapeGroup([leaf]), CollisionShapeGroup([ball(5.0)])
    scene = scene_of(h=h, a=ball(0.0), g=g)
    assert scene.collisions() == [("a", "g")]
    g.remove(leaf)
    h.append(leaf)  # h was added first: it takes the leaf before g lets it go
    assert scene.collisions() == [("h", "a")] and scene.name_of(leaf) == "h"
    h.remove(leaf)
    g.append(leaf)  # back where it was, with no query in between
    h.append(ball(-0.9))  # next to a only
    assert scene.collisions() == [("h", "a"), ("a", "g")]


def test_a_flat_mesh_takes_part_in_a_scene() -> None:
    # A single triangle in the plane z = 0: its bounding box has no height.
    flat = Mesh.from_arrays(np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]]), np.array([[0, 1, 2]]))
    probe = Sphere(0.1, pose=trans(0.2, 0.2, 0.05))
    scene = scene_of(flat=flat, probe=probe)
    for i in range(30):  # enough objects for Coal's tree
        scene.add(ball(10.0 + 3 * i))
    assert scene.collisions() == [("flat", "probe")]
    probe.T = trans(0.2, 0.2, 0.2)
    assert not scene.in_collision()
    flat.T = trans(0.0, 0.0, 0.15)
    assert scene.collisions() == [("flat", "probe")]
    for i in range(30):  # every object moves at once
        scene[f"object_{i}"].T = trans(10.0 + 3 * i, 1.0)
    assert scene.collisions() == [("flat", "probe")]


def test_unknown_names_raise_a_key_error_listing_the_valid_names() -> None:
    scene = scene_of(a=ball(0.0), b=ball(3.0))
    with pytest.raises(KeyError) as info:
        scene["nope"]
    assert isinstance(info.value, NotInSceneError)
    assert str(info.value) == "name 'nope' is not in this scene; valid names: 'a', 'b'"
    for call in (scene.remove, scene.index_of):
        with pytest.raises(NotInSceneError, match="name 'nope' is not in this scene; valid"):
            call("nope")
    with pytest.raises(NotInSceneError, match="a 'nope' is not in this scene"):
        scene.allow("nope", "a")
    with pytest.raises(NotInSceneError, match="b 'nope' is not in this scene"):
        scene.disallow("a", "nope")
    # A name that is no string is a type mistake, as add() has it.
    with pytest.raises(
        ShapeTypeError, match=r"^b must be an object's name or a shape of the scene, got 7$"
    ):
        scene.is_allowed("a", 7)  # type: ignore[arg-type]
    calls: list[Any] = [scene.remove, scene.__getitem__, scene.index_of, scene.world_of]
    for call in calls:
        with pytest.raises(ShapeTypeError, match=r"^name must be an object's name, got 3$"):
            call(3)
    assert isinstance(info.value, ValueError)  # every error is a ValueError or a TypeError
    with pytest.raises(SceneError, match="a and b are both 'a'"):
        scene.allow("a", "a")
    with pytest.raises(NotInSceneError, match="name 'x' is not in this scene; the scene is empty"):
        Scene()["x"]


def test_a_long_list_of_valid_names_is_cut_short() -> None:
    scene = Scene()
    for i in range(25):
        scene.add(ball(3.0 * i), f"n{i}")
    with pytest.raises(NotInSceneError, match=r"'n18', 'n19', \.\.\. \(5 more\)$"):
        scene["nope"]


def test_name_of_and_the_queries_refuse_foreign_or_unusable_shapes() -> None:
    scene = scene_of(a=ball(0.0))
    with pytest.raises(NotInSceneError, match=r"shape Sphere\(radius=0.5.* is not in this scene"):
        scene.name_of(ball(0.0))
    with pytest.raises(ShapeTypeError, match="shape must be a CollisionShape, got str: 'a'"):
        scene.name_of("a")  # type: ignore[arg-type]
    with pytest.raises(ShapeTypeError, match="shape must be a CollisionShape or Collision"):
        scene.collide(5)  # type: ignore[arg-type]
    with pytest.raises(CollisionDisabledError, match="has collision=False and cannot take"):
        scene.distance(Sphere(1.0, collision=False))


def test_a_nested_group_with_collision_off_is_skipped_as_the_group_queries_skip_it() -> None:
    # The inner ball overlaps the probe by 0.1 m, but sits in a group made with collision=False.
    hidden = ball(0.0)
    outer = CollisionShapeGroup([CollisionShapeGroup([hidden], collision=False), ball(5.0)])
    probe = ball(0.9)
    scene = scene_of(outer=outer, probe=probe)
    assert not outer.iscollided(probe)
    assert scene.collisions() == [] and not scene.in_collision()
    assert scene.collide(probe) == [] and len(scene.contacts()) == 0
    assert scene.distance(probe)[:2] == (pytest.approx(3.1), "outer")
    assert scene.name_of(hidden) == "outer"
    outer.T = trans(0.1)  # still skipped after a move
    assert scene.collisions() == []
    outer.append(ball(0.9, y=0.3))  # a leaf that counts, next to the probe
    assert (
        scene.collisions()
        == [("outer", "probe")]
        == [(a, b) for a, b in [("outer", "probe")] if outer.iscollided(probe)]
    )


def test_leaves_with_collision_off_inside_a_group_are_ignored() -> None:
    g = CollisionShapeGroup([Sphere(0.5, collision=False), Capsule(0.1, 0.5, pose=trans(3.0))])
    scene = scene_of(g=g, target=ball(0.4))
    assert not scene.in_collision()  # only the ghost sphere is near the target
    assert scene.name_of(g[0]) == "g"
    assert scene.distance(ball(-2.0))[1] == "target"


def test_a_pair_touching_every_other_query_is_answered_each_time() -> None:
    # One object moved per query (the per-call path): a pair left without contacts is kept,
    # empty, for one query, and forgotten when it is still apart at the next.
    a, b, c = ball(0.0), ball(5.0), ball(-5.0)
    scene = scene_of(a=a, b=b, c=c)
    touching, apart = trans(0.9), trans(2.0)
    for k in range(6):
        b.T = touching if k % 2 == 0 else apart
        assert scene.in_collision() is (k % 2 == 0)
        assert scene.collisions() == ([("a", "b")] if k % 2 == 0 else [])
        assert len(scene.contacts()) == (1 if k % 2 == 0 else 0)
        assert scene.collide(a) == (["b"] if k % 2 == 0 else [])
    assert len(scene._pairs) == 1  # kept empty after the last query, apart
    b.T = trans(2.5)
    assert not scene.in_collision()
    assert scene._pairs == {}  # apart twice in a row: forgotten
    b.T = touching
    scene.allow("a", "b")
    assert not scene.in_collision() and scene.collisions() == []
    b.T = apart
    scene.disallow("a", "b")
    assert not scene.in_collision()
    c.T = trans(-0.9)  # another object moves: the empty pair of a and b stays apart
    assert scene.collisions() == [("a", "c")]
    scene.remove("b")
    assert scene.collisions() == [("a", "c")]
    assert all(p.a.name != "b" and p.b.name != "b" for p in scene._pairs.values())


def test_contacts_leave_out_pairs_coal_has_no_contacts_for() -> None:
    # A floor and a wall (two half-spaces) cross: collisions() lists them, but Coal has no
    # contacts between two half-spaces, and scene.contacts() raised for the whole scene.
    scene = Scene()
    scene.add(HalfSpace([0.0, 0.0, 1.0], 0.0), "floor")
    scene.add(HalfSpace([1.0, 0.0, 0.0], 0.0), "wall")
    scene.add(Sphere(0.5), "ball")
    assert scene.collisions() == [("floor", "wall"), ("floor", "ball"), ("wall", "ball")]
    found = scene.contacts()
    assert [(scene.name_of(c.o1), scene.name_of(c.o2)) for c in found] == [
        ("floor", "ball"),
        ("wall", "ball"),
    ]
    assert [c.penetration_depth for c in found] == pytest.approx([-0.5, -0.5], abs=1e-12)
    with pytest.raises(UnsupportedPairError, match="HalfSpace and a HalfSpace"):
        scene["floor"].contacts(scene["wall"])
