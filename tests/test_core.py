"""The shared shape protocol: imports, copies, weak caches, placement, bulk poses and threads."""

from __future__ import annotations

import copy
import gc
import math
import pickle
import re
import subprocess
import sys
import weakref

import numpy as np
import pytest
from conftest import rot, trans

import spatialcontact as sc
from spatialcontact._base import collision_leaves
from spatialcontact._validate import MAX_NESTING, describe

MODULES = ("query", "contact", "group", "shapes", "mesh", "scene", "_base", "pose")


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize("module", MODULES)
def test_any_module_can_be_imported_first(module: str) -> None:
    # Was: importing query before shapes raised "partially initialized module".
    done = _run(f"import spatialcontact.{module}; import spatialcontact; print('ok')")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


# ------------------------------------------------------------------------------- copies


def test_a_deep_copy_is_a_new_shape() -> None:
    a = sc.Sphere(1.0)
    b = copy.deepcopy(a)
    c = pickle.loads(pickle.dumps(a))
    assert len({a._uid, b._uid, c._uid}) == 3
    probe = sc.Sphere(1.0, pose=trans(1.5))
    (contact,) = b.contacts(probe)
    with pytest.raises(ValueError, match="is not in this contact"):
        contact.report(a)
    assert a.equals(b) and a.equals(c)


def test_a_shallow_copy_of_a_group_is_independent() -> None:
    inner = sc.Sphere(0.5, pose=trans(1.0))
    group = sc.CollisionShapeGroup([inner], pose=trans(0.0, 0.0, 0.0))
    probe = sc.Sphere(0.5, pose=trans(5.0))
    twin = copy.copy(group)
    assert twin[0] is not inner and twin[0].scene_parent is twin
    twin.T = trans(3.9)  # the copy's sphere now overlaps the probe
    assert twin.distance(probe) == pytest.approx(5.0 - 4.9 - 1.0, abs=1e-9)
    # The original has not moved, for its Coal transform and its world pose alike.
    assert group.distance(probe) == pytest.approx(4.0 - 1.0, abs=1e-9)
    assert np.allclose(inner.world_T, trans(1.0))


def test_a_copy_of_a_grouped_shape_is_out_of_the_group() -> None:
    leaf = sc.Sphere(0.5, pose=trans(1.0))
    group = sc.CollisionShapeGroup([leaf], pose=trans(0.0, 2.0))
    twin = copy.copy(leaf)
    assert twin.scene_parent is None and len(group) == 1
    assert np.allclose(twin.world_T, trans(1.0))  # its T, now in the world frame


# ------------------------------------------------------------------------- weak caches


def test_pair_caches_keep_no_partner_alive() -> None:
    host = sc.Sphere(1.0)
    refs = []
    for k in range(2000):
        partner = sc.Sphere(0.1, pose=trans(0.5 + k * 1e-4))
        host.iscollided(partner)
        host.closest_point(partner)
        host.contacts(partner)
        refs.append(weakref.ref(partner))
    del partner
    gc.collect()
    assert sum(ref() is not None for ref in refs) == 0
    # Nothing stale remains: a new partner is answered right.
    assert host.iscollided(sc.Sphere(0.1, pose=trans(1.05)))
    assert not host.iscollided(sc.Sphere(0.1, pose=trans(1.2)))


def test_a_collected_partner_leaves_the_hosts_cache() -> None:
    host = sc.Cuboid([1.0, 1.0, 1.0])
    partner = sc.Sphere(0.2, pose=trans(0.6))
    assert host.iscollided(partner)
    key = partner._uid
    assert key in host._collide_pairs
    del partner
    gc.collect()
    assert key not in host._collide_pairs


def test_a_shape_keeps_the_pairs_of_a_thousand_live_partners() -> None:
    # A table under 1,000 resting spheres: a scene step asks it of every sphere. Its caches
    # hold them all, so the next step makes no new Coal functor (a cache emptied at 512
    # partners made one for every pair, every step: 51 ms where 0.1.0 took 21).
    table = sc.Cuboid([100.0, 100.0, 1.0], pose=trans(0.0, 0.0, -0.5))
    spheres = [sc.Sphere(0.1, pose=trans(0.09 * (k % 500), k // 500, 0.09)) for k in range(1000)]
    first = [table.contacts(s)[0].penetration_depth for s in spheres]
    entries = dict(table._contact_pairs)
    assert len(entries) == 1000
    again = [table.contacts(s)[0].penetration_depth for s in spheres]
    assert again == first == pytest.approx([-0.01] * 1000)
    assert all(table._contact_pairs[key] is entry for key, entry in entries.items())


def test_a_full_pair_cache_drops_its_older_half(monkeypatch: pytest.MonkeyPatch) -> None:
    from spatialcontact._coal import state

    monkeypatch.setattr(state, "CACHE_LIMIT", 8)
    host = sc.Sphere(1.0)
    partners = [sc.Sphere(0.1, pose=trans(1.05 + 0.2 * k)) for k in range(11)]
    answers = [host.iscollided(p) for p in partners]
    assert answers == [True] + [False] * 10
    # 8 partners filled it; the 9th dropped the first 4; 10 and 11 were added
    assert list(host._collide_pairs) == [p._uid for p in partners[4:]]
    assert [host.iscollided(p) for p in partners] == answers  # dropped pairs are made again


# --------------------------------------------------------------------------- placement


def _nested(levels: int) -> tuple[sc.Sphere, list[sc.CollisionShapeGroup]]:
    """A sphere in ``levels`` groups, each 1 mm along x from the one it is in."""
    leaf = sc.Sphere(0.1)
    node: sc.CollisionShape = leaf
    groups = []
    for _ in range(levels):
        node = sc.CollisionShapeGroup([node], pose=trans(0.001))
        groups.append(node)
    return leaf, groups


def test_the_deepest_nesting_moves_together_and_copies() -> None:
    leaf, groups = _nested(MAX_NESTING)
    top = groups[-1]
    assert np.allclose(leaf.world_T[:3, 3], [0.1, 0.0, 0.0])
    top.T = trans(0.0, 0.0, 2.0) @ trans(0.001)
    assert np.allclose(leaf.world_T[:3, 3], [0.1, 0.0, 2.0])
    probe = sc.Sphere(0.1, pose=trans(0.1, 0.0, 2.15))
    assert probe.iscollided(top)
    assert probe.distance(leaf) == pytest.approx(-0.05, abs=1e-9)
    # Each of these takes one Python call per level (about 200 levels broke them).
    for copied in (
        pickle.loads(pickle.dumps(top)),
        copy.copy(top),
        copy.deepcopy(top),
        sc.CollisionShape.from_dict(top.to_dict(complete=True)),
    ):
        assert copied.equals(top)
        assert probe.distance(copied) == pytest.approx(-0.05, abs=1e-9)


def test_nesting_deeper_than_the_limit_is_refused_before_any_change() -> None:
    _, groups = _nested(MAX_NESTING)
    top = groups[-1]
    outer = sc.CollisionShapeGroup([sc.Sphere(1.0)])
    with pytest.raises(sc.InvalidShapeError) as caught:
        outer.append(top)
    assert str(caught.value) == (
        f"groups nest at most {MAX_NESTING} levels deep (MAX_NESTING), and adding "
        f"{describe(top)} here makes 101"
    )
    assert len(outer) == 1 and top._parent is None
    with pytest.raises(sc.InvalidShapeError, match=re.escape("here makes 101")):
        sc.CollisionShapeGroup([top])
    # Deep below a shallow place: the levels above the place count too.
    middle = groups[49]  # the 51st level from the top, itself included
    with pytest.raises(sc.InvalidShapeError, match=re.escape("here makes 103")):
        middle.append(_nested(52)[1][-1])
    assert len(middle) == 1
    # A dict nested 5,000 deep is refused without reading it all (no RecursionError).
    d = sc.CollisionShapeGroup().to_dict()
    for _ in range(5000):
        d = {**sc.CollisionShapeGroup().to_dict(), "elements": [d]}
    with pytest.raises(
        sc.InvalidShapeError,
        match=re.escape(
            f"d nests groups more than {MAX_NESTING} levels deep, the most groups can nest "
            "(MAX_NESTING)"
        ),
    ):
        sc.CollisionShape.from_dict(d)


def test_names_are_checked_when_set() -> None:
    s = sc.Sphere(1.0, name="ball")
    with pytest.raises(sc.ShapeTypeError, match="name must be a string or None, got 5"):
        s.name = 5  # type: ignore[assignment]
    assert s.name == "ball"
    s.name = None
    assert s.name is None


def test_collision_leaves_skip_disabled_groups_at_any_depth() -> None:
    a, b, c = sc.Sphere(1.0), sc.Sphere(1.0), sc.Sphere(1.0, collision=False)
    hidden = sc.CollisionShapeGroup([b], collision=False)
    outer = sc.CollisionShapeGroup([a, sc.CollisionShapeGroup([hidden, c])])
    assert collision_leaves(outer) == (a,)
    hidden.append(sc.Sphere(2.0))  # inside the disabled group: still skipped
    assert collision_leaves(outer) == (a,)
    outer.append(d := sc.Sphere(3.0))
    assert collision_leaves(outer) == (a, d)


# --------------------------------------------------------------------------- set_poses


def _arm() -> tuple[sc.CollisionShapeGroup, sc.Sphere]:
    nested = sc.Sphere(0.1, pose=trans(0.0, 1.0))
    inner = sc.CollisionShapeGroup([nested])
    return sc.CollisionShapeGroup([sc.Sphere(0.1), sc.Capsule(0.1, 0.2), inner]), nested


def test_set_poses_places_every_element() -> None:
    arm, nested = _arm()
    arm.T = trans(0.0, 0.0, 1.0)
    poses = np.array([trans(1.0), rot("x", np.pi / 2) @ trans(0.0, 0.0, 2.0), trans(3.0)])
    arm.set_poses(poses)
    for element, T in zip(arm, poses, strict=True):
        assert np.array_equal(element.T, T)
        assert not element.T.flags.writeable
    assert np.allclose(arm[0].world_T[:3, 3], [1.0, 0.0, 1.0])
    assert np.allclose(nested.world_T[:3, 3], [3.0, 1.0, 1.0])
    # The Coal transforms moved: a probe at the nested sphere's new place touches it.
    assert sc.Sphere(0.05, pose=trans(3.0, 1.0, 1.1)).iscollided(arm)
    capsule_axis = arm[1].world_T[:3, 2]
    assert np.allclose(capsule_axis, [0.0, -1.0, 0.0])
    # Unchecked poses take the same path.
    arm.set_poses(np.array([trans(0.5), trans(0.6), trans(0.7)]), check=False)
    assert np.allclose(nested.world_T[:3, 3], [0.7, 1.0, 1.0])


def test_set_poses_refuses_bad_poses_and_moves_nothing() -> None:
    arm, _ = _arm()
    before = [element.T.copy() for element in arm]
    with pytest.raises(sc.InvalidPoseError, match=r"shape \(3, 4, 4\).*got shape \(2, 4, 4\)"):
        arm.set_poses(np.array([trans(1.0), trans(2.0)]))
    bad = np.array([trans(1.0), trans(2.0), np.diag([1.0, 1.0, -1.0, 1.0])])
    with pytest.raises(sc.InvalidPoseError, match=r"poses\[2\]"):
        arm.set_poses(bad)
    for element, T in zip(arm, before, strict=True):
        assert np.array_equal(element.T, T)


@pytest.mark.parametrize(
    ("entry", "value", "message"),
    [
        ((0, 3), math.nan, "non-finite entries"),
        ((1, 3), 5e6, "translation reaches 5e\\+06 m"),
        ((3, 0), 1.0, "last row is"),
    ],
)
def test_set_poses_without_check_still_refuses_what_coal_must_not_get(
    entry: tuple[int, int], value: float, message: str
) -> None:
    # check=False skips the rigidity test only: a pose Coal must never be given is refused,
    # naming its row, and nothing moves. A merely non-rigid pose passes.
    arm, _ = _arm()
    before = [element.T.copy() for element in arm]
    bad = np.array([trans(1.0), trans(2.0), trans(3.0)])
    bad[1][entry] = value
    with pytest.raises(
        sc.InvalidPoseError, match=rf"poses\[1\] must be a rigid transform.*{message}"
    ):
        arm.set_poses(bad, check=False)
    for element, T in zip(arm, before, strict=True):
        assert np.array_equal(element.T, T)
    scaled = np.array([trans(1.0), trans(2.0), np.diag([2.0, 1.0, 1.0, 1.0])])
    arm.set_poses(scaled, check=False)
    assert np.array_equal(arm[2].T, scaled[2])


def test_a_removed_element_keeps_its_batch_pose() -> None:
    arm, _ = _arm()
    arm.T = trans(0.0, 0.0, 5.0)
    arm.set_poses(np.array([trans(1.0), trans(2.0), trans(3.0)]), check=False)
    leaf = arm.pop(0)
    assert leaf.scene_parent is None
    assert np.array_equal(leaf.T, trans(1.0))
    assert np.allclose(leaf.world_T, trans(1.0))
    assert sc.Sphere(0.05, pose=trans(1.0, 0.0, 0.1)).iscollided(leaf)


def test_translations_beyond_the_range_are_refused() -> None:
    s = sc.Sphere(1.0)
    with pytest.raises(sc.InvalidPoseError, match="beyond the supported range"):
        s.T = trans(2e6)
    assert np.array_equal(s.T, np.eye(4))


# ------------------------------------------------------------------------------ threads

_THREADS = """
import threading, numpy as np, spatialcontact as sc
rng = np.random.default_rng(1)
shapes = [sc.Sphere(0.3), sc.Cuboid([0.5, 0.6, 0.7]), sc.Capsule(0.2, 0.5), sc.Cylinder(0.3, 0.4)]
for k, s in enumerate(shapes):
    T = np.eye(4); T[:3, 3] = rng.uniform(-0.6, 0.6, 3); s.T = T
pairs = [(a, b) for a in shapes for b in shapes if a is not b]
group = sc.CollisionShapeGroup([sc.Sphere(0.2, pose=np.eye(4)) for _ in range(3)])
def answers():
    out = []
    for a, b in pairs:
        d, p1, p2 = a.closest_point(b, inf_dist=10.0)
        out.append((a.iscollided(b), round(d, 12), len(a.contacts(b, max_contacts=3))))
    out.append(group.distance(shapes[0]))
    return out
serial = answers()
bad = []
def work():
    for _ in range(200):
        if answers() != serial:
            bad.append(1)
threads = [threading.Thread(target=work) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
print("mismatches", len(bad))
"""


def test_threads_sharing_shapes_agree_with_serial_answers() -> None:
    done = _run(_THREADS)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "mismatches 0"


# ------------------------------------------------------------------- security margins


@pytest.mark.parametrize("kind", ["sphere", "mesh"])
def test_a_negative_margin_keeps_the_deeper_contacts(kind: str) -> None:
    import trimesh

    if kind == "sphere":
        a: sc.CollisionShape = sc.Sphere(1.0)
    else:
        a = sc.Mesh.from_trimesh(trimesh.creation.box(extents=[2.0, 2.0, 2.0]))
    deep = sc.Sphere(0.5, pose=trans(1.2))  # 0.3 deep
    shallow = sc.Sphere(0.5, pose=trans(1.45))  # 0.05 deep
    assert [c.penetration_depth for c in a.contacts(deep, security_margin=-0.1)] == pytest.approx(
        [-0.3]
    )
    assert len(a.contacts(shallow, security_margin=-0.1)) == 0
    assert len(a.contacts(shallow, security_margin=0.0)) == 1
