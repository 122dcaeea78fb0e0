"""Serialization: shape dicts both ways (``to_dict`` / ``from_dict``) and pickling of everything.

Dicts: ``to_dict()`` stays spatialgeometry 1.4.2's dict (checked key for key against the real
package in ``test_spatialgeometry_compat.py``); ``to_dict(complete=True)`` adds what an exact
copy needs. Known dicts are written out by hand; hypothesis builds random shapes of every type
and random nested groups, and the copy made from the dict (through JSON) must be ``equals`` to
the original (complete dicts: the same sizes, poses, colours bit for bit) and answer every
query against a set of probes as it does, to 1e-9 (see ``TOUCHING``; spatialgeometry dicts
give the world pose as a quaternion, exact to rounding). spatialgeometry's
own dicts are read too. Every error of ``from_dict`` is checked with its message.

Pickling: every shape type, nested groups, a scene with worlds, robots (mesh and sphere
geometry), every sensor of ``spatialcontact.sensors`` with its hub, and contact records round
trip and give the same answers; also in a fresh process.
"""

from __future__ import annotations

import json
import math
import pickle
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import spatialgeometry as sg
from conftest import (
    LEAF_KINDS,
    UNSUPPORTED_ALL,
    UNSUPPORTED_DISTANCE,
    pose,
    quaternion_matrix,
    rigid_poses,
    rot,
    trans,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from spatialmath import SE3

import spatialcontact as sc
from spatialcontact import meshes
from spatialcontact.errors import (
    InvalidArgumentError,
    InvalidMeshError,
    InvalidPoseError,
    InvalidShapeError,
    MeshFileNotFoundError,
    ShapeTypeError,
)
from spatialcontact.sensors import (
    MatrixContactSensor,
    NamedContactSensor,
    ObjectContactSensor,
    PenaltyForce,
    SensorHub,
)

BOX_STL = meshes.path("objects") / "box.stl"

SG_KEYS = ["stype", "t", "q", "v", "color", "opacity"]
"""The keys of every spatialgeometry dict, before the sizes."""

COMPLETE_KEYS = ["T", "rgba", "name", "collision"]
"""The keys ``complete=True`` adds to every shape's dict."""

TETRA_VERTICES = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
TETRA_FACES = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]


def through_json(d: dict[str, Any]) -> Any:
    return json.loads(json.dumps(d, allow_nan=False))


# ------------------------------------------------------------------------- known dicts


def test_a_complete_sphere_dict_by_hand() -> None:
    ball = sc.Sphere(0.5, pose=trans(1.0, 2.0, 3.0), color=(1.0, 0.5, 0.0, 0.25), name="ball")
    assert ball.to_dict(complete=True) == {
        "stype": "sphere",
        "t": [1.0, 2.0, 3.0],
        "q": [0.0, 0.0, 0.0, 1.0],
        "v": [0.0] * 6,
        "color": 0xFF7F00,  # int(0.5 * 255) = 127
        "opacity": 0.25,
        "radius": 0.5,
        "T": [[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 2.0], [0.0, 0.0, 1.0, 3.0], [0, 0, 0, 1.0]],
        "rgba": [1.0, 0.5, 0.0, 0.25],
        "name": "ball",
        "collision": True,
    }


def test_complete_adds_keys_and_changes_none() -> None:
    for kind in LEAF_KINDS:
        shape = leaf(kind, pose(rot("z", 0.3)[:3, :3], (0.1, 0.2, 0.3)))
        plain, full = shape.to_dict(), shape.to_dict(complete=True)
        assert list(plain)[:6] == SG_KEYS, kind
        added = [k for k in full if k not in plain]
        data = ["vertices", "faces"] if kind == "Mesh" else []
        assert added == COMPLETE_KEYS + data, kind
        assert {k: full[k] for k in plain} == plain, kind
        assert shape.to_dict(complete=False) == plain


def test_the_sizes_of_each_type_are_its_constructor_parameters() -> None:
    want = {
        "Sphere": ["radius"],
        "Cuboid": ["scale"],
        "Cylinder": ["radius", "length"],
        "Capsule": ["radius", "length"],
        "Cone": ["radius", "length"],
        "Ellipsoid": ["radii"],
        "HalfSpace": ["normal", "offset"],
        "Mesh": ["scale", "filename", "use_vertex_colors", "y_up"],
        "ConvexHull": ["points"],
        "OcTree": ["points", "resolution"],
    }
    for kind, keys in want.items():
        assert list(leaf(kind).to_dict())[6:] == keys, kind


def test_a_group_dict_by_hand() -> None:
    inner = sc.CollisionShapeGroup([sc.Sphere(0.1, pose=trans(0, 0, 1))], pose=trans(0, 1, 0))
    group = sc.CollisionShapeGroup([inner], pose=trans(1, 0, 0), name="g", collision=True)
    d = group.to_dict()
    assert [k for k in d] == [*SG_KEYS, "name", "collision", "elements"]
    assert (d["stype"], d["t"], d["name"], d["collision"]) == ("group", [1, 0, 0], "g", True)
    (e,) = d["elements"]
    assert (e["stype"], e["t"], e["name"]) == ("group", [1.0, 1.0, 0.0], None)
    assert e["elements"] == [inner[0].to_dict()]
    assert e["elements"][0]["t"] == [1.0, 1.0, 1.0]  # world poses: what a renderer draws
    full = group.to_dict(complete=True)
    ball = full["elements"][0]["elements"][0]
    assert ball["T"] == trans(0, 0, 1).tolist() and ball["t"] == [1.0, 1.0, 1.0]  # T is local
    assert full["elements"][0]["T"] == trans(0, 1, 0).tolist()


def test_dicts_are_json_safe() -> None:
    group = sc.CollisionShapeGroup([leaf(kind) for kind in LEAF_KINDS])
    group.append(sc.Mesh(BOX_STL, scale=[1, 2, 3]))
    for complete in (False, True):
        d = group.to_dict(complete=complete)
        assert through_json(d) == d


def test_a_mesh_is_described_by_its_arrays_or_its_file() -> None:
    from_arrays = sc.Mesh.from_arrays(TETRA_VERTICES, TETRA_FACES, scale=2.0)
    d = from_arrays.to_dict(complete=True)
    assert d["filename"] is None and d["scale"] == [2.0, 2.0, 2.0]
    assert d["vertices"] == TETRA_VERTICES and d["faces"] == TETRA_FACES  # unscaled
    from_file = sc.Mesh(BOX_STL, scale=[1.0, 2.0, 1.0], y_up=True)
    d = from_file.to_dict(complete=True)
    assert "vertices" not in d and d["filename"] == str(BOX_STL).replace("\\", "/")
    again = sc.CollisionShape.from_dict(through_json(d))
    assert isinstance(again, sc.Mesh) and again.equals(from_file) and again.y_up
    np.testing.assert_array_equal(again.vertices, from_file.vertices)


def test_the_own_colours_of_a_mesh_file_are_kept() -> None:
    own = sc.Mesh(BOX_STL)  # no colour given: renderers use the file's
    given = sc.Mesh(BOX_STL, color="red")
    faded = sc.Mesh(BOX_STL)
    faded.opacity = 0.5  # the opacity alone: still the file's colours
    for mesh, flag in ((own, True), (given, False), (faded, True)):
        for complete in (False, True):
            d = mesh.to_dict(complete=complete)
            assert d["use_vertex_colors"] is flag
            assert sc.Mesh.from_dict(d).to_dict()["use_vertex_colors"] is flag
    assert sc.Mesh.from_dict(faded.to_dict(complete=True)).color == (0.3, 0.3, 0.3, 0.5)
    # a hand-written dict: its own colours unless it gives one
    plain = {"stype": "mesh", "filename": str(BOX_STL), "scale": [1, 1, 1]}
    assert sc.Mesh.from_dict(plain).to_dict()["use_vertex_colors"] is True
    assert (
        sc.Mesh.from_dict({**plain, "rgba": [1, 0, 0, 1]}).to_dict()["use_vertex_colors"] is False
    )


def test_a_unit_half_space_normal_is_kept_bit_for_bit() -> None:
    n = np.array([1.0, 2.0, 2.0]) / 3.0  # |n| is 1 to rounding, not exactly
    for normal in (n, [0.0, 0.0, 1.0], [0.3, -0.4, 0.5]):
        h = sc.HalfSpace(normal, 0.7)
        again = sc.HalfSpace.from_dict(through_json(h.to_dict(complete=True)))
        assert again.normal.tolist() == h.normal.tolist() and again.offset == h.offset
        assert again.equals(h)
    # a normal of another length is normalised, the offset with it (the same set)
    h = sc.HalfSpace.from_dict({"stype": "halfspace", "normal": [0, 0, 2], "offset": 1.0})
    assert h.normal.tolist() == [0.0, 0.0, 1.0] and h.offset == 0.5


def test_velocity_name_and_collision_flag_survive() -> None:
    ghost = sc.Cuboid([1, 2, 3], collision=False, name="ghost")
    ghost.v = [1, 2, 3, 0.1, 0.2, 0.3]
    again = sc.CollisionShape.from_dict(through_json(ghost.to_dict(complete=True)))
    assert again.equals(ghost) and not again.collision and again.name == "ghost"
    assert again.v.tolist() == [1, 2, 3, 0.1, 0.2, 0.3]
    # a spatialgeometry dict has neither: the defaults
    plain = sc.CollisionShape.from_dict(ghost.to_dict())
    assert plain.collision and plain.name is None and plain.v.tolist() == ghost.v.tolist()


def test_from_dict_of_a_class_builds_only_that_type() -> None:
    ball = sc.Sphere(0.5).to_dict()
    assert type(sc.Sphere.from_dict(ball)) is sc.Sphere
    assert type(sc.CollisionShape.from_dict(ball)) is sc.Sphere
    group = sc.CollisionShapeGroup([sc.Sphere(0.5)]).to_dict()
    assert type(sc.CollisionShapeGroup.from_dict(group)) is sc.CollisionShapeGroup
    with pytest.raises(
        InvalidArgumentError,
        match=r"Cuboid.from_dict builds Cuboid shapes, but d\['stype'\] is 'sphere' "
        r"\(a Sphere\); use CollisionShape.from_dict",
    ):
        sc.Cuboid.from_dict(ball)
    with pytest.raises(InvalidArgumentError, match=r"CollisionShapeGroup\.from_dict builds"):
        sc.CollisionShapeGroup.from_dict(ball)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        cube = sc.Cuboid([1, 2, 3]).to_dict()
        with pytest.raises(FutureWarning, match="Box is deprecated"):
            sc.Box.from_dict(cube)  # a Box, with its warning
    assert type(sc.CollisionShape.from_dict(cube)) is sc.Cuboid


def test_a_dict_of_an_element_alone_gives_its_pose_in_the_group() -> None:
    ball = sc.Sphere(0.1, pose=trans(0, 0, 1))
    sc.CollisionShapeGroup([ball], pose=trans(5, 0, 0))
    alone = sc.Sphere.from_dict(ball.to_dict(complete=True))  # T: relative to the group
    assert alone.T.tolist() == trans(0, 0, 1).tolist()
    placed = sc.Sphere.from_dict(ball.to_dict())  # t, q: the world pose
    assert placed.T.tolist() == trans(5, 0, 1).tolist()


# ----------------------------------------------------------- spatialgeometry's dicts


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("Sphere", (0.4,)),
        ("Cuboid", ([0.5, 0.7, 0.9],)),
        ("Cylinder", (0.3, 1.1)),
        ("Ellipsoid", ([0.5, 0.3, 0.4],)),
    ],
)
def test_spatialgeometry_dicts_give_shapes_with_its_answers(name: str, args: Any) -> None:
    T = SE3.Trans(0.3, -0.2, 0.5) * SE3.Rz(0.7) * SE3.Rx(-1.2)
    theirs = getattr(sg, name)(*args, pose=T, color=(0.2, 0.4, 0.6, 0.5))
    ours = sc.CollisionShape.from_dict(theirs.to_dict())
    assert type(ours).__name__ == name
    np.testing.assert_allclose(ours.T, T.A, atol=1e-12)
    np.testing.assert_allclose(ours.color, (0.2, 0.4, 0.6, 0.5), atol=1 / 255)
    assert ours.to_dict()["color"] == theirs.to_dict()["color"]
    for probe_at in (trans(2.0, 0.5, 0.0), trans(0.3, -0.1, 0.6) @ rot("y", 0.4)):
        sg_probe, probe = sg.Sphere(0.3, pose=SE3(probe_at)), sc.Sphere(0.3, pose=probe_at)
        d_theirs, p1_theirs, _ = theirs.closest_point(sg_probe, inf_dist=100.0)
        d, p1, _ = ours.closest_point(probe, 100.0)
        assert d == pytest.approx(d_theirs, abs=1e-9) and p1 is not None
        np.testing.assert_allclose(p1, p1_theirs, atol=1e-9)


def test_a_spatialgeometry_mesh_dict() -> None:
    theirs = sg.Mesh(str(BOX_STL), scale=[1.0, 2.0, 0.5], pose=SE3.Trans(0, 0, 1))
    ours = sc.CollisionShape.from_dict(theirs.to_dict())
    assert isinstance(ours, sc.Mesh) and ours.scale.tolist() == [1.0, 2.0, 0.5]
    assert ours.to_dict()["use_vertex_colors"] is True
    probe = sc.Sphere(0.1, pose=trans(0, 0, 3))
    d_theirs = theirs.closest_point(sg.Sphere(0.1, pose=SE3.Trans(0, 0, 3)), inf_dist=10)[0]
    assert ours.distance(probe) == pytest.approx(d_theirs, abs=1e-9)


# ----------------------------------------------------------------- random round trips


def leaf(kind: str, T: Any = None, **kwargs: Any) -> sc.CollisionShape:
    """A shape of each type, about 0.5 m across (a mesh from arrays)."""
    return _make(kind, 1.0, T, kwargs)


_POINTS = np.random.default_rng(3).uniform(-0.25, 0.25, (30, 3))


def _make(kind: str, s: float, T: Any, kwargs: dict[str, Any]) -> sc.CollisionShape:
    kwargs = {"pose": T, **kwargs}
    if kind == "Sphere":
        return sc.Sphere(0.25 * s, **kwargs)
    if kind == "Cuboid":
        return sc.Cuboid([0.5 * s, 0.3, 0.4], **kwargs)
    if kind == "Cylinder":
        return sc.Cylinder(0.2 * s, 0.5, **kwargs)
    if kind == "Capsule":
        return sc.Capsule(0.15, 0.4 * s, **kwargs)
    if kind == "Cone":
        return sc.Cone(0.25, 0.5 * s, **kwargs)
    if kind == "Ellipsoid":
        return sc.Ellipsoid([0.25 * s, 0.2, 0.15], **kwargs)
    if kind == "HalfSpace":
        return sc.HalfSpace([0.1, 0.2 * s, 1.0], -0.5 * s, **kwargs)
    if kind == "Mesh":
        return sc.Mesh.from_arrays(TETRA_VERTICES, TETRA_FACES, scale=[0.5, 0.5 * s, 0.5], **kwargs)
    if kind == "ConvexHull":
        return sc.ConvexHull(_POINTS * s, **kwargs)
    if kind == "OcTree":
        return sc.OcTree(_POINTS, 0.1 * s, **kwargs)
    raise AssertionError(kind)


colours = st.tuples(*[st.floats(0.0, 1.0)] * 4)
names = st.none() | st.text(max_size=8)


@st.composite
def leaves(draw: Any, collision: bool | None = None) -> sc.CollisionShape:
    kind = draw(st.sampled_from(LEAF_KINDS))
    shape = _make(
        kind,
        draw(st.floats(0.5, 2.0)),
        draw(rigid_poses(reach=0.6)),
        {
            "color": draw(colours),
            "name": draw(names),
            "collision": draw(st.booleans()) if collision is None else collision,
        },
    )
    if draw(st.booleans()):
        shape.v = draw(st.lists(st.floats(-10, 10), min_size=6, max_size=6))
    return shape


def groups(collision: bool | None = None) -> st.SearchStrategy[sc.CollisionShape]:
    """Random nested groups of random leaves (up to 3 levels)."""

    def nest(children: st.SearchStrategy[list[sc.CollisionShape]]) -> Any:
        return st.builds(
            lambda items, T, name, flag: sc.CollisionShapeGroup(
                items, pose=T, name=name, collision=flag
            ),
            children,
            rigid_poses(reach=0.6),
            names,
            st.booleans() if collision is None else st.just(collision),
        )

    return st.recursive(
        leaves(collision), lambda inner: nest(st.lists(inner, max_size=3)), max_leaves=6
    ).filter(lambda shape: shape._is_group)


PROBES = [
    sc.Sphere(0.3, pose=trans(0.4, 0.1, 0.2)),
    sc.Cuboid([0.4, 0.6, 0.2], pose=trans(-0.3, 0.2, 0.0) @ rot("x", 0.5)),
    sc.Capsule(0.1, 0.8, pose=trans(0.0, -0.5, 0.5) @ rot("y", 1.1)),
    sc.Sphere(0.2, pose=trans(3.0, 0.0, 0.0)),  # far from everything
]


def answers(shape: sc.CollisionShape) -> list[Any]:
    """Every query of ``shape`` against each probe (collision leaves only): ``iscollided``, the
    distance of ``closest_point`` and ``distance``, and the deepest depth of ``contacts``.

    Witness points and normals are left out: where two faces touch they are not unique, and a
    pose one rounding error away (a group placing its leaves by another product) moves them
    by up to 1e-4 (a cylinder's cap on a box face, seen here).
    """
    out: list[Any] = []
    leaves_in = [x for x in _leaves(shape) if x.collision]
    if not shape.collision or not leaves_in:
        return out
    kinds = {type(x).__name__ for x in leaves_in}
    for probe in PROBES:
        p = type(probe).__name__
        if any((k, p) in UNSUPPORTED_ALL for k in kinds):
            continue
        out.append(shape.iscollided(probe))
        if any((k, p) in UNSUPPORTED_DISTANCE for k in kinds):
            continue
        found = shape.contacts(probe, max_contacts=4)
        deepest = min(found.penetration_depth.tolist(), default=None)
        out.append((shape.closest_point(probe, 10.0)[0], shape.distance(probe), deepest))
    return out


def _leaves(shape: sc.CollisionShape) -> list[sc.CollisionShape]:
    if isinstance(shape, sc.CollisionShapeGroup):
        return shape.leaves()
    return [shape]


TOUCHING = 1e-7
"""Tolerance of the answers of two equal shapes in one process: near touching, Coal's distances
and witness points for two equal pairs can differ by about 1e-8 depending on the queries asked
before (a cylinder 1e-9 m from a box read 1.0e-9 and 9.3e-9 here; witness points of a cylinder
face on a box face 1.4e-9 apart)."""


def mismatch(got: Any, want: Any, tol: float, where: str = "") -> str | None:
    """Where ``got`` and ``want`` first differ (floats by more than ``tol``), or None."""
    if isinstance(want, float):
        if isinstance(got, float) and (got == want or abs(got - want) <= tol):
            return None
    elif isinstance(want, (list, tuple)):
        if type(got) is type(want) and len(got) == len(want):
            for i, (g, w) in enumerate(zip(got, want, strict=True)):
                found = mismatch(g, w, tol, f"{where}[{i}]")
                if found is not None:
                    return found
            return None
    elif got == want:
        return None
    return f"at {where or 'the top'}: {got!r} != {want!r}"


def close(got: Any, want: Any, tol: float) -> bool:
    """Equal structures, floats within ``tol``."""
    return mismatch(got, want, tol) is None


def test_close_compares_within_the_tolerance() -> None:
    assert close([1.0, (2.0, True)], [1.0 + 1e-10, (2.0, True)], 1e-9)
    assert not close([1.0], [1.0 + 1e-8], 1e-9)
    assert not close([1.0, 2.0], [1.0], 1.0) and not close((1.0,), [1.0], 1.0)
    assert mismatch([[1.0, "a"]], [[1.0, "b"]], 0.0) == "at [0][1]: 'a' != 'b'"


@settings(max_examples=50)
@given(leaves() | groups())
def test_complete_dicts_round_trip_exactly(shape: sc.CollisionShape) -> None:
    copy = sc.CollisionShape.from_dict(through_json(shape.to_dict(complete=True)))
    assert copy.equals(shape) and copy.to_dict(complete=True) == shape.to_dict(complete=True)
    for a, b in zip(_leaves(copy), _leaves(shape), strict=True):
        assert a.world_T.tolist() == b.world_T.tolist() and a.color == b.color
    assert close(answers(copy), answers(shape), TOUCHING)


@settings(max_examples=40)
@given(leaves(collision=True) | groups(collision=True))
def test_spatialgeometry_dicts_round_trip_to_rounding(shape: sc.CollisionShape) -> None:
    arrays = [x for x in _leaves(shape) if isinstance(x, sc.Mesh)]
    d = through_json(shape.to_dict())
    if arrays:  # a mesh made from arrays has no file to name: only a complete dict has it
        with pytest.raises(InvalidArgumentError, match="filename is None and there are no"):
            sc.CollisionShape.from_dict(d)
        return
    copy = sc.CollisionShape.from_dict(d)
    assert type(copy) is type(shape)
    for a, b in zip(_leaves(copy), _leaves(shape), strict=True):
        assert type(a) is type(b)
        np.testing.assert_allclose(a.world_T, b.world_T, atol=1e-12)
        np.testing.assert_allclose(a.color, b.color, atol=1 / 255)
        for param in b._size_params:
            assert np.array_equal(getattr(a, param), getattr(b, param)), param
    assert close(answers(copy), answers(shape), 1e-9)


def test_a_deep_nesting_with_a_file_mesh_round_trips_both_ways() -> None:
    mesh = sc.Mesh(BOX_STL, scale=0.3, pose=trans(0, 0, 0.2) @ rot("x", 0.3))
    inner = sc.CollisionShapeGroup([mesh, sc.Cone(0.2, 0.4)], pose=rot("z", 0.5))
    middle = sc.CollisionShapeGroup([inner, sc.Sphere(0.1)], pose=trans(0.1, 0.2, 0.3))
    top = sc.CollisionShapeGroup([middle], pose=rot("y", 0.2) @ trans(0.1, 0, 0), name="top")
    exact = sc.CollisionShapeGroup.from_dict(through_json(top.to_dict(complete=True)))
    assert exact.equals(top) and close(answers(exact), answers(top), TOUCHING)
    rounded = sc.CollisionShapeGroup.from_dict(through_json(top.to_dict()))
    assert rounded.name == "top" and len(rounded.leaves()) == 3
    assert close(answers(rounded), answers(top), 1e-9)


# ------------------------------------------------------------------------------ errors

GOOD = {"stype": "sphere", "radius": 0.5}


@pytest.mark.parametrize(
    ("d", "error", "match"),
    [
        (None, ShapeTypeError, r"d must be a dict describing a shape, got NoneType: None"),
        ([1, 2], ShapeTypeError, r"d must be a dict describing a shape, got list: \[1, 2\]"),
        ({"radius": 1.0}, InvalidArgumentError, r"d has no 'stype' key .* got keys \['radius'\]"),
        ({"stype": 3}, ShapeTypeError, r"d\['stype'\] must be a string, got 3"),
        ({"stype": "blob"}, InvalidArgumentError, r"d\['stype'\] must be one of \['capsule'.*"),
        ({"stype": "shape"}, InvalidArgumentError, r"d\['stype'\] must be one of .* got 'shape'"),
        ({"stype": "sphere"}, InvalidArgumentError, r"d\['radius'\] is missing: a 'sphere' dict"),
        (
            {"stype": "cylinder", "radius": 1.0},
            InvalidArgumentError,
            r"d\['length'\] is missing: a 'cylinder' dict needs 'length'",
        ),
        (
            {**GOOD, "radius": -1.0},
            InvalidShapeError,
            r"d \(a 'sphere' dict\): radius must be positive, got -1.0",
        ),
        (
            {**GOOD, "radius": "big"},
            ShapeTypeError,
            r"d \(a 'sphere' dict\): radius must be .*'big'",
        ),
        ({**GOOD, "t": [0, 0, 0]}, InvalidArgumentError, r"d\['q'\] is missing"),
        ({**GOOD, "q": [0, 0, 0, 1]}, InvalidArgumentError, r"d\['t'\] is missing"),
        (
            {**GOOD, "t": [0, 0], "q": [0, 0, 0, 1]},
            InvalidPoseError,
            r"d\['t'\] must be 3 finite numbers \(a translation\), got \[0, 0\]",
        ),
        (
            {**GOOD, "t": [0, 0, math.nan], "q": [0, 0, 0, 1]},
            InvalidPoseError,
            r"d\['t'\] must be 3 finite numbers",
        ),
        (
            {**GOOD, "t": [0, 0, 0], "q": [0, 0, 0, 2]},
            InvalidPoseError,
            r"d\['q'\] must be a unit quaternion \[x, y, z, w\] .* got \[0, 0, 0, 2\]",
        ),
        (
            {**GOOD, "t": [0, 0, 0], "q": [0, 0, 1]},
            InvalidPoseError,
            r"d\['q'\] must be a unit quaternion",
        ),
        (
            {**GOOD, "t": [0, 0, 0], "q": ["a", 0, 0, 1]},
            InvalidPoseError,
            r"d\['q'\] must be 4 real numbers",
        ),
        (
            {**GOOD, "t": [0, 0, 2e6], "q": [0, 0, 0, 1]},
            InvalidPoseError,
            r"the pose of d\['t'\] and d\['q'\] must be a rigid transform, but its translation",
        ),
        (
            {**GOOD, "T": np.diag([1.0, 1.0, -1.0, 1.0]).tolist()},
            InvalidPoseError,
            r"d\['T'\] must be a rigid transform, but its rotation has determinant -1",
        ),
        ({**GOOD, "T": [[1, 0], [0, 1]]}, InvalidPoseError, r"d\['T'\] must be a 4x4"),
        (
            {**GOOD, "color": "red"},
            ShapeTypeError,
            r"d\['color'\] must be an integer 0xRRGGBB \(as to_dict gives it\), got 'red'",
        ),
        ({**GOOD, "color": True}, ShapeTypeError, r"d\['color'\] must be an integer"),
        (
            {**GOOD, "color": 0x1000000},
            InvalidArgumentError,
            r"d\['color'\] must lie in \[0, 0xFFFFFF\], got 16777216",
        ),
        ({**GOOD, "color": -1}, InvalidArgumentError, r"d\['color'\] must lie in"),
        (
            {**GOOD, "color": 0, "opacity": 2.0},
            InvalidShapeError,
            r"d\['opacity'\] must lie in \[0, 1\], got 2.0",
        ),
        ({**GOOD, "color": 0, "opacity": "x"}, ShapeTypeError, r"d\['opacity'\] must be"),
        (
            {**GOOD, "opacity": 0.5},
            InvalidArgumentError,
            r"d\['opacity'\] is given without d\['color'\]",
        ),
        (
            {**GOOD, "rgba": [1, 0, 0]},
            InvalidShapeError,
            r"d\['rgba'\] must be 4 numbers in \[0, 1\], got \[1, 0, 0\]",
        ),
        (
            {**GOOD, "rgba": [255, 0, 0, 255]},
            InvalidShapeError,
            r"d\['rgba'\] must be 4 numbers in \[0, 1\]",
        ),
        ({**GOOD, "rgba": [0, 0, math.nan, 1]}, InvalidShapeError, r"d\['rgba'\] must be 4"),
        ({**GOOD, "rgba": "red"}, ShapeTypeError, r"d\['rgba'\] must be 4 real numbers"),
        (
            {**GOOD, "name": 5},
            ShapeTypeError,
            r"d \(a 'sphere' dict\): name must be a string or None, got 5",
        ),
        (
            {**GOOD, "collision": 1},
            ShapeTypeError,
            r"d \(a 'sphere' dict\): collision must be True or False, got 1",
        ),
        ({**GOOD, "v": [1, 2]}, InvalidShapeError, r"v must be 6 finite numbers, got \[1, 2\]"),
        (
            {"stype": "group", "elements": [GOOD, {"stype": "sphere", "radius": 0.0}]},
            InvalidShapeError,
            r"^d\['elements'\]\[1\] \(a 'sphere' dict\): radius must be positive, got 0.0",
        ),
        (
            {"stype": "group", "elements": [{"stype": "group", "elements": [None]}]},
            ShapeTypeError,
            r"^d\['elements'\]\[0\]\['elements'\]\[0\] must be a dict describing a shape",
        ),
        (
            {"stype": "group", "elements": [{"stype": "sphere", "radius": 1, "T": 1}]},
            InvalidPoseError,
            r"^d\['elements'\]\[0\]\['T'\] must be a 4x4",
        ),
        ({"stype": "group"}, InvalidArgumentError, r"d\['elements'\] is missing"),
        (
            {"stype": "group", "elements": GOOD},
            ShapeTypeError,
            r"d\['elements'\] must be a list of shape dicts, got dict",
        ),
        (
            {"stype": "mesh", "scale": [1, 1, 1], "filename": None},
            InvalidArgumentError,
            r"d \(a 'mesh' dict\): filename is None and there are no vertices and faces",
        ),
        ({"stype": "mesh", "filename": str(BOX_STL)}, InvalidArgumentError, r"d\['scale'\] is"),
        (
            {
                "stype": "mesh",
                "scale": 1,
                "filename": str(BOX_STL),
                "vertices": TETRA_VERTICES,
                "faces": [[0, 1, 2]],
            },
            InvalidArgumentError,
            r"^d \(a 'mesh' dict\): a filename and vertices or faces are both given: give only "
            r"what the mesh is made from \(got filename '.*box\.stl'\)$",
        ),
        (
            {"stype": "mesh", "scale": 1, "vertices": TETRA_VERTICES},
            InvalidArgumentError,
            r"d\['faces'\] is missing: a 'mesh' dict needs 'faces'",
        ),
        (
            {"stype": "mesh", "scale": 1, "vertices": TETRA_VERTICES, "faces": [[0, 1, 9]]},
            InvalidMeshError,
            r"d \(a 'mesh' dict\): .*9",
        ),
        (
            {"stype": "mesh", "scale": 1, "filename": "/no/such/file.stl"},
            MeshFileNotFoundError,
            r"d \(a 'mesh' dict\): .*/no/such/file.stl",
        ),
        (
            {"stype": "mesh", "scale": 1, "filename": str(BOX_STL), "use_vertex_colors": "yes"},
            ShapeTypeError,
            r"d \(a 'mesh' dict\): use_vertex_colors must be True or False, got 'yes'",
        ),
        (
            {"stype": "octree", "points": [[0, 0, 0]], "resolution": -1},
            InvalidShapeError,
            r"d \(a 'octree' dict\): resolution must be positive",
        ),
        (
            {"stype": "convex_hull", "points": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]},
            InvalidMeshError,
            r"d \(a 'convex_hull' dict\): points must include 4 points that are not coplanar",
        ),
        (
            {"stype": "halfspace", "normal": [0, 0, 0], "offset": 0},
            InvalidShapeError,
            r"d \(a 'halfspace' dict\): normal must be a non-zero vector",
        ),
    ],
)
def test_bad_dicts_raise_naming_the_key_and_the_value(d: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        sc.CollisionShape.from_dict(d)


def test_errors_are_value_or_type_errors_and_complete_is_checked() -> None:
    with pytest.raises(ValueError, match="radius must be positive"):
        sc.CollisionShape.from_dict({"stype": "sphere", "radius": 0})
    with pytest.raises(TypeError, match="must be a dict"):
        sc.CollisionShape.from_dict("sphere")
    with pytest.raises(ShapeTypeError, match="complete must be True or False, got 'yes'"):
        sc.Sphere(1.0).to_dict(complete="yes")  # type: ignore[arg-type]
    with pytest.raises(ShapeTypeError, match="complete must be True or False, got 1"):
        sc.CollisionShapeGroup().to_dict(complete=1)  # type: ignore[arg-type]


def test_unknown_keys_are_ignored_and_the_pose_defaults_to_the_identity() -> None:
    ball = sc.CollisionShape.from_dict({"stype": "sphere", "radius": 0.5, "extra": [1, 2]})
    assert ball.T.tolist() == np.eye(4).tolist() and ball.color == (0.3, 0.3, 0.3, 1.0)
    # a quaternion of norm 1 to within 1e-6 is normalised
    q = [0.0, 0.0, math.sin(0.25) * (1 + 5e-7), math.cos(0.25) * (1 + 5e-7)]
    turned = sc.CollisionShape.from_dict({**GOOD, "t": [1, 2, 3], "q": q})
    want = pose(quaternion_matrix(math.cos(0.25), 0.0, 0.0, math.sin(0.25)), (1, 2, 3))
    np.testing.assert_allclose(turned.T, want, atol=1e-15)


# ----------------------------------------------------------------------------- pickling


def pickled(value: Any) -> Any:
    return pickle.loads(pickle.dumps(value))


@pytest.mark.parametrize("kind", LEAF_KINDS)
def test_every_shape_type_pickles_with_equal_answers(kind: str) -> None:
    shape = leaf(kind, trans(0.1, 0.2, 0.0) @ rot("z", 0.4), name="x", color=(1, 0, 0, 0.5))
    copy = pickled(shape)
    assert copy is not shape and copy.equals(shape)
    found = mismatch(answers(copy), answers(shape), TOUCHING)
    assert found is None, found


@settings(max_examples=20)
@given(groups())
def test_nested_groups_pickle_with_equal_answers(group: sc.CollisionShape) -> None:
    copy = pickled(group)
    assert copy.equals(group)
    for a, b in zip(_leaves(copy), _leaves(group), strict=True):
        np.testing.assert_allclose(a.world_T, b.world_T, atol=1e-15)
    assert close(answers(copy), answers(group), 1e-9)


def test_leaves_pickled_before_their_groups_are_placed_where_they_were() -> None:
    # Found here: with the leaves first in the pickle, pickle restored them after their group
    # but before the group above it; neither group could place them, and their Coal
    # transforms stayed at the identity (a box 0.1 m off: -0.15 for a true -0.2498).
    leaves_in = [leaf(kind, trans(0.1, 0, 0)) for kind in ("Sphere", "Cuboid", "Cylinder")]
    inner = sc.CollisionShapeGroup(leaves_in, pose=rot("x", 0.3))
    outer = sc.CollisionShapeGroup([inner, sc.Cone(0.2, 0.4)], pose=trans(0, 0.1, 0))
    want = [answers(x) for x in leaves_in]
    for payload in ((leaves_in, outer), (outer, leaves_in), (inner, leaves_in, outer)):
        loaded = pickled(payload)
        copies = next(p for p in loaded if isinstance(p, list))
        found = mismatch([answers(x) for x in copies], want, TOUCHING)
        assert found is None, found
        probe = sc.Sphere(0.05, pose=copies[1].world_T)  # at the box's centre: deep inside
        assert copies[1].iscollided(probe) and leaves_in[1].iscollided(probe)


def scene_with_worlds() -> sc.Scene:
    """A floor (global) and two worlds of a box 0.05 m into the floor and a ball on it: the
    ball sinks 0.05 m into the box in world 0 and floats 0.2 m above it in world 1."""
    scene = sc.Scene()
    scene.add(sc.HalfSpace([0, 0, 1], 0.0), "floor")
    for k, gap in enumerate((-0.05, 0.2)):
        w = scene.add_world()
        scene.add(sc.Cuboid([1, 1, 1], pose=trans(3 * k, 0, 0.45)), f"box{k}", world=w)
        scene.add(sc.Sphere(0.2, pose=trans(3 * k, 0, 1.15 + gap)), f"ball{k}", world=w)
    return scene


def scene_answers(scene: sc.Scene) -> list[Any]:
    probe = sc.Capsule(0.1, 0.5, pose=trans(0.4, 0, 1.0))
    d, name, p1, p2 = scene.distance(probe)
    found = scene.contacts()
    return [
        scene.names,
        [scene.world_of(n) for n in scene.names],
        scene.collisions(),
        scene.collisions_per_world(),
        scene.in_collision_per_world().tolist(),
        scene.collide(probe),
        (d, name, None if p1 is None else p1.tolist(), None if p2 is None else p2.tolist()),
        (found.penetration_depth.tolist(), found.normal.tolist(), found.world.tolist()),
    ]


def test_a_scene_with_worlds_pickles_with_equal_answers() -> None:
    scene = scene_with_worlds()
    want = scene_answers(scene)
    assert want[2] == [("floor", "box0"), ("floor", "box1"), ("box0", "ball0")]  # by hand
    copy = pickled(scene)
    assert copy.worlds == 2 and close(scene_answers(copy), want, TOUCHING)
    copy["ball1"].T = trans(3, 0, 1.1)  # the copy moves on its own
    assert ("box1", "ball1") in copy.collisions() and ("box1", "ball1") not in scene.collisions()


@pytest.fixture(scope="module")
def robots() -> dict[str, sc.RobotModel]:
    folder = meshes.path("panda")
    urdf, srdf = folder / "panda.urdf", folder / "panda.srdf"
    return {
        "mesh": sc.RobotModel.from_urdf(urdf, srdf=srdf, geometry="mesh"),
        "spheres": sc.RobotModel.from_urdf(urdf, srdf=srdf, geometry="spheres"),
    }


def robot_answers(robot: sc.RobotModel, scene: sc.Scene) -> list[Any]:
    Q = robot.sample(12, np.random.default_rng(5))
    out: list[Any] = [robot.in_collision_many(Q, scene).tolist()]
    for q in Q[:4]:
        d = robot.distance(q, scene)
        out += [
            robot.self_collision(q),
            robot.in_collision(q, scene),
            robot.colliding_pairs(q, scene),
            (d.distance, d.part, d.other),
        ]
    out.append(robot.check_motion(Q[0], Q[1], scene))
    return out


@pytest.mark.parametrize("geometry", ["mesh", "spheres"])
def test_robots_pickle_with_equal_answers(robots: dict[str, sc.RobotModel], geometry: str) -> None:
    robot = robots[geometry]
    scene = sc.Scene()
    scene.add(sc.Cuboid([0.4, 0.4, 0.4], pose=trans(0.5, 0, 0.4)), "box")
    scene.add(sc.Sphere(0.15, pose=trans(0, 0.5, 0.6)), "ball")
    want = robot_answers(robot, scene)
    assert any(want[0]) and not all(want[0])  # some configurations collide, some do not
    copy, scene_copy = pickled((robot, scene))
    assert type(copy) is type(robot) and copy.geometry == robot.geometry
    assert close(robot_answers(copy, scene_copy), want, 1e-9)


def sensor_world() -> dict[str, Any]:
    """A table, a box resting 0.01 m into it and a wall, read by a sensor of each kind."""
    scene = sc.Scene()
    table = sc.Cuboid([4, 4, 1], pose=trans(0, 0, -0.5))
    box = sc.Cuboid([1, 1, 1], pose=trans(0, 0, 0.49))
    scene.add(table, "table")
    scene.add(box, "box")
    scene.add(sc.Cuboid([1, 4, 4], pose=trans(3, 0, 2)), "wall")
    on_box = ObjectContactSensor(box)
    matrix = MatrixContactSensor(scene, "box", counterparts="*")
    named = NamedContactSensor(scene, ["box"])
    hub = SensorHub(scene, [on_box, matrix, named], force_model=PenaltyForce(1e4))
    return {"scene": scene, "box": box, "sensors": (on_box, matrix, named), "hub": hub}


def readings(world: dict[str, Any]) -> list[Any]:
    on_box, matrix, named = world["sensors"]
    scene = world["scene"]
    return [
        on_box.in_contact,
        on_box.contact_time,
        on_box.force.tolist(),
        [scene.name_of(p) for p in on_box.partners],
        matrix.total_force.tolist(),
        matrix.force_matrix.tolist(),
        [(m.collision1, m.collision2, m.time, m.depths.tolist()) for m in named.contacts()],
    ]


def test_every_sensor_and_its_hub_pickle_and_read_the_same() -> None:
    world = sensor_world()
    world["hub"].step(0.01)  # in contact: timers and forces running
    copy = pickled(world)
    assert copy["hub"].scene is copy["scene"] and copy["sensors"][0].shape is copy["box"]
    assert close(readings(copy), readings(world), 1e-12)
    for w in (world, copy):  # the next steps read the same in both
        w["box"].T = trans(0.2, 0, 0.48)
        w["hub"].step(0.01)
        w["hub"].step(0.02)
    assert close(readings(copy), readings(world), 1e-12)
    assert readings(world)[1] == pytest.approx(0.04)  # contact time over three steps
    assert pickled(PenaltyForce(1e4, damping=2.0)).damping == 2.0
    message = world["sensors"][2].contacts()  # Gazebo's messages, with their wrenches
    (loaded,) = pickled(message)
    (sent,) = message
    assert (loaded.collision1, loaded.collision2, loaded.time) == ("table", "box", 0.04)
    assert loaded.depths.tolist() == sent.depths.tolist()
    assert loaded.wrenches.body_2_force.tolist() == sent.wrenches.body_2_force.tolist()


def test_contact_records_pickle() -> None:
    a, b = sc.Sphere(0.5), sc.Sphere(0.5, pose=trans(0.8))
    found = a.contacts(b)
    (c,) = found
    assert c.penetration_depth == pytest.approx(-0.2)  # by hand: 0.8 - 1.0
    c2, report, found2, a2 = pickled((c, c.report(a), found, a))
    assert c2.o1 is a2 and c2.penetration_depth == c.penetration_depth
    assert c2.normal.tolist() == c.normal.tolist() == [1.0, 0.0, 0.0]
    assert report.depth == pytest.approx(0.2) and report.shape is a2
    assert found2.normal.tolist() == found.normal.tolist() and found2[0].o1 is a2
    scene = scene_with_worlds()
    world_contacts = scene.contacts()
    loaded = pickled(world_contacts)
    assert loaded.penetration_depth.tolist() == world_contacts.penetration_depth.tolist()
    assert loaded.world.tolist() == world_contacts.world.tolist() == [0, 1, 0]


def test_everything_loads_in_a_fresh_process(
    tmp_path: Path, robots: dict[str, sc.RobotModel]
) -> None:
    shapes = [leaf(kind, trans(0.1, 0, 0)) for kind in LEAF_KINDS]
    group = sc.CollisionShapeGroup(
        [sc.CollisionShapeGroup(shapes[:3], pose=rot("x", 0.3)), shapes[4]]
    )
    world = sensor_world()
    world["hub"].step(0.01)
    scene = scene_with_worlds()
    payload = {
        "shapes": shapes,
        "group": group,
        "scene": scene,
        "robot": robots["mesh"],
        "world": {k: world[k] for k in ("scene", "sensors", "hub")},
    }
    path = tmp_path / "all.pickle"
    path.write_bytes(pickle.dumps(payload))
    code = (
        "import json, pickle, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "import test_serialization as t\n"
        f"p = pickle.loads(open({str(path)!r}, 'rb').read())\n"
        "q = p['robot'].neutral\n"
        "print(json.dumps([[t.answers(s) for s in p['shapes']], t.answers(p['group']),\n"
        "    t.scene_answers(p['scene']), p['robot'].self_collision(q), t.readings(p['world'])]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    want = [
        [answers(s) for s in shapes],
        answers(group),
        scene_answers(scene),
        robots["mesh"].self_collision(robots["mesh"].neutral),
        readings(world),
    ]
    found = mismatch(json.loads(done.stdout), json.loads(json.dumps(want)), TOUCHING)
    assert found is None, found
