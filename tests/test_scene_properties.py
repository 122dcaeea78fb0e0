"""Scene queries against brute force over every pair of leaves, on random scenes (hypothesis).

The brute force calls the shape queries (``iscollided``, ``contacts``, ``closest_point``) on
every pair of collision leaves (``collision_leaves``) of every pair of objects, skipping the
pairs of leaves the scene's allowed set covers and, unless the object asks for it, the pairs
inside one object. Scenes change between queries: objects and leaves move, spheres grow,
groups gain and lose leaves, objects come and go, pairs of objects, of groups inside them and
of single leaves are allowed and disallowed. Groups hold nested groups made with
``collision=False`` (skipped, with all they hold).

Each scene test runs on every way the broadphase has of answering (``PATHS``): its own
settings, and settings small enough that random scenes of a few objects put bodies at rest in
Coal's tree, park and settle them, ask the whole tree for its pairs and rebuild it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import numpy as np
import pytest
from conftest import make_leaf, rigid_poses
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialcontact import (
    Capsule,
    CollisionShape,
    CollisionShapeGroup,
    Contact,
    Cuboid,
    Scene,
    Sphere,
    UnsupportedPairError,
)
from spatialcontact._base import collision_leaves, leaves_of
from spatialcontact.scene import broadphase

# Coal has no octree-ellipsoid query: a scene draws its leaves from one of two lists.
WITH_ELLIPSOID = ("Sphere", "Cuboid", "Cylinder", "Capsule", "Cone", "Ellipsoid", "HalfSpace",
                  "Mesh", "ConvexHull")  # fmt: skip
WITH_OCTREE = ("Sphere", "Cuboid", "Capsule", "HalfSpace", "Mesh", "ConvexHull", "OcTree")
KIND_SETS = pytest.mark.parametrize(
    "kinds", [WITH_ELLIPSOID, WITH_OCTREE], ids=["with-ellipsoid", "with-octree"]
)
PATHS: dict[str, dict[str, Any]] = {
    "direct": {"SMALL": broadphase.SMALL},  # its own settings: small scenes compare leaves
    "trees": {"SMALL": 0, "TIER_LIMIT": 1, "SETTLE_SHARE": 1000, "LEFTOVERS": 0},
    "batches": {"SMALL": 0, "TIER_LIMIT": 3, "SETTLE_SHARE": 1, "LEFTOVERS": 2},
}
"""Broadphase settings: "trees" puts every body that stopped back to rest at once and asks the
whole tree when two move together; "batches" keeps stopped bodies moving a while."""
ON_EVERY_PATH = pytest.mark.parametrize("path", list(PATHS))


@contextmanager
def broadphase_path(path: str) -> Iterator[None]:
    with mock.patch.multiple(broadphase, **PATHS[path]):
        yield


def leaves(shape: CollisionShape) -> list[CollisionShape]:
    return list(collision_leaves(shape))  # type: ignore[arg-type]


def checked(scene: Scene, p: CollisionShape, q: CollisionShape) -> bool:
    """True when the leaf pair (p, q) counts: it touches and is not allowed."""
    return not scene.allowed.covers(p, q) and p.iscollided(q)


def touching(a: CollisionShape, b: CollisionShape, scene: Scene | None = None) -> bool:
    """Whether a pair of leaves of a and b touches (not allowed in ``scene``, when given)."""
    if scene is None:
        return any(la.iscollided(lb) for la in leaves(a) for lb in leaves(b))
    return any(checked(scene, la, lb) for la in leaves(a) for lb in leaves(b))


def brute_collisions(scene: Scene, self_checked: set[str]) -> list[tuple[str, str]]:
    names = scene.names
    found = []
    for i, a in enumerate(names):
        if a in self_checked:
            own = leaves(scene[a])
            if any(checked(scene, p, q) for p, q in itertools.combinations(own, 2)):
                found.append((a, a))
        for b in names[i + 1 :]:
            if touching(scene[a], scene[b], scene):
                found.append((a, b))
    return found


def brute_contacts(scene: Scene, pairs: list[tuple[str, str]], k: int) -> list[Contact]:
    """The documented order: by pair of objects, then deepest first within a pair."""
    out: list[Contact] = []
    for a, b in pairs:
        la_all, lb_all = leaves(scene[a]), leaves(scene[b])
        if a == b:
            leaf_pairs = list(itertools.combinations(la_all, 2))
        else:
            leaf_pairs = [(p, q) for p in la_all for q in lb_all]
        found: list[Contact] = []
        for p, q in leaf_pairs:
            if checked(scene, p, q):
                found.extend(p.contacts(q, max_contacts=k))
        found.sort(key=lambda c: c.penetration_depth)
        out.extend(found)
    return out


def brute_distance(
    scene: Scene, probe: CollisionShape, skip: set[str]
) -> list[tuple[float, str, Any, Any]]:
    """Every (d, name, p1, p2) from the probe's leaves to each object, nearest first."""
    out = []
    for name in scene.names:
        if name in skip:
            continue
        for p in leaves(probe):
            for q in leaves(scene[name]):
                if scene.allowed.covers(p, q):
                    continue
                d, p1, p2 = p.closest_point(q, inf_dist=math.inf)
                assert d is not None
                out.append((d, name, p1, p2))
    out.sort(key=lambda t: (t[0], scene.index_of(t[1])))
    return out


@st.composite
def objects(draw: Any, kinds: tuple[str, ...]) -> tuple[CollisionShape, bool]:
    """A leaf, or a group of 1-3 leaves (sometimes nested, sometimes with a nested group made
    with collision=False), and a self-collision flag."""
    kind = draw(st.sampled_from(kinds))
    if draw(st.integers(0, 2)) > 0:
        return make_leaf(kind, draw(rigid_poses(reach=3.0))), False
    inner: list[CollisionShape] = [
        make_leaf(draw(st.sampled_from(kinds)), draw(rigid_poses(reach=1.0)))
        for _ in range(draw(st.integers(1, 3)))
    ]
    if draw(st.booleans()):
        inner = [CollisionShapeGroup(inner[:1], pose=draw(rigid_poses(reach=0.5))), *inner[1:]]
    if draw(st.booleans()):
        ghost = make_leaf(draw(st.sampled_from(kinds)), draw(rigid_poses(reach=0.5)))
        inner.append(
            CollisionShapeGroup([ghost], pose=draw(rigid_poses(reach=1.0)), collision=False)
        )
    group = CollisionShapeGroup(inner, pose=draw(rigid_poses(reach=3.0)))
    return group, draw(st.booleans())


@st.composite
def steps(draw: Any, kinds: tuple[str, ...]) -> tuple[Any, ...]:
    """One change to a scene, with object and leaf indices taken modulo what exists."""
    action = draw(
        st.sampled_from(
            ["move", "move", "move_leaf", "grow", "append", "drop_leaf", "add", "remove",
             "allow", "disallow", "allow_parts", "disallow_parts"]
        )
    )  # fmt: skip
    i, j = draw(st.integers(0, 50)), draw(st.integers(0, 50))
    if action in ("move", "move_leaf"):
        return (action, i, j, draw(rigid_poses(reach=3.0 if action == "move" else 1.0)))
    if action == "append":
        return (action, i, make_leaf(draw(st.sampled_from(kinds)), draw(rigid_poses(reach=1.0))))
    if action == "add":
        return (action, *draw(objects(kinds)))
    return (action, i, j)


def apply(scene: Scene, step: tuple[Any, ...], self_checked: set[str]) -> None:
    names = scene.names
    action = step[0]
    if action == "add":
        name = scene.add(step[1], self_collision=step[2])
        if step[2]:
            self_checked.add(name)
        return
    if not names:
        return
    shape = scene[names[step[1] % len(names)]]
    if action == "move":
        shape.T = step[3]
    elif action == "move_leaf":
        inner = leaves_of(shape)
        if inner and shape is not inner[0]:
            inner[step[2] % len(inner)].T = step[3]
    elif action == "grow":
        for leaf in leaves_of(shape):
            if isinstance(leaf, Sphere):
                leaf.radius = leaf.radius * 1.5
    elif action == "append":
        if isinstance(shape, CollisionShapeGroup):
            shape.append(step[2])
    elif action == "drop_leaf":
        if isinstance(shape, CollisionShapeGroup) and len(shape):
            del shape[step[2] % len(shape)]
    elif action in ("allow_parts", "disallow_parts"):
        # Two shapes anywhere in the scene: leaves or groups, of one object or of two.
        parts = [p for n in names for p in _nodes(scene[n])]
        a, b = parts[step[1] % len(parts)], parts[step[2] % len(parts)]
        if a is not b:
            (scene.allow if action == "allow_parts" else scene.disallow)(a, b)
    elif action == "remove":
        self_checked.discard(names[step[1] % len(names)])
        scene.remove(names[step[1] % len(names)])
    elif len(names) >= 2:
        a, b = names[step[1] % len(names)], names[step[2] % len(names)]
        if a != b:
            (scene.allow if action == "allow" else scene.disallow)(a, b)


def _nodes(shape: CollisionShape) -> list[CollisionShape]:
    """``shape`` and every shape below it (groups and leaves)."""
    out = [shape]
    if isinstance(shape, CollisionShapeGroup):
        for element in shape:
            out += _nodes(element)
    return out


def check(scene: Scene, self_checked: set[str], probe: CollisionShape) -> None:
    expected = brute_collisions(scene, self_checked)
    assert scene.collisions() == expected
    assert scene.in_collision() == bool(expected)
    # Outside shape: every object it touches.
    assert scene.collide(probe) == [n for n in scene.names if touching(probe, scene[n])]
    # An object of the scene: the others it touches, allowed pairs left out.
    for name in scene.names:
        others = [n for n in scene.names if n != name and touching(scene[name], scene[n], scene)]
        assert scene.collide(scene[name]) == others
        for part in _nodes(scene[name])[1:]:  # a part of an object: its object left out
            if part.collision:
                want = [n for n in scene.names if n != name and touching(part, scene[n], scene)]
                assert scene.collide(part) == want
    try:
        found = scene.contacts()
    except UnsupportedPairError:  # two half-spaces or two octrees touch: no contacts for them
        with pytest.raises(UnsupportedPairError):
            brute_contacts(scene, expected, 1)
        return
    for contact in found:
        assert scene.index_of(scene.name_of(contact.o1)) <= scene.index_of(
            scene.name_of(contact.o2)
        )


def check_distance(scene: Scene, probe: CollisionShape) -> None:
    d, name, p1, p2 = scene.distance(probe)
    ranked = brute_distance(scene, probe, set())
    if not ranked:
        assert (d, name, p1, p2) == (math.inf, None, None, None)
        return
    best = ranked[0]
    assert d == pytest.approx(best[0], abs=1e-6)
    others = [t for t in ranked if t[1] != best[1]]
    if not others or others[0][0] > best[0] + 1e-6:  # a clear winner
        assert name == best[1]
        assert p1 is not None and p2 is not None
        np.testing.assert_allclose(p1, best[2], atol=1e-6)
        np.testing.assert_allclose(p2, best[3], atol=1e-6)


@ON_EVERY_PATH
@KIND_SETS
@given(data=st.data())
def test_queries_equal_brute_force_through_changes(
    path: str, kinds: tuple[str, ...], data: Any
) -> None:
    with broadphase_path(path):
        queries_equal_brute_force_through_changes(kinds, data)


def queries_equal_brute_force_through_changes(kinds: tuple[str, ...], data: Any) -> None:
    scene = Scene()
    self_checked: set[str] = set()
    for _ in range(data.draw(st.integers(1, 6), label="objects")):
        shape, flag = data.draw(objects(kinds), label="object")
        name = scene.add(shape, self_collision=flag)
        if flag:
            self_checked.add(name)
    probe_kinds = tuple(k for k in kinds if k != "HalfSpace")  # no half-space distance pair
    probe = make_leaf(data.draw(st.sampled_from(probe_kinds)), data.draw(rigid_poses(reach=3.0)))
    check(scene, self_checked, probe)
    for step in data.draw(st.lists(steps(kinds), min_size=1, max_size=6), label="steps"):
        apply(scene, step, self_checked)
        if data.draw(st.booleans(), label="query now"):
            check(scene, self_checked, probe)
    check(scene, self_checked, probe)
    if not any(leaf.stype == "halfspace" for n in scene.names for leaf in leaves(scene[n])):
        check_distance(scene, probe)


@ON_EVERY_PATH
@given(data=st.data())
def test_contacts_equal_brute_force(path: str, data: Any) -> None:
    with broadphase_path(path):
        contacts_equal_brute_force(data)


def contacts_equal_brute_force(data: Any) -> None:
    # No half-space (no contacts between two of them) and no octree (none between two).
    kinds = tuple(k for k in WITH_ELLIPSOID if k != "HalfSpace")
    scene = Scene()
    self_checked: set[str] = set()
    for _ in range(data.draw(st.integers(2, 5), label="objects")):
        shape, flag = data.draw(objects(kinds), label="object")
        name = scene.add(shape, self_collision=flag)
        if flag:
            self_checked.add(name)
    k = data.draw(st.integers(1, 3), label="max_contacts_per_pair")
    for step in data.draw(st.lists(steps(kinds), max_size=3), label="steps"):
        apply(scene, step, self_checked)
        pairs = brute_collisions(scene, self_checked)
        assert list(scene.contacts(k)) == brute_contacts(scene, pairs, k)
    pairs = brute_collisions(scene, self_checked)
    assert list(scene.contacts(k)) == brute_contacts(scene, pairs, k)


@ON_EVERY_PATH
@given(data=st.data())
def test_distance_equals_brute_force(path: str, data: Any) -> None:
    with broadphase_path(path):
        distance_equals_brute_force(data)


def distance_equals_brute_force(data: Any) -> None:
    kinds = tuple(k for k in WITH_ELLIPSOID if k != "HalfSpace")
    scene = Scene()
    for _ in range(data.draw(st.integers(0, 6), label="objects")):
        scene.add(data.draw(objects(kinds), label="object")[0])
    probe = make_leaf(data.draw(st.sampled_from(kinds)), data.draw(rigid_poses(reach=4.0)))
    check_distance(scene, probe)
    if len(scene) >= 2:
        # From an object of the scene: itself and the objects it may touch are left out.
        name = scene.names[data.draw(st.integers(0, len(scene) - 1))]
        other = scene.names[data.draw(st.integers(0, len(scene) - 1))]
        if other != name:
            scene.allow(name, other)
        skip = {name} | ({other} if other != name else set())
        d, found, _, _ = scene.distance(scene[name])
        ranked = brute_distance(scene, scene[name], skip)
        if ranked:
            assert d == pytest.approx(ranked[0][0], abs=1e-6)
            assert found in {t[1] for t in ranked if t[0] <= ranked[0][0] + 1e-6}
        else:
            assert (d, found) == (math.inf, None)


@settings(max_examples=15)  # each example builds ~100 objects and checks ~5,000 pairs
@given(
    count=st.integers(70, 100),
    seed=st.integers(0, 2**32 - 1),
    moves=st.lists(st.integers(1, 40), min_size=1, max_size=4),
)
def test_a_crowd_of_objects_moving_in_turns(count: int, seed: int, moves: list[int]) -> None:
    """Many objects: Coal's trees are filled, rebalanced and emptied as objects stop and go."""
    rng = np.random.default_rng(seed)

    def place() -> np.ndarray:
        T = np.eye(4)
        T[:3, 3] = rng.uniform(-2.0, 2.0, 3)
        return T

    scene = Scene()
    for i in range(count):
        shape = (Sphere(0.2), Cuboid([0.3, 0.2, 0.4]), Capsule(0.1, 0.3))[i % 3]
        shape.T = place()
        scene.add(shape)
    assert scene.collisions() == brute_collisions(scene, set())
    for n in moves:
        for k in rng.choice(count, size=min(n, count), replace=False).tolist():
            scene[scene.names[k]].T = place()
        assert scene.collisions() == brute_collisions(scene, set())


def test_an_octree_pair_without_contacts_is_reported_as_coal_reports_it() -> None:
    # Two octrees collide (a supported query) but Coal gives their contacts no geometry: the
    # shape query raises, and the scene's contacts leave the pair out (collisions() lists it),
    # so that one such pair does not stop every contact of the scene.
    from conftest import OCTREE_POINTS

    from spatialcontact import OcTree

    scene = Scene()
    scene.add(OcTree(OCTREE_POINTS, 0.1), "a")
    scene.add(OcTree(OCTREE_POINTS, 0.1), "b")
    assert scene.collisions() == [("a", "b")]
    assert len(scene.contacts()) == 0
    with pytest.raises(UnsupportedPairError, match="OcTree and an OcTree"):
        scene["a"].contacts(scene["b"])
