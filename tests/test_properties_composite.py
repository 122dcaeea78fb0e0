"""Worlds, batches and robots against brute force over their leaves (hypothesis).

- A scene with worlds: every query (``collisions``, ``contacts``, ``collide``, ``distance``,
  the per-world ones) equals a loop over every pair of objects under the world rules: never a
  pair of two worlds, a global object paired with every world and with the other global ones.
  Objects are leaves of every type and nested groups of them, replicated into worlds that
  overlap in space, then moved about.
- Batches: ``spatialcontact.batch`` on random nested groups of every leaf type (octrees
  included) and on scenes with worlds equals the single queries asked pose by pose.
- The shipped Panda: ``self_collision``, ``colliding_pairs``, ``in_collision``, ``distance``
  and ``check`` equal a loop over its link shapes, with the pairs to check worked out here
  from the URDF's fixed joints and the SRDF's ``disable_collisions``.

Groups against groups and scenes without worlds are checked the same way in
``test_group_properties.py`` and ``test_scene_properties.py``.
"""

from __future__ import annotations

import itertools
import math
import xml.etree.ElementTree as ET
from typing import Any, cast

import numpy as np
import pytest
from conftest import make_leaf, rigid_poses
from hypothesis import given, settings
from hypothesis import strategies as st
from test_batch import check_queries, random_poses
from test_properties_pairs import TOUCHING, examples

from spatialcontact import (
    CollisionShape,
    CollisionShapeGroup,
    Cuboid,
    HalfSpace,
    Scene,
    Sphere,
    UnsupportedPairError,
    batch,
    meshes,
)
from spatialcontact._base import collision_leaves as _collision_leaves
from spatialcontact.robot import RobotModel

WITH_ELLIPSOID = ("Sphere", "Cuboid", "Cylinder", "Capsule", "Cone", "Ellipsoid", "Mesh",
                  "ConvexHull")  # fmt: skip
WITH_OCTREE = ("Sphere", "Cuboid", "Cylinder", "Capsule", "Cone", "Mesh", "ConvexHull", "OcTree")
"""Coal has no octree/ellipsoid query: a scene or group draws its leaves from one list."""
KIND_SETS = pytest.mark.parametrize(
    "kinds", [WITH_ELLIPSOID, WITH_OCTREE], ids=["with-ellipsoid", "with-octree"]
)


def collision_leaves(shape: CollisionShape) -> tuple[CollisionShape, ...]:
    """The leaves of ``shape`` that take part in queries."""
    return cast("tuple[CollisionShape, ...]", _collision_leaves(shape))


@st.composite
def objects(draw: Any, kinds: tuple[str, ...], reach: float = 0.8) -> CollisionShape:
    """A leaf, or a group of one to three leaves (one of them maybe in a nested group)."""
    if draw(st.booleans()):
        return make_leaf(draw(st.sampled_from(kinds)), draw(rigid_poses(reach=reach)))
    leaves = [
        make_leaf(draw(st.sampled_from(kinds)), draw(rigid_poses(reach=0.4)))
        for _ in range(draw(st.integers(1, 3)))
    ]
    if len(leaves) > 1 and draw(st.booleans()):
        leaves[-1] = CollisionShapeGroup([leaves[-1]], pose=draw(rigid_poses(reach=0.3)))
    return CollisionShapeGroup(leaves, pose=draw(rigid_poses(reach=reach)))


def partners(scene: Scene, a: str, b: str) -> bool:
    """The world rule: two objects are paired unless they belong to two different worlds."""
    wa, wb = scene.world_of(a), scene.world_of(b)
    return wa < 0 or wb < 0 or wa == wb


def brute_collisions(scene: Scene) -> list[tuple[str, str]]:
    """Every pair of partner objects with a pair of leaves that collide, in scene order."""
    return [
        (a, b)
        for a, b in itertools.combinations(scene.names, 2)
        if partners(scene, a, b)
        and any(
            la.iscollided(lb)
            for la in collision_leaves(scene[a])
            for lb in collision_leaves(scene[b])
        )
    ]


def in_world(scene: Scene, name: str, world: int) -> bool:
    """Is ``name`` one of the objects a query with ``world=world`` looks at?"""
    w = scene.world_of(name)
    return w == world or (w < 0 and world >= 0) or (world < 0 and w < 0)


def contact_key(scene: Scene, c: Any) -> tuple[Any, ...]:
    return (id(c.o1), id(c.o2), c.b1, c.b2, round(c.penetration_depth, 9))


def check_worlds(scene: Scene, probe: CollisionShape) -> None:
    expected = brute_collisions(scene)
    assert scene.collisions() == expected
    assert scene.in_collision() == bool(expected)
    per_world = scene.collisions_per_world()
    for w in range(-1, scene.worlds):
        # world w: its objects' pairs, with each other and with the global ones (w = -1: the
        # pairs of two global objects)
        mine = [(a, b) for a, b in expected if max(scene.world_of(a), scene.world_of(b)) == w]
        assert scene.collisions(world=w) == mine
        assert scene.in_collision(world=w) == bool(mine)
        if w >= 0:
            assert per_world[w] == mine
            assert scene.in_collision_per_world()[w] == bool(mine)
        # an outside shape, against world w and the global objects
        names = [n for n in scene.names if in_world(scene, n, w)]
        touched = [
            n for n in names if any(probe.iscollided(leaf) for leaf in collision_leaves(scene[n]))
        ]
        assert scene.collide(probe, world=w) == touched
        ranked = sorted(
            (probe.distance(leaf), scene.index_of(n))
            for n in names
            for leaf in collision_leaves(scene[n])
        )
        d, name, _, _ = scene.distance(probe, world=w)
        if not ranked:
            assert (d, name) == (math.inf, None)
        else:
            assert d == ranked[0][0]
            if len(ranked) == 1 or ranked[1][0] > ranked[0][0]:
                assert name == scene.names[ranked[0][1]]
    # An object of a world touches its own world's objects and the global ones only.
    for a in scene.names:
        want = [b for b in scene.names if b != a and ((a, b) in expected or (b, a) in expected)]
        assert scene.collide(scene[a]) == want
    touching = [
        (la, lb, max(scene.world_of(a), scene.world_of(b)))
        for a, b in expected
        for la in collision_leaves(scene[a])
        for lb in collision_leaves(scene[b])
        if la.iscollided(lb)
    ]
    if any(la.stype == lb.stype == "octree" for la, lb, _ in touching):
        with pytest.raises(UnsupportedPairError, match="OcTree and an OcTree"):
            scene.contacts()  # two octrees touching: Coal has no contacts for them
        return
    found = scene.contacts(max_contacts_per_pair=2)
    loop = [(c, w) for la, lb, w in touching for c in la.contacts(lb, max_contacts=2)]
    assert sorted(contact_key(scene, c) for c in found) == sorted(
        contact_key(scene, c) for c, _ in loop
    )
    worlds = {contact_key(scene, c): w for c, w in loop}
    assert [worlds[contact_key(scene, c)] for c in found] == found.world.tolist()


@KIND_SETS
@given(data=st.data())
@settings(max_examples=examples(15))
def test_worlds_equal_brute_force(kinds: tuple[str, ...], data: Any) -> None:
    scene = Scene()
    scene.add(HalfSpace([0.0, 0.0, 1.0], -0.9), "floor")  # global, under everything
    for i in range(data.draw(st.integers(0, 2), label="globals")):
        scene.add(data.draw(objects(kinds)), f"g{i}")
    scene.add_world()
    for i in range(data.draw(st.integers(1, 3), label="world 0")):
        scene.add(data.draw(objects(kinds)), f"o{i}", world=0)
    scene.replicate(data.draw(st.integers(1, 2), label="copies"))  # in the same place
    probe_kind = data.draw(st.sampled_from(kinds), label="probe")
    probe = make_leaf(probe_kind, data.draw(rigid_poses(reach=1.0)))
    check_worlds(scene, probe)
    names = scene.names
    for index, T in data.draw(
        st.lists(st.tuples(st.integers(0, 100), rigid_poses(reach=0.8)), max_size=4),
        label="moves",
    ):
        name = names[index % len(names)]
        if name != "floor":
            scene[name].T = T
    check_worlds(scene, probe)


# ------------------------------------------------------------------------------- batches


BOTH = ("Sphere", "Cuboid", "Cylinder", "Capsule", "Cone", "Mesh", "ConvexHull")
"""The leaf types that pair with every other one."""


@KIND_SETS
@given(data=st.data(), seed=st.integers(0, 999))
@settings(max_examples=examples(10))
def test_batches_of_groups_equal_the_single_queries(
    kinds: tuple[str, ...], data: Any, seed: int
) -> None:
    a, b = data.draw(objects(kinds), label="a"), data.draw(objects(BOTH), label="b")
    check_queries(a, b, random_poses(6, 0.9, seed))
    check_queries(b, a, random_poses(6, 0.9, seed + 1))


@given(data=st.data())
@settings(max_examples=examples(10))
def test_batches_against_a_scene_with_worlds(data: Any) -> None:
    scene = Scene()
    scene.add(data.draw(objects(WITH_OCTREE)), "global")
    scene.add_world()
    scene.add(data.draw(objects(WITH_OCTREE)), "a", world=0)
    scene.add(data.draw(objects(WITH_OCTREE)), "b", world=0)
    scene.replicate(1)
    b = data.draw(objects(("Sphere", "Cuboid", "Capsule", "Mesh")))
    P = random_poses(8, 0.9, data.draw(st.integers(0, 999)))
    hits = batch.iscollided(scene, b, P)
    distances = batch.distance(scene, b, P)
    assert hits.shape == (len(P), len(scene.names))
    saved = b.T
    for i, T in enumerate(P):
        b.T = T
        touched = scene.collide(b)
        d = scene.distance(b)[0]
        assert distances[i] == pytest.approx(d, abs=1e-9 if d > 0 else 1e-6)
        for j, name in enumerate(scene.names):
            gap = min(leaf.distance(b) for leaf in collision_leaves(scene[name]))
            if abs(gap) > TOUCHING:
                assert hits[i, j] == (name in touched), (i, name, gap)
    b.T = saved


# -------------------------------------------------------------------------------- robots


PANDA = meshes.path("panda")
_robot = RobotModel.from_urdf(PANDA / "panda.urdf", srdf=PANDA / "panda.srdf")
_robot.allow("panda_link0", "table")  # the base stands in the table of robot_scene


def pairs_from_the_files() -> set[frozenset[str]]:
    """The link pairs to check: links with collision geometry on different rigid bodies (not
    joined by fixed joints), minus the SRDF's ``disable_collisions``; read from the files."""
    urdf = ET.parse(PANDA / "panda.urdf").getroot()
    body = {link.attrib["name"]: link.attrib["name"] for link in urdf.iter("link")}

    def root(name: str) -> str:
        while body[name] != name:
            name = body[name]
        return name

    for joint in urdf.iter("joint"):
        if joint.get("type") == "fixed":
            parent, child = (joint.findall(tag)[0].attrib["link"] for tag in ("parent", "child"))
            body[root(child)] = root(parent)
    solid = [
        link.attrib["name"] for link in urdf.iter("link") if link.find("collision") is not None
    ]
    srdf = ET.parse(PANDA / "panda.srdf").getroot()
    disabled = {
        frozenset((d.attrib["link1"], d.attrib["link2"])) for d in srdf.iter("disable_collisions")
    }
    pairs = {frozenset((a, b)) for a, b in itertools.combinations(solid, 2) if root(a) != root(b)}
    return pairs - disabled


def test_the_checked_pairs_are_those_of_the_urdf_and_srdf() -> None:
    pairs = pairs_from_the_files()
    assert len(pairs) == 20  # 13 links, 11 with geometry, 35 pairs disabled by the SRDF
    assert {frozenset(p) for p in _robot.collision_pairs} == pairs


def link_hits(robot: RobotModel, a: str, b: CollisionShape | str) -> bool:
    others = robot.shapes_of(b) if isinstance(b, str) else collision_leaves(b)
    return any(sa.iscollided(sb) for sa in robot.shapes_of(a) for sb in others)


def link_distance(robot: RobotModel, a: str, b: CollisionShape | str) -> float:
    others = robot.shapes_of(b) if isinstance(b, str) else collision_leaves(b)
    return min(sa.distance(sb) for sa in robot.shapes_of(a) for sb in others)


def robot_scene(rng: np.random.Generator, count: int) -> Scene:
    """Boxes, spheres and a mesh in the Panda's reach, one of them allowed to touch the base."""
    scene = Scene()
    for i in range(count):
        T = np.eye(4)
        T[:3, 3] = rng.uniform([-0.7, -0.7, 0.0], [0.7, 0.7, 1.0])
        if i % 3 == 0:
            scene.add(Cuboid(rng.uniform(0.05, 0.3, 3), pose=T), f"box{i}")
        elif i % 3 == 1:
            scene.add(Sphere(float(rng.uniform(0.03, 0.15)), pose=T), f"ball{i}")
        else:
            scene.add(make_leaf("Mesh", T), f"mesh{i}")
    scene.add(Cuboid([1.0, 1.0, 0.1], pose=np.diag([1.0, 1.0, 1.0, 1.0])), "table")
    return scene


@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 5))
@settings(max_examples=examples(25))
def test_the_panda_equals_a_loop_over_its_links(seed: int, count: int) -> None:
    robot = _robot
    rng = np.random.default_rng(seed)
    scene = robot_scene(rng, count)
    q = robot.sample(1, rng=rng)[0]
    robot.set_q(q)
    pairs = sorted(tuple(sorted(p)) for p in pairs_from_the_files())
    self_hits = [(a, b) for a, b in pairs if link_hits(robot, a, b)]
    scene_hits = [
        (link, name)
        for link in robot.link_names
        for name in scene.names
        if robot.shapes_of(link)
        and (link, name) not in robot.allowed_scene_pairs
        and link_hits(robot, link, scene[name])
    ]
    assert robot.self_collision(q) == bool(self_hits)
    assert robot.in_collision(q, scene) == bool(self_hits or scene_hits)
    assert robot.check(q[None], scene).tolist() == [bool(self_hits or scene_hits)]
    found = robot.colliding_pairs(q, scene)
    assert len(found) == len(set(found))
    assert {tuple(sorted(p)) if p[1] in robot.link_names else p for p in found} == set(
        self_hits
    ) | set(scene_hits)
    # without a scene: the nearest checked link pair
    d, part, other, _, _ = robot.distance(q)
    ranked = sorted((link_distance(robot, a, b), a, b) for a, b in pairs)
    assert d == pytest.approx(ranked[0][0], abs=1e-9)
    if ranked[1][0] > ranked[0][0] + 1e-9:
        assert {part, other} == set(ranked[0][1:])
    # with a scene: the nearest object to any link, allowed pairs left out
    d, part, other, p_part, p_other = robot.distance(q, scene)
    ranked = scene_ranking(robot, scene)
    assert p_part is not None and p_other is not None
    assert np.linalg.norm(p_other - p_part) == pytest.approx(abs(d), abs=1e-9)
    assert d >= ranked[0][0] - 1e-9  # the distance of one of the pairs
    assert d == pytest.approx(ranked[0][0], abs=1e-9)
    if ranked[1][0] > ranked[0][0] + 1e-9:
        assert (part, other) == ranked[0][1:]


def scene_ranking(robot: RobotModel, scene: Scene) -> list[tuple[float, str, str]]:
    """``(distance, link, object)`` of every link and object not allowed to touch, nearest
    (or deepest) first."""
    return sorted(
        (link_distance(robot, link, scene[name]), link, name)
        for link in robot.link_names
        for name in scene.names
        if robot.shapes_of(link) and (link, name) not in robot.allowed_scene_pairs
    )


def test_the_panda_scene_distance_is_the_deepest_overlap() -> None:
    # The Panda at its ready pose; a box over the hand. The left finger's cuboids overlap it by
    # up to 31 mm; a search stopping at the first overlap found (17 mm) was wrong.
    robot = _robot
    q = robot.states["default"]
    robot.set_q(q)
    scene = Scene()
    T = np.eye(4)
    T[:3, 3] = (0.413, -0.067, 0.381)
    scene.add(Cuboid([0.461, 0.363, 0.255], pose=T), "box")
    ranked = scene_ranking(robot, scene)
    assert ranked[0][:2] == (pytest.approx(-0.03113, abs=1e-5), "panda_leftfinger")
    assert robot.distance(q, scene).distance == pytest.approx(ranked[0][0], abs=1e-9)


@given(seed=st.integers(0, 2**32 - 1))
@settings(max_examples=examples(25))
def test_the_panda_scene_distance_on_overlap_equals_the_loop(seed: int) -> None:
    robot = _robot
    rng = np.random.default_rng(seed)
    scene = Scene()
    T = np.eye(4)
    T[:3, 3] = rng.uniform([0.0, -0.3, 0.3], [0.6, 0.3, 0.9])
    scene.add(Cuboid(rng.uniform(0.1, 0.6, 3), pose=T), "box")
    q = robot.states["default"]
    robot.set_q(q)
    assert robot.distance(q, scene).distance == pytest.approx(
        scene_ranking(robot, scene)[0][0], abs=1e-9
    )


@given(seed=st.integers(0, 2**32 - 1))
@settings(max_examples=examples(5))
def test_the_panda_check_equals_the_loop_row_by_row(seed: int) -> None:
    robot = _robot
    rng = np.random.default_rng(seed)
    scene = robot_scene(rng, 3)
    Q = robot.sample(12, rng=rng)
    expected = []
    for q in Q:
        robot.set_q(q)
        hit = any(link_hits(robot, *sorted(p)) for p in pairs_from_the_files()) or any(
            robot.shapes_of(link)
            and (link, name) not in robot.allowed_scene_pairs
            and link_hits(robot, link, scene[name])
            for link in robot.link_names
            for name in scene.names
        )
        expected.append(hit)
    assert robot.check(Q, scene).tolist() == expected
