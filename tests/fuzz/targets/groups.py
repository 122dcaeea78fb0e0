"""Groups: constructor and list methods with hostile items and indices; answers equal to brute
force over the leaves; a refused change leaves the group as it was."""

from __future__ import annotations

from typing import Any

import numpy as np

import spatialcontact as sc

from .. import values as V
from ..core import Case, close, target
from .common import r, trans, zoo
from .shapes import _common_kwarg, _kwarg_check

GROUP_KINDS = ("sphere", "box", "capsule", "cylinder", "hull")


def _leaves(rng: np.random.Generator, n: int) -> list[Any]:
    return [zoo(rng, GROUP_KINDS) for _ in range(n)]


def _brute(group: Any, probe: Any) -> tuple[float, bool]:
    """Distance and collision of ``group`` to ``probe`` from its collision leaves one by one."""
    leaves = [leaf for leaf in group.leaves() if leaf.collision and _enabled(leaf, group)]
    if not leaves:
        return float("inf"), False
    return min(leaf.distance(probe) for leaf in leaves), any(
        leaf.iscollided(probe) for leaf in leaves
    )


def _enabled(leaf: Any, top: Any) -> bool:
    node = leaf
    while node is not None and node is not top:
        if not node.collision:
            return False
        node = node._parent
    return True


def _agrees_with_leaves(group: Any) -> None:
    probe = sc.Sphere(0.3, pose=trans(0.4, -0.2, 0.1))
    if not group.collision or not any(leaf.collision for leaf in group.leaves()):
        return
    d, hit = _brute(group, probe)
    if d == float("inf"):
        return
    close(group.distance(probe), d, 1e-6, "group distance against the leaves' minimum")
    if abs(d) > 1e-5:
        assert group.iscollided(probe) == hit, f"group iscollided {not hit}, leaves {hit}"


def _item_pick(rng: np.random.Generator, group: Any) -> V.Pick:
    """An element to add: a fresh shape or group, or something that may not join."""
    held = group.leaves()[0] if len(group.leaves()) else None
    other_group = sc.CollisionShapeGroup(_leaves(rng, 1))
    taken = other_group.leaves()[0]
    good: list[Any] = [zoo(rng, GROUP_KINDS), sc.CollisionShapeGroup(_leaves(rng, 2))]
    good.append(sc.Sphere(0.2, collision=False))
    bad: list[Any] = [None, 5, "sphere", [zoo(rng, GROUP_KINDS)], np.eye(4), sc.Scene(), taken]
    bad += [group, sc.Sphere, object()]
    if held is not None:
        bad.append(held)
    if rng.random() < 0.4:
        return V.Pick(good[int(rng.integers(len(good)))], "answer")
    return V.Pick(bad[int(rng.integers(len(bad)))], "error")


@target("CollisionShapeGroup()", covers=["CollisionShapeGroup"], weight=2)
def group_constructor(rng: np.random.Generator, env: Any) -> Case:
    if rng.random() < 0.3:
        which, pick = _common_kwarg(rng)
        leaves = _leaves(rng, 2)
        label = f"CollisionShapeGroup({r(leaves)}, {which}={r(pick.value)})"

        def make_kw() -> Any:
            return sc.CollisionShapeGroup(leaves, **{which: pick.value})

        base_check = _kwarg_check(which, pick)

        def check_kw(group: Any) -> None:
            base_check(group, pick.number)
            _agrees_with_leaves(group)

        return Case(label, make_kw, pick.expect, which, pick.value, check_kw)
    leaves = _leaves(rng, int(rng.integers(0, 4)))
    one = zoo(rng, GROUP_KINDS)
    options: list[tuple[Any, str]] = [
        (leaves, "answer"),
        (tuple(leaves), "answer"),
        (iter(leaves), "answer"),
        (None, "answer"),
        ([], "answer"),
        ([sc.CollisionShapeGroup(_leaves(rng, 2)), *leaves], "answer"),
        ([one, one], "error"),
        ([5], "error"),
        ([None], "error"),
        ("abc", "error"),
        (5, "error"),
        (one, "either"),
        ([one, "x"], "error"),
        ([sc.Sphere], "error"),
        ({"a": one}, "error"),
    ]
    value, expect = options[int(rng.integers(len(options)))]
    shown = r(value)

    def make() -> Any:
        return sc.CollisionShapeGroup(value)

    return Case(
        f"CollisionShapeGroup({shown})",
        make,
        expect,
        ("initlist", "CollisionShapeGroup", "given twice"),
        value,
        _agrees_with_leaves,
        shows_value=False,
    )


@target(
    "group list methods",
    covers=[
        "CollisionShapeGroup.append",
        "CollisionShapeGroup.insert",
        "CollisionShapeGroup.extend",
        "CollisionShapeGroup.index",
        "CollisionShapeGroup.reverse",
        "CollisionShapeGroup.clear",
        "CollisionShapeGroup.leaves",
        "CollisionShapeGroup.equals",
        "CollisionShapeGroup.to_dict",
    ],
    weight=4,
)
def group_methods(rng: np.random.Generator, env: Any) -> Case:
    group = sc.CollisionShapeGroup(_leaves(rng, int(rng.integers(1, 4))), pose=V.rigid(rng, 0.5))
    if rng.random() < 0.3:
        group.append(sc.CollisionShapeGroup(_leaves(rng, 2)))
    found: Any = None
    method = (
        "append",
        "insert",
        "extend",
        "index",
        "reverse",
        "clear",
        "leaves",
        "equals",
        "to_dict",
    )[int(rng.integers(9))]
    before = list(group.data)
    probe = sc.Sphere(0.3, pose=trans(0.4, -0.2, 0.1))
    before_d = group.distance(probe) if group.leaves() else None
    param: Any = ("item", "CollisionShapeGroup", "group", "given twice")
    item = _item_pick(rng, group)
    call: Any
    fresh: Any
    if method == "append":
        call, pick = (lambda: group.append(item.value)), item
    elif method == "insert":
        if rng.random() < 0.5:
            pick, param = V.integer(rng, None), "index"  # any integer, as for a list
            fresh = zoo(rng, GROUP_KINDS)
            position = pick.value
            call = lambda: group.insert(position, fresh)  # noqa: E731
        else:
            pick = item
            call = lambda: group.insert(0, item.value)  # noqa: E731
    elif method == "extend":
        fresh = _leaves(rng, 2)
        options: list[tuple[Any, str]] = [
            (fresh, "answer"),
            (iter(fresh), "answer"),
            ([*fresh, item.value], item.expect),
            ([fresh[0], fresh[0]], "error"),
            (5, "error"),
            (None, "error"),
            ("ab", "error"),
        ]
        value, verdict = options[int(rng.integers(len(options)))]
        pick, param = V.Pick(value, verdict), ("items", "CollisionShapeGroup", "given twice")
        call = lambda: group.extend(value)  # noqa: E731
    elif method == "index":
        present = group.data[int(rng.integers(len(group.data)))]
        if rng.random() < 0.5:
            pick = V.integer(rng, None)  # any integer is a valid start, as for a list
            if pick.expect != "error":
                pick.expect = "either"  # found from there, or "not in this group"
            param = ("start", "not in this group")
            start = pick.value
            call = lambda: group.index(present, start)  # noqa: E731
            found = present
        else:
            target_item = present if rng.random() < 0.5 else item.value
            inside = any(target_item is e for e in group.data)
            pick = V.Pick(target_item, "answer" if inside else "error")
            param = ("item", "not in this group")
            call = lambda: group.index(target_item)  # noqa: E731
    elif method == "equals":
        other = [group, sc.CollisionShapeGroup(), None, 5, group.data[0]][int(rng.integers(5))]
        pick = V.Pick(other, "answer")
        call = lambda: group.equals(other)  # noqa: E731
    else:
        pick = V.Pick(None, "answer")
        call = getattr(group, method)

    def run() -> Any:
        try:
            return call()
        except Exception:
            # a refusal leaves the group as it was
            same = [a is b for a, b in zip(group.data, before, strict=False)]
            assert same == [True] * len(before), "the group changed on a refusal"
            assert len(group.data) == len(before), "the group changed length on a refusal"
            if before_d is not None:
                close(group.distance(probe), before_d, 1e-9, "distance after a refusal")
            raise

    def check(result: Any) -> None:
        if method == "index":
            assert isinstance(result, int), f"index gave {result!r}"
            assert group.data[result] is (found if param[0] == "start" else pick.value)
            assert result == group.data.index(group.data[result])
        if method == "to_dict":
            assert isinstance(result, dict)
        if method == "equals":
            assert isinstance(result, bool) and (result or pick.value is not group)
        if method == "leaves":
            assert all(not isinstance(x, sc.CollisionShapeGroup) for x in result)
        if group.leaves():
            _agrees_with_leaves(group)

    label = f"group({len(before)} elements).{method}({r(pick.value)})"
    return Case(
        label,
        run,
        pick.expect,
        param,
        pick.value,
        check,
        shows_value=not isinstance(param, tuple) and not isinstance(pick.value, list),
    )


@target("group set_poses", covers=["CollisionShapeGroup.set_poses"], weight=2)
def group_set_poses(rng: np.random.Generator, env: Any) -> Case:
    n = int(rng.integers(1, 4))
    group = sc.CollisionShapeGroup(_leaves(rng, n), pose=V.rigid(rng, 0.5))
    poses = np.stack([V.rigid(rng, 1.0) for _ in range(n)])
    check_flag = bool(rng.random() < 0.7)
    options: list[tuple[Any, str]] = [
        (poses, "answer"),
        (poses.tolist(), "answer"),
        (poses[:-1], "error"),
        (np.concatenate([poses, poses[:1]]), "error"),
        (poses[0], "error"),
        (poses[:, :3], "error"),
        (poses.astype(object), "error"),
        (poses.astype(str), "error"),
        (poses.astype(bool), "error"),
        (poses.astype(complex), "error"),
        ("poses", "error"),
        (None, "error"),
        ([[[10**400] * 4] * 4] * n, "error"),
        (np.ma.masked_array(poses), "error"),
    ]
    for bad_value in (np.nan, np.inf):
        broken = poses.copy()
        broken[-1, 0, 3] = bad_value
        options.append((broken, "error" if check_flag else "either"))
    scaled = poses.copy()
    scaled[0, :3, :3] *= 2.0
    options.append((scaled, "error" if check_flag else "either"))
    far = poses.copy()
    far[0, :3, 3] = 1e7
    options.append((far, "error" if check_flag else "either"))
    value, expect = options[int(rng.integers(len(options)))]
    before = [leaf.T.copy() for leaf in group.data]

    def run() -> Any:
        try:
            group.set_poses(value, check=check_flag)
        except Exception:
            assert all(np.array_equal(a.T, b) for a, b in zip(group.data, before, strict=True)), (
                "an element moved on a refused set_poses"
            )
            raise
        return group

    def check(result: Any) -> None:
        if expect == "answer":
            for element, T in zip(group.data, np.asarray(value, dtype=float), strict=True):
                assert np.allclose(element.T, T, atol=1e-12)
            _agrees_with_leaves(group)

    label = f"group({n}).set_poses({r(value)}, check={check_flag})"
    return Case(label, run, expect, "poses", value, check)
