"""Group queries against a leaf-by-leaf loop, on random nested scenes (hypothesis).

The loop calls every leaf pair with no culling, so any pair the groups' bounding-sphere
culling drops wrongly shows up as a different answer. Each comparison is exact: both sides
end in the same Coal call on the same pair.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from conftest import make_leaf, rigid_poses
from hypothesis import given
from hypothesis import strategies as st

from spatialcontact import CollisionShape, CollisionShapeGroup

# No HalfSpace-HalfSpace pair (Coal has no distance for it) and no octree (none with an
# ellipsoid): the half-space may appear on the first side only.
KINDS_A = ("Sphere", "Cuboid", "Cylinder", "Capsule", "Cone", "Ellipsoid", "Mesh",
           "ConvexHull", "HalfSpace")  # fmt: skip
KINDS_B = KINDS_A[:-1]
INF_DISTS = (math.inf, 2.0, 0.5, 0.0, -0.2)


@st.composite
def scenes(draw: Any, kinds: tuple[str, ...], max_leaves: int = 6) -> CollisionShapeGroup:
    """A group three levels deep: each leaf goes in the top group, its child or grandchild.

    Every group and leaf gets a random pose; about one leaf in eight has collision=False.
    """
    mid = CollisionShapeGroup(pose=draw(rigid_poses(reach=1.0)))
    bottom = CollisionShapeGroup(pose=draw(rigid_poses(reach=1.0)))
    top = CollisionShapeGroup([mid], pose=draw(rigid_poses(reach=1.0)))
    mid.append(bottom)
    for _ in range(draw(st.integers(1, max_leaves))):
        kind = draw(st.sampled_from(kinds))
        if kind == "HalfSpace" and draw(st.booleans()):
            kind = "Sphere"  # keep half-spaces rarer than the rest
        leaf = make_leaf(
            kind,
            draw(rigid_poses(reach=2.0)),
            collision=draw(st.integers(0, 7)) > 0,
        )
        draw(st.sampled_from((top, mid, bottom))).append(leaf)
    return top


def leaves_of(shape: CollisionShape) -> list[CollisionShape]:
    """The shapes a query should visit: the enabled leaves (a leaf is its own only leaf)."""
    if not shape._is_group:
        return [shape]
    assert isinstance(shape, CollisionShapeGroup)
    return [leaf for leaf in shape.leaves() if leaf.collision]


def pair_results(a: CollisionShape, b: CollisionShape) -> list[tuple[Any, ...]]:
    """``(d, p1, p2)`` of every leaf pair, no cut-off, p1 on a's leaf."""
    return [la.closest_point(lb, inf_dist=math.inf) for la in leaves_of(a) for lb in leaves_of(b)]


def contact_keys(found: Any) -> list[tuple[int, int, int, int, float]]:
    return sorted((id(c.o1), id(c.o2), c.b1, c.b2, c.penetration_depth) for c in found)


def check_against_loop(a: CollisionShape, b: CollisionShape) -> None:
    """Every query of ``a`` against ``b`` equals the loop over their leaf pairs."""
    pairs = [(la, lb) for la in leaves_of(a) for lb in leaves_of(b)]
    assert a.iscollided(b) == any(la.iscollided(lb) for la, lb in pairs)

    results = pair_results(a, b)
    best = min((r[0] for r in results), default=math.inf)
    assert a.distance(b) == best
    for inf_dist in INF_DISTS:
        d, p1, p2 = a.closest_point(b, inf_dist=inf_dist)
        if not results or best > inf_dist:
            assert (d, p1, p2) == (None, None, None)
            continue
        assert d == best and p1 is not None and p2 is not None
        # p1 and p2 are the witness points of one of the closest pairs, p1 on a's side.
        assert any(
            r[0] == d and np.array_equal(r[1], p1) and np.array_equal(r[2], p2) for r in results
        )

    for max_contacts, margin in ((1, 0.0), (4, 0.0), (2, 0.25)):
        found = a.contacts(b, max_contacts=max_contacts, security_margin=margin)
        loop = [
            c
            for la, lb in pairs
            for c in la.contacts(lb, max_contacts=max_contacts, security_margin=margin)
        ]
        assert contact_keys(found) == contact_keys(loop)
        depths = list(found.penetration_depth)
        assert depths == sorted(depths)  # deepest first
        assert all(not c.o1._is_group and not c.o2._is_group for c in found)


@given(scenes(KINDS_A), scenes(KINDS_B))
def test_group_vs_group_equals_the_leaf_loop(
    a: CollisionShapeGroup, b: CollisionShapeGroup
) -> None:
    check_against_loop(a, b)
    check_against_loop(b, a)


@given(scenes(KINDS_A), scenes(KINDS_B), rigid_poses(reach=1.5), rigid_poses(reach=1.0))
def test_answers_follow_moved_groups(
    a: CollisionShapeGroup, b: CollisionShapeGroup, top_pose: np.ndarray, mid_pose: np.ndarray
) -> None:
    check_against_loop(a, b)  # fills the caches
    a.T = top_pose
    b[0].T = mid_pose  # b's middle group
    check_against_loop(a, b)
    check_against_loop(b, a)


@given(scenes(KINDS_B), st.sampled_from(KINDS_A), rigid_poses(reach=2.5))
def test_shape_vs_group_equals_the_leaf_loop(
    group: CollisionShapeGroup, kind: str, T: np.ndarray
) -> None:
    shape = make_leaf(kind, T)
    check_against_loop(shape, group)
    check_against_loop(group, shape)


@given(scenes(KINDS_A))
def test_leaf_world_T_is_the_product_of_the_chain(group: CollisionShapeGroup) -> None:
    for leaf in group.leaves():
        chain = np.eye(4)
        node: CollisionShape | None = leaf
        while node is not None:
            chain = node.T @ chain
            node = node.scene_parent
        np.testing.assert_allclose(leaf.world_T, chain, atol=1e-12)
