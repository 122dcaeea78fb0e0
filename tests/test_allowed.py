"""Allowed pairs: the AllowedCollisions set, and a scene's pairs of objects, groups and leaves.

A robot added with ``self_collision=True`` checks its links against each other; its SRDF lists
the pairs that may touch (adjacent links, mostly): those are allowed leaf by leaf, while a
group allowed against an object covers every leaf of the group.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import rot, trans

from spatialcontact import (
    Capsule,
    CollisionShapeGroup,
    Cuboid,
    NotInSceneError,
    Scene,
    SceneError,
    ShapeTypeError,
    Sphere,
)
from spatialcontact.allowed import AllowedCollisions


def ball(x: float, radius: float = 0.5, y: float = 0.0) -> Sphere:
    return Sphere(radius, pose=trans(x, y))


def arm_of(links: int) -> CollisionShapeGroup:
    """Capsules along z, 0.3 m apart, each 0.4 m long: each overlaps the next by 0.1 m."""
    return CollisionShapeGroup(
        [Capsule(0.05, 0.3, pose=trans(0.0, 0.0, 0.3 * i)) for i in range(links)]
    )


# ------------------------------------------------------------------- AllowedCollisions


def test_an_entry_covers_the_leaves_below_its_shapes_in_either_order() -> None:
    inner = CollisionShapeGroup([ball(0.0), ball(1.0)])
    arm = CollisionShapeGroup([inner, ball(2.0)])
    table, lamp = ball(5.0), ball(9.0)
    allowed = AllowedCollisions()
    assert not allowed.covers(inner[0], table)
    allowed.allow(table, inner)
    assert allowed.covers(inner[0], table) and allowed.covers(table, inner[1])
    assert allowed.covers(inner, table)
    assert not allowed.covers(arm[1], table)  # beside the allowed group, not below it
    assert not allowed.covers(arm, table)  # arm[1] is not allowed
    assert not allowed.covers(inner[0], lamp)
    allowed.allow(arm[1], inner[0])  # two leaves of one object
    assert allowed.covers(inner[0], arm[1]) and not allowed.covers(inner[1], arm[1])


def test_covering_follows_the_groups_a_shape_is_in_now() -> None:
    group = CollisionShapeGroup([ball(0.0)])
    leaf, other = ball(1.0), ball(5.0)
    allowed = AllowedCollisions()
    allowed.allow(group, other)
    assert not allowed.covers(leaf, other)
    group.append(leaf)
    assert allowed.covers(leaf, other)
    group.remove(leaf)
    assert not allowed.covers(leaf, other)


def test_disallow_takes_out_one_entry_and_allow_twice_is_one_entry() -> None:
    group = CollisionShapeGroup([ball(0.0), ball(1.0)])
    other = ball(5.0)
    allowed = AllowedCollisions()
    allowed.allow(group, other)
    allowed.allow(other, group)
    allowed.allow(group[0], other)
    assert len(allowed) == 2 and allowed.pairs == [(group, other), (group[0], other)]
    assert (other, group) in allowed and (group[1], other) not in allowed
    assert (group, 5) not in allowed and "pair" not in allowed
    allowed.disallow(group, other)
    assert allowed.covers(group[0], other) and not allowed.covers(group[1], other)
    allowed.disallow(group, other)  # not there: nothing
    assert list(allowed) == [(group[0], other)]
    assert repr(allowed) == "AllowedCollisions(1 pairs)"


def test_revision_counts_changes_only() -> None:
    a, b, c = ball(0.0), ball(1.0), ball(2.0)
    allowed = AllowedCollisions()
    allowed.allow(a, b)
    first = allowed._revision
    allowed.allow(b, a)
    allowed.disallow(a, c)
    assert allowed._revision == first
    allowed.disallow(b, a)
    assert allowed._revision > first


def test_discard_and_clear() -> None:
    a, b, c = ball(0.0), ball(1.0), ball(2.0)
    allowed = AllowedCollisions()
    allowed.allow(a, b)
    allowed.allow(b, c)
    allowed.allow(a, c)
    allowed.discard(lambda shape: shape is a)
    assert allowed.pairs == [(b, c)]
    assert not allowed.covers(c, a)
    allowed.clear()
    assert len(allowed) == 0 and not allowed.covers(b, c)


def test_allowed_collisions_refuse_non_shapes_and_a_shape_with_itself() -> None:
    allowed = AllowedCollisions()
    leaf = ball(0.0)
    with pytest.raises(ShapeTypeError, match=r"b must be a CollisionShape or Collision.*got str"):
        allowed.allow(leaf, "table")  # type: ignore[arg-type]
    with pytest.raises(ShapeTypeError, match="a must be a CollisionShape"):
        allowed.disallow(None, leaf)  # type: ignore[arg-type]
    with pytest.raises(SceneError, match="a and b are the same shape"):
        allowed.allow(leaf, leaf)


# ------------------------------------------------------------------ in a scene: leaves


def test_adjacent_links_allowed_leaf_by_leaf_in_a_self_colliding_arm() -> None:
    # Five links: each overlaps the next (link 0 also the table under it).
    arm = arm_of(5)
    scene = Scene()
    scene.add(arm, "arm", self_collision=True)
    scene.add(Cuboid([1.0, 1.0, 0.1], pose=trans(0, 0, -0.2)), "table")  # under link 0
    assert scene.collisions() == [("arm", "arm"), ("arm", "table")]
    for i in range(4):
        scene.allow(arm[i], arm[i + 1])  # as an SRDF's disable_collisions "Adjacent"
    assert scene.collisions() == [("arm", "table")]
    assert scene.is_allowed(arm[2], arm[1]) and not scene.is_allowed(arm[0], arm[2])
    # Link 4 bent back across link 1 (which it is not adjacent to), level with its middle.
    arm[4].T = trans(0.08, 0.0, 0.3) @ rot("y", math.pi / 2)
    assert scene.collisions() == [("arm", "arm"), ("arm", "table")]
    found = scene.contacts()
    assert [(c.o1, c.o2) for c in found] == [(arm[1], arm[4]), (arm[0], scene["table"])]
    # The allowed pairs still overlap, but give no contacts.
    assert all({c.o1, c.o2} != {arm[0], arm[1]} for c in found)


def test_a_group_inside_an_object_allowed_against_another_covers_all_its_leaves() -> None:
    hand = CollisionShapeGroup([ball(0.0, 0.2), ball(0.3, 0.2)], pose=trans(0, 0, 1.0))
    arm = CollisionShapeGroup([Capsule(0.05, 0.5, pose=trans(0, 0, 0.5)), hand])
    cup = Sphere(0.3, pose=trans(0.15, 0.0, 1.2))  # touches both fingers, not the capsule
    scene = Scene()
    scene.add(arm, "arm")
    scene.add(cup, "cup")
    assert scene.collisions() == [("arm", "cup")]
    scene.allow(hand, "cup")  # a shape and a name
    assert scene.collisions() == [] and not scene.in_collision()
    assert scene.is_allowed(hand[1], cup) and not scene.is_allowed("arm", "cup")
    assert scene.collide(cup) == [] and scene.collide(arm) == []
    arm[0].T = trans(0.1, 0.0, 0.8)  # the capsule now reaches into the cup too
    assert scene.collisions() == [("arm", "cup")]
    assert [(c.o1, c.o2) for c in scene.contacts()] == [(arm[0], cup)]
    scene.disallow(hand, cup)
    assert len(scene.contacts()) == 3


def test_one_leaf_allowed_against_an_object() -> None:
    g = CollisionShapeGroup([ball(0.0), ball(3.0)])
    scene = Scene()
    scene.add(g, "g")
    scene.add(ball(0.9), "near_first")
    scene.add(ball(3.9), "near_second")
    scene.allow(g[0], "near_first")
    assert scene.collisions() == [("g", "near_second")]
    assert scene.collide(g) == ["near_second"]
    assert scene.collide(g[0]) == [] and scene.collide(g[1]) == ["near_second"]
    assert scene.collide(scene["near_first"]) == []
    assert scene.allowed_pairs == [(g[0], "near_first")]


def test_distance_skips_allowed_pairs_of_leaves() -> None:
    # g's leaves at 0 and 3 (radius 0.5); probe object at 1.5 (radius 0.5): 0.5 from both.
    g = CollisionShapeGroup([ball(0.0), ball(3.0)])
    probe = ball(1.4)
    scene = Scene()
    scene.add(g, "g")
    scene.add(probe, "probe")
    scene.add(ball(-3.0), "far")  # 4.4 from the probe: gap 3.4
    d, name, _, p2 = scene.distance(probe)
    assert (name, d) == ("g", pytest.approx(0.4))  # to g[0] at 0
    assert p2 is not None and p2[0] == pytest.approx(0.5)
    scene.allow(g[0], probe)
    d, name, _, p2 = scene.distance(probe)
    assert (name, d) == ("g", pytest.approx(0.6))  # to g[1] at 3
    assert p2 is not None and p2[0] == pytest.approx(2.5)
    scene.allow(g[1], probe)
    assert scene.distance(probe)[:2] == (pytest.approx(3.4), "far")
    scene.allow("far", "probe")
    assert scene.distance(probe)[:2] == (math.inf, None)


def test_changes_made_through_scene_allowed_are_seen_by_the_next_query() -> None:
    a, b = ball(0.0), ball(0.9)
    scene = Scene()
    scene.add(a, "a")
    scene.add(b, "b")
    assert scene.in_collision()
    scene.allowed.allow(a, b)
    assert not scene.in_collision() and scene.contacts() == scene.contacts()
    assert len(scene.contacts()) == 0
    scene.allowed.clear()
    assert scene.collisions() == [("a", "b")]


def test_allowed_pairs_name_objects_and_give_parts_as_shapes_in_the_order_added() -> None:
    g = CollisionShapeGroup([ball(0.0), ball(3.0)])
    scene = Scene()
    scene.add(ball(9.0), "first")
    scene.add(g, "g")
    scene.add(ball(6.0), "last")
    scene.allow("last", g[1])
    scene.allow("g", "first")
    scene.allow(g[1], g[0])
    scene.allow("last", "first")
    assert scene.allowed_pairs == [
        ("first", "g"),
        ("first", "last"),
        (g[0], g[1]),
        (g[1], "last"),
    ]


def test_removing_an_object_forgets_the_pairs_of_its_parts() -> None:
    g = CollisionShapeGroup([ball(0.0), ball(3.0)])
    other = ball(0.9)
    scene = Scene()
    scene.add(g, "g")
    scene.add(other, "other")
    scene.allow(g[0], other)
    scene.allow(g[0], g[1])
    scene.remove("g")
    assert scene.allowed_pairs == [] and len(scene.allowed) == 0
    scene.add(g, "g")
    assert scene.collisions() == [("other", "g")]


def test_allow_refuses_shapes_outside_the_scene_and_a_shape_with_itself() -> None:
    g = CollisionShapeGroup([ball(0.0), ball(3.0)])
    scene = Scene()
    scene.add(g, "g")
    scene.add(ball(9.0), "b")
    with pytest.raises(NotInSceneError, match=r"b Sphere\(radius=0.5.* is not in this scene"):
        scene.allow(g[0], ball(0.0))
    with pytest.raises(ShapeTypeError, match=r"^a must be an object's name or a shape of the"):
        scene.is_allowed(5, "b")  # type: ignore[arg-type]
    with pytest.raises(SceneError, match="a and b are both 'g'"):
        scene.allow("g", g)
    with pytest.raises(SceneError, match=r"a and b are both Sphere\(radius=0.5"):
        scene.disallow(g[1], g[1])
    assert scene.allowed_pairs == []


def test_a_part_queried_from_the_scene_leaves_its_object_and_its_allowed_pairs_out() -> None:
    arm = CollisionShapeGroup([ball(0.0), ball(0.9), ball(1.8)])
    post, base = ball(2.7), ball(-0.9)
    scene = Scene()
    scene.add(arm, "arm", self_collision=True)
    scene.add(post, "post")
    scene.add(base, "base")
    scene.allow(arm[2], post)
    assert scene.collide(arm[2]) == []
    assert scene.collide(arm) == ["base"]
    assert scene.collide(post) == []
    moved = np.eye(4)
    moved[:3, 3] = (2.7, 0.0, 0.9)  # post now touches arm[2] only from above: still allowed
    post.T = moved
    assert scene.collide(post) == [] and scene.collisions() == [("arm", "arm"), ("arm", "base")]
