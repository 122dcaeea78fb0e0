"""Primitive shapes: construction, sizes (and rebuilding on resize), bad input, pickling, repr."""

from __future__ import annotations

import math
import pickle
import re
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import trimesh
from conftest import HULL_POINTS, LEAF_KINDS, make_leaf, near, rot, trans

import spatialcontact as sc

# -------------------------------------------------------------------------- construction


def test_sizes_are_stored_as_given() -> None:
    assert sc.Sphere(2).radius == 2.0 and isinstance(sc.Sphere(2).radius, float)
    assert sc.Sphere(np.float32(0.5)).radius == 0.5
    c = sc.Cylinder(0.5, 2.0)
    assert (c.radius, c.length) == (0.5, 2.0)
    assert sc.Cuboid([1, 2, 3]).scale.tolist() == [1.0, 2.0, 3.0]
    assert sc.Ellipsoid((1, 2, 3)).radii.tolist() == [1.0, 2.0, 3.0]
    assert sc.Capsule(1, 2).stype == "capsule" and sc.Cone(1, 2).stype == "cone"


def test_cuboid_none_is_a_unit_cube() -> None:
    assert sc.Cuboid().scale.tolist() == [1.0, 1.0, 1.0]
    assert sc.Cuboid(None).scale.tolist() == [1.0, 1.0, 1.0]
    c = sc.Cuboid([2, 2, 2])
    c.scale = None
    assert c.scale.tolist() == [1.0, 1.0, 1.0]
    # a unit cube's face is 0.5 from its centre: a unit sphere at x = 2 is 2 - 0.5 - 1 = 0.5 away
    assert c.distance(sc.Sphere(1.0, pose=trans(2.0))) == pytest.approx(0.5, abs=1e-9)


def test_box_is_a_deprecated_cuboid() -> None:
    with pytest.warns(FutureWarning, match=r"^Box is deprecated, use Cuboid instead$"):
        b = sc.Box([1, 2, 3])
    assert isinstance(b, sc.Cuboid) and b.scale.tolist() == [1.0, 2.0, 3.0]


def test_halfspace_normal_is_normalised_with_its_offset() -> None:
    # {x : (0, 0, 2) . x <= 2} is {z <= 1}: normal (0, 0, 1), offset 1.
    h = sc.HalfSpace([0, 0, 2], 2.0)
    assert h.normal.tolist() == [0.0, 0.0, 1.0] and h.offset == 1.0
    # a sphere of radius 0.5 at z = 3 is 3 - 1 - 0.5 = 1.5 above it
    assert h.distance(sc.Sphere(0.5, pose=trans(0, 0, 3))) == pytest.approx(1.5, abs=1e-12)
    default = sc.HalfSpace()
    assert default.normal.tolist() == [0.0, 0.0, 1.0] and default.offset == 0.0


@pytest.mark.parametrize("length", [1e-12, 1e-5, 1e150, 1e200, 1e308])
def test_a_halfspace_normal_of_any_length_gives_the_same_half_space(length: float) -> None:
    # Its length overflowed above 1.3e154 (squared), which left a zero normal: a sphere 1.9 m
    # above z = 0 then read -0.1.
    h = sc.HalfSpace([0.0, 0.0, length], length * 0.5)  # {z <= 0.5}
    assert h.normal.tolist() == [0.0, 0.0, 1.0]
    assert h.offset == pytest.approx(0.5, rel=1e-15)
    ball = sc.Sphere(0.1, pose=trans(0, 0, 2))
    assert h.distance(ball) == pytest.approx(1.4, abs=1e-12)
    assert not h.iscollided(ball)
    h.normal = [length, length, 0.0]
    np.testing.assert_allclose(h.normal, [2**-0.5, 2**-0.5, 0.0], rtol=1e-15)


def test_size_arrays_are_read_only_copies() -> None:
    given = np.array([1.0, 2.0, 3.0])
    c = sc.Cuboid(given)
    given[0] = 9.0
    assert c.scale[0] == 1.0
    with pytest.raises(ValueError, match=r"read-only"):
        c.scale[0] = 5.0
    e = sc.Ellipsoid(given)
    with pytest.raises(ValueError, match=r"read-only"):
        e.radii[1] = 5.0
    h = sc.HalfSpace(given, 1.0)
    with pytest.raises(ValueError, match=r"read-only"):
        h.normal[1] = 5.0


def test_collision_false_shapes_have_no_geometry() -> None:
    s = sc.Sphere(1.0, collision=False)
    assert s.collision is False
    with pytest.raises(sc.CollisionDisabledError, match=r"collision=False"):
        _ = s.geometry
    s.radius = 2.0  # resizing a described-only shape is fine
    assert s.radius == 2.0


def test_name_color_opacity_and_velocity() -> None:
    s = sc.Sphere(1.0, name="ball", color="red")
    assert s.name == "ball" and s.color == (1.0, 0.0, 0.0, 1.0)
    s.color = [0, 255, 0]  # 0-255 is scaled down
    assert s.color == (0.0, 1.0, 0.0, 1.0)
    s.color = (0.0, 0.0, 1.0, 0.5)
    assert s.opacity == 0.5
    s.opacity = 255
    assert s.opacity == 1.0
    s.v = [1, 2, 3, 4, 5, 6]
    assert s.v.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"color": "notacolour"}, sc.InvalidShapeError, r"^color must be .* got 'notacolour'$"),
        ({"color": [1, 2]}, sc.InvalidShapeError, r"^color must be 3 or 4 .* got \[1, 2\]$"),
        ({"color": [300, 0, 0]}, sc.InvalidShapeError, r"\[0, 255\], got \[300, 0, 0\]$"),
        ({"color": [-1, 0, 0]}, sc.InvalidShapeError, r"non-negative numbers, got \[-1, 0, 0\]$"),
        ({"collision": 1}, sc.ShapeTypeError, r"^collision must be True or False, got 1$"),
        ({"name": 3}, sc.ShapeTypeError, r"^name must be a string or None, got 3$"),
    ],
)
def test_bad_common_arguments(kwargs: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        sc.Sphere(1.0, **kwargs)


def test_bad_appearance_set_keeps_the_old_value() -> None:
    s = sc.Sphere(1.0, color="blue")
    with pytest.raises(sc.InvalidShapeError, match=r"^color must be .* got 'nope'$"):
        s.color = "nope"
    assert s.color == (0.0, 0.0, 1.0, 1.0)
    with pytest.raises(sc.InvalidShapeError, match=r"^opacity must lie in .* got -0\.5$"):
        s.opacity = -0.5
    with pytest.raises(sc.ShapeTypeError, match=r"^opacity must be a real number, got 'x'$"):
        s.opacity = "x"  # type: ignore[assignment]
    assert s.opacity == 1.0
    with pytest.raises(sc.InvalidShapeError, match=r"^v must be 6 finite numbers, got \[1, 2\]$"):
        s.v = [1, 2]
    assert s.v.tolist() == [0.0] * 6


# ------------------------------------------------------------------- resizing rebuilds


def _box_mesh(**kwargs: Any) -> sc.Mesh:
    """A closed triangle mesh of the cube [-1, 1]^3."""
    return sc.Mesh.from_trimesh(trimesh.creation.box(extents=[2.0, 2.0, 2.0]), **kwargs)


def _cube_points(half: float) -> np.ndarray:
    return np.array(
        [[x, y, z] for x in (-half, half) for y in (-half, half) for z in (-half, half)]
    )


# (make shape, parameter, new value, probe centre, distance before, distance after); the probe
# is a sphere of radius 0.25. Each distance is written out by hand.
RESIZES: list[Any] = [
    # centre 3 away: 3 - 0.5 - 0.25 = 2.25; radius 1: 3 - 1 - 0.25 = 1.75
    (lambda: sc.Sphere(0.5), "radius", 1.0, (3, 0, 0), 2.25, 1.75),
    # face at x = 0.5: 3 - 0.5 - 0.25 = 2.25; x side 3, face at 1.5: 3 - 1.5 - 0.25 = 1.25
    (lambda: sc.Cuboid([1, 1, 1]), "scale", [3, 1, 1], (3, 0, 0), 2.25, 1.25),
    # side at r: 3 - 0.5 - 0.25 = 2.25 -> 3 - 1 - 0.25 = 1.75
    (lambda: sc.Cylinder(0.5, 2.0), "radius", 1.0, (3, 0, 0), 2.25, 1.75),
    # cap at length / 2: 3 - 1 - 0.25 = 1.75 -> 3 - 2 - 0.25 = 0.75
    (lambda: sc.Cylinder(0.5, 2.0), "length", 4.0, (0, 0, 3), 1.75, 0.75),
    # side at r: 2.25 -> 1.75
    (lambda: sc.Capsule(0.5, 2.0), "radius", 1.0, (3, 0, 0), 2.25, 1.75),
    # top of the cap at length / 2 + r: 3 - 1.5 - 0.25 = 1.25 -> 3 - 2.5 - 0.25 = 0.25
    (lambda: sc.Capsule(0.5, 2.0), "length", 4.0, (0, 0, 3), 1.25, 0.25),
    # the base rim (r, 0, -1) is nearest to (3, 0, -1): 3 - 0.5 - 0.25 = 2.25 -> 1.75
    (lambda: sc.Cone(0.5, 2.0), "radius", 1.0, (3, 0, -1), 2.25, 1.75),
    # the apex at z = length / 2: 3 - 1 - 0.25 = 1.75 -> 3 - 2 - 0.25 = 0.75
    (lambda: sc.Cone(0.5, 2.0), "length", 4.0, (0, 0, 3), 1.75, 0.75),
    # semi-axis along x: 3 - 0.5 - 0.25 = 2.25 -> 3 - 2 - 0.25 = 0.75
    (lambda: sc.Ellipsoid([0.5, 0.5, 0.5]), "radii", [2, 0.5, 0.5], (3, 0, 0), 2.25, 0.75),
    # plane z = 0: 3 - 0.25 = 2.75; plane x = 0 (the probe's centre is on it): 0 - 0.25
    (lambda: sc.HalfSpace([0, 0, 1], 0.0), "normal", [1, 0, 0], (0, 0, 3), 2.75, -0.25),
    # plane z = 1: 3 - 1 - 0.25 = 1.75
    (lambda: sc.HalfSpace([0, 0, 1], 0.0), "offset", 1.0, (0, 0, 3), 2.75, 1.75),
    # hull of the cube [-0.5, 0.5]^3 -> [-1, 1]^3: 2.25 -> 1.75
    (lambda: sc.ConvexHull(_cube_points(0.5)), "points", _cube_points(1.0), (3, 0, 0), 2.25, 1.75),
    # cell [0, 0.1]^3 -> [1, 1.1] x [0, 0.1]^2: 3 - 0.1 - 0.25 = 2.65 -> 3 - 1.1 - 0.25 = 1.65
    (
        lambda: sc.OcTree([[0.05, 0.05, 0.05]], 0.1),
        "points",
        [[1.05, 0.05, 0.05]],
        (3, 0.05, 0.05),
        2.65,
        1.65,
    ),
    # cells are aligned on multiples of the resolution: [0, 0.1]^3 -> [0, 0.2]^3: 2.65 -> 2.55
    (lambda: sc.OcTree([[0.05, 0.05, 0.05]], 0.1), "resolution", 0.2, (3, 0.05, 0.05), 2.65, 2.55),
    # mesh of [-1, 1]^3: 3 - 1 - 0.25 = 1.75; scale 0.5: 3 - 0.5 - 0.25 = 2.25
    (_box_mesh, "scale", 0.5, (3, 0, 0), 1.75, 2.25),
    # scale x by 2: 3 - 2 - 0.25 = 0.75
    (_box_mesh, "scale", [2, 1, 1], (3, 0, 0), 1.75, 0.75),
]
RESIZE_IDS = [f"{i}-{r[1]}" for i, r in enumerate(RESIZES)]


@pytest.mark.parametrize(
    ("make", "param", "value", "at", "before", "after"), RESIZES, ids=RESIZE_IDS
)
def test_resizing_rebuilds_the_geometry(
    make: Callable[[], sc.CollisionShape],
    param: str,
    value: Any,
    at: tuple[float, float, float],
    before: float,
    after: float,
) -> None:
    shape = make()
    probe = sc.Sphere(0.25, pose=trans(*at))
    # Query in both orders and with every query first, so that Coal state is cached.
    assert shape.distance(probe) == pytest.approx(before, abs=1e-6)
    assert probe.closest_point(shape, inf_dist=10)[0] == pytest.approx(before, abs=1e-6)
    assert shape.closest_point(probe, inf_dist=10)[0] == pytest.approx(before, abs=1e-6)
    assert not shape.iscollided(probe) and not probe.iscollided(shape)
    old_geometry = shape.geometry
    setattr(shape, param, value)
    assert shape.geometry is not old_geometry
    assert np.allclose(
        getattr(shape, param), value / np.linalg.norm(value) if param == "normal" else value
    )
    assert shape.distance(probe) == pytest.approx(after, abs=1e-6)
    assert shape.closest_point(probe, inf_dist=10)[0] == pytest.approx(after, abs=1e-6)
    assert probe.closest_point(shape, inf_dist=10)[0] == pytest.approx(after, abs=1e-6)
    assert shape.iscollided(probe) == (after < 0) == probe.iscollided(shape)
    assert (shape & probe) == (after < 0)


@pytest.mark.parametrize("first", ["shape", "probe"])
def test_growing_into_a_cached_partner_collides(first: str) -> None:
    # A sphere of radius 0.5 and a probe of radius 0.25 at x = 2: 2 - 0.75 = 1.25 apart, then
    # radius 2: 2 - 2.25 = -0.25.
    s, probe = sc.Sphere(0.5), sc.Sphere(0.25, pose=trans(2.0))
    a, b = (s, probe) if first == "shape" else (probe, s)
    assert not a.iscollided(b)
    assert a.closest_point(b, inf_dist=5)[0] == pytest.approx(1.25)
    assert len(a.contacts(b)) == 0
    s.radius = 2.0
    assert a.iscollided(b) and b.iscollided(a)
    assert a.closest_point(b)[0] == pytest.approx(-0.25)
    assert a.distance(b) == pytest.approx(-0.25)
    assert a.contacts(b)[0].penetration_depth == pytest.approx(-0.25)


def test_resizing_a_shape_in_a_group_updates_the_group() -> None:
    # Group bounds are cached; a resize must refresh them. Sphere 0.5 at x = 1 in a group at
    # x = 1: centre at 2, probe at 5 radius 0.5: 5 - 2 - 1 = 2; radius 3: 5 - 2 - 3.5 = -0.5.
    s = sc.Sphere(0.5, pose=trans(1.0))
    g = sc.CollisionShapeGroup([s], pose=trans(1.0))
    probe = sc.Sphere(0.5, pose=trans(5.0))
    assert not g.iscollided(probe) and g.distance(probe) == pytest.approx(2.0)
    s.radius = 3.0
    assert g.iscollided(probe) and probe.iscollided(g)
    assert g.distance(probe) == pytest.approx(-0.5)
    assert probe.closest_point(g)[0] == pytest.approx(-0.5)


# --------------------------------------------------------------------------- bad sizes

_SCALAR_BAD: list[Any] = [
    (0, sc.InvalidShapeError, "must be positive, got 0"),
    (-1.5, sc.InvalidShapeError, r"must be positive, got -1\.5"),
    (math.nan, sc.InvalidShapeError, "must be finite, got nan"),
    (math.inf, sc.InvalidShapeError, "must be finite, got inf"),
    ("1", sc.ShapeTypeError, "must be a real number, got '1'"),
    (None, sc.ShapeTypeError, "must be a real number, got None"),
    (True, sc.ShapeTypeError, "must be a real number, got True"),
    ([1.0], sc.ShapeTypeError, r"must be a real number, got \[1\.0\]"),
]
_VECTOR_BAD: list[Any] = [
    ([1, 0, 1], sc.InvalidShapeError, r"must be positive, got \[1, 0, 1\]"),
    ([1, -2, 1], sc.InvalidShapeError, r"must be positive, got \[1, -2, 1\]"),
    ([1, math.nan, 1], sc.InvalidShapeError, r"must be finite, got \[1, nan, 1\]"),
    ([1, 1, math.inf], sc.InvalidShapeError, r"must be finite, got \[1, 1, inf\]"),
    ([1, 1], sc.InvalidShapeError, r"must hold exactly 3 values, got shape \(2,\): \[1, 1\]"),
    ([1, 1, 1, 1], sc.InvalidShapeError, r"must hold exactly 3 values, got shape \(4,\)"),
    ([[1, 1, 1]], sc.InvalidShapeError, r"must hold exactly 3 values, got shape \(1, 3\)"),
    ("abc", sc.ShapeTypeError, "must be 3 real numbers, got 'abc'"),
    (["a", 1, 1], sc.ShapeTypeError, r"must be 3 real numbers, got \['a', 1, 1\]"),
]

# (shape factory, parameter, bad values); each shape is made with the parameter good, probed by
# a sphere of radius 0.25 at x = 3 (z = 3 for the half-space), then given the bad value.
_SIZED: list[Any] = [
    (lambda **k: sc.Sphere(k.get("radius", 0.5)), "radius", _SCALAR_BAD),
    (lambda **k: sc.Cylinder(k.get("radius", 0.5), k.get("length", 1.0)), "radius", _SCALAR_BAD),
    (lambda **k: sc.Cylinder(k.get("radius", 0.5), k.get("length", 1.0)), "length", _SCALAR_BAD),
    (lambda **k: sc.Capsule(k.get("radius", 0.5), k.get("length", 1.0)), "radius", _SCALAR_BAD),
    (lambda **k: sc.Capsule(k.get("radius", 0.5), k.get("length", 1.0)), "length", _SCALAR_BAD),
    (lambda **k: sc.Cone(k.get("radius", 0.5), k.get("length", 1.0)), "radius", _SCALAR_BAD),
    (lambda **k: sc.Cone(k.get("radius", 0.5), k.get("length", 1.0)), "length", _SCALAR_BAD),
    (lambda **k: sc.Cuboid(k.get("scale", [1, 1, 1])), "scale", _VECTOR_BAD),
    (lambda **k: sc.Ellipsoid(k.get("radii", [0.5, 0.5, 0.5])), "radii", _VECTOR_BAD),
    (
        lambda **k: sc.OcTree([[0.05, 0.05, 0.05]], k.get("resolution", 0.1)),
        "resolution",
        _SCALAR_BAD,
    ),
]
BAD_SIZES = [
    pytest.param(make, param, value, error, message, id=f"{i}-{param}-{j}")
    for i, (make, param, bads) in enumerate(_SIZED)
    for j, (value, error, message) in enumerate(bads)
]


@pytest.mark.parametrize(("make", "param", "value", "error", "message"), BAD_SIZES)
def test_bad_size_in_the_constructor(
    make: Callable[..., sc.CollisionShape], param: str, value: Any, error: type, message: str
) -> None:
    with pytest.raises(error, match=f"^{param} {message}"):
        make(**{param: value})


@pytest.mark.parametrize(("make", "param", "value", "error", "message"), BAD_SIZES)
def test_bad_size_set_keeps_the_old_size_and_answers(
    make: Callable[..., sc.CollisionShape], param: str, value: Any, error: type, message: str
) -> None:
    shape = make()
    probe = sc.Sphere(0.25, pose=trans(3.0))
    old_value = np.array(getattr(shape, param))
    d, p1, p2 = shape.closest_point(probe, inf_dist=10)
    with pytest.raises(error, match=f"^{param} {message}"):
        setattr(shape, param, value)
    assert np.array_equal(getattr(shape, param), old_value)
    assert shape.closest_point(probe, inf_dist=10) == (d, pytest.approx(p1), pytest.approx(p2))
    assert probe.distance(shape) == pytest.approx(d)


def test_errors_are_builtin_value_and_type_errors() -> None:
    with pytest.raises(ValueError, match=r"radius must be positive"):
        sc.Sphere(-1)
    with pytest.raises(TypeError, match=r"radius must be a real number"):
        sc.Sphere("big")  # type: ignore[arg-type]
    with pytest.raises(sc.SpatialContactError):
        sc.Cuboid([1, 1])


@pytest.mark.parametrize(
    ("normal", "offset", "error", "message"),
    [
        (
            [0, 0, 0],
            0.0,
            sc.InvalidShapeError,
            r"^normal must be a non-zero vector, got \[0, 0, 0\]$",
        ),
        (
            [0, 0, 1e-13],
            0.0,
            sc.InvalidShapeError,
            r"^normal must be at least 1e-12 long \(only its direction is kept\), got \[0, 0",
        ),
        (
            [0, 1],
            0.0,
            sc.InvalidShapeError,
            r"^normal must hold exactly 3 values, got shape \(2,\)",
        ),
        (
            [0, math.nan, 1],
            0.0,
            sc.InvalidShapeError,
            r"^normal must be finite, got \[0, nan, 1\]$",
        ),
        ("up", 0.0, sc.ShapeTypeError, "^normal must be 3 real numbers, got 'up'$"),
        ([0, 0, 1], math.nan, sc.InvalidShapeError, "^offset must be finite, got nan$"),
        ([0, 0, 1], -math.inf, sc.InvalidShapeError, "^offset must be finite, got -inf$"),
        ([0, 0, 1], "0", sc.ShapeTypeError, "^offset must be a real number, got '0'$"),
    ],
)
def test_bad_halfspace(normal: Any, offset: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        sc.HalfSpace(normal, offset)
    h = sc.HalfSpace([0, 0, 1], 1.0)
    probe = sc.Sphere(0.25, pose=trans(0, 0, 3))  # 3 - 1 - 0.25 = 1.75
    assert h.distance(probe) == pytest.approx(1.75)
    with pytest.raises(error, match=message):
        if normal == [0, 0, 1]:
            h.offset = offset
        else:
            h.normal = normal
    assert h.normal.tolist() == [0.0, 0.0, 1.0] and h.offset == 1.0
    assert h.distance(probe) == pytest.approx(1.75)


def test_a_halfspace_offset_is_in_range_once_divided_by_the_normal() -> None:
    # {1e-11 z <= 1e6} is {z <= 1e17}: out of range, though both numbers given are in it;
    # {2e6 z <= 2e6} is {z <= 1}, though both are out of it.
    with pytest.raises(
        sc.InvalidShapeError,
        match=r"^offset divided by the normal's length is too far out, got 1e\+17 \(offset "
        r"1000000.0, normal \[0, 0, 1e-11\]; it must lie within ±1e\+06 m\)$",
    ):
        sc.HalfSpace([0, 0, 1e-11], 1e6)
    assert sc.HalfSpace([0, 0, 2e6], 2e6).offset == 1.0
    with pytest.raises(sc.InvalidShapeError, match=r"^offset is too far out, got 2000000.0"):
        sc.HalfSpace([0, 0, 1], 2e6)


def test_halfspace_normal_setter_keeps_the_offset() -> None:
    h = sc.HalfSpace([0, 0, 1], 1.0)
    h.normal = [0, 0, -3]  # {-z <= 1} = {z >= -1}; a sphere at z = -3 is 3 - 1 - 0.25 = 1.75 out
    assert h.normal.tolist() == [0.0, 0.0, -1.0] and h.offset == 1.0
    assert h.distance(sc.Sphere(0.25, pose=trans(0, 0, -3))) == pytest.approx(1.75)


# ----------------------------------------------------------------------------- equality


def test_equality_is_identity_and_equals_compares_values() -> None:
    a, b = sc.Sphere(1.0, name="x"), sc.Sphere(1.0, name="x")
    assert a != b and a == a and len({a, b}) == 2
    assert a.equals(b) and b.equals(a)
    assert not a.equals(sc.Sphere(2.0, name="x"))
    assert not a.equals(sc.Sphere(1.0, name="y"))
    assert not a.equals(sc.Sphere(1.0, name="x", pose=trans(1.0)))
    assert not a.equals(sc.Sphere(1.0, name="x", color="red"))
    assert not a.equals(sc.Sphere(1.0, name="x", collision=False))
    assert not sc.Cuboid([2, 2, 2]).equals(sc.Ellipsoid([1, 1, 1]))
    assert not a.equals("Sphere(1.0)")
    with pytest.warns(FutureWarning):
        assert not sc.Box([1, 1, 1]).equals(sc.Cuboid([1, 1, 1]))  # a different class


# -------------------------------------------------------------------------------- pickling

_PICKLED_POSE = trans(0.3, -0.2, 0.1) @ rot("x", 0.4) @ rot("z", -1.1)


@pytest.mark.parametrize("kind", LEAF_KINDS)
def test_every_shape_pickles(kind: str) -> None:
    shape = make_leaf(kind, _PICKLED_POSE, name=f"my {kind}", color=(0.1, 0.2, 0.3, 0.4))
    probe = sc.Sphere(0.2, pose=trans(0.9, 0.8, 1.5))
    expected = near(shape, probe)
    restored = pickle.loads(pickle.dumps(shape))
    assert restored is not shape and type(restored) is type(shape)
    assert restored.equals(shape) and shape.equals(restored)
    assert np.array_equal(restored.T, shape.T) and not restored.T.flags.writeable
    got = near(restored, probe)
    assert got[0] == expected[0]
    assert np.array_equal(got[1], expected[1]) and np.array_equal(got[2], expected[2])
    assert restored.iscollided(probe) == shape.iscollided(probe)
    assert probe.distance(restored) == probe.distance(shape)
    # the copy is independent of the original
    restored.T = trans(50.0)
    assert np.array_equal(shape.T, _PICKLED_POSE)


def test_box_and_collision_free_shapes_pickle() -> None:
    with pytest.warns(FutureWarning):
        box = sc.Box([1, 2, 3])
    restored = pickle.loads(pickle.dumps(box))
    assert type(restored) is sc.Box and restored.equals(box)
    ghost = sc.Sphere(1.0, collision=False)
    copy = pickle.loads(pickle.dumps(ghost))
    assert copy.equals(ghost)
    with pytest.raises(sc.CollisionDisabledError):
        copy.iscollided(sc.Sphere(1.0))


def test_a_group_of_shapes_pickles() -> None:
    leaves = [make_leaf(kind, trans(0.0, 0.0, 1.5 * i)) for i, kind in enumerate(LEAF_KINDS)]
    group = sc.CollisionShapeGroup(leaves, pose=trans(1.0, 2.0, 0.0) @ rot("z", 0.5))
    probe = sc.Sphere(0.3, pose=trans(3.0, 3.0, 4.0))
    restored = pickle.loads(pickle.dumps(group))
    assert restored.equals(group)
    for old, new in zip(group, restored, strict=True):
        assert new.scene_parent is restored
        np.testing.assert_array_equal(new.world_T, old.world_T)
        assert new.distance(probe) == old.distance(probe)
    assert (
        restored.closest_point(probe, inf_dist=10)[0] == group.closest_point(probe, inf_dist=10)[0]
    )
    assert restored.iscollided(probe) == group.iscollided(probe)


def test_a_shape_pickled_from_inside_a_group_keeps_its_world_pose() -> None:
    s = sc.Sphere(0.5, pose=trans(1.0))
    g = sc.CollisionShapeGroup([s], pose=trans(0.0, 2.0, 0.0))
    probe = sc.Sphere(0.5, pose=trans(1.0, 5.0, 0.0))  # 5 - 2 - 1 = 2
    restored = pickle.loads(pickle.dumps(s))
    assert restored.scene_parent is not None and restored.scene_parent.equals(g)
    np.testing.assert_array_equal(restored.world_T, s.world_T)
    assert restored.distance(probe) == pytest.approx(2.0)
    assert s.distance(probe) == pytest.approx(2.0)


# ------------------------------------------------------------------------------------ repr


def test_repr_of_simple_shapes() -> None:
    assert repr(sc.Sphere(1.0)) == (
        "Sphere(radius=1.0, color=(0.3, 0.3, 0.3), pose='t = 0, 0, 0; rpy/zyx = 0°, 0°, 0°')"
    )
    T = np.array([[0.0, -1, 0, 1], [1, 0, 0, 2], [0, 0, 1, 3], [0, 0, 0, 1]])
    text = repr(sc.Cuboid([1, 2, 3], pose=T, color="red", name="box", collision=False))
    assert text == (
        "Cuboid(scale=[1.0, 2.0, 3.0], name='box', color=(1.0, 0.0, 0.0), collision=False, "
        "pose='t = 1, 2, 3; rpy/zyx = 0°, 0°, 90°')"
    )
    assert "opacity=0.5" in repr(sc.Sphere(1.0, color=(1, 1, 1, 0.5)))


@pytest.mark.parametrize("kind", LEAF_KINDS)
def test_repr_never_fails(kind: str) -> None:
    shape = make_leaf(kind, trans(1.0))
    assert repr(shape).startswith(f"{kind}(")
    half_made = type(shape).__new__(type(shape))
    assert re.fullmatch(rf"<{kind} object at 0x[0-9a-f]+>", repr(half_made))


def test_hull_and_octree_repr_summarise_their_points() -> None:
    assert "points=<9 points>" in repr(sc.ConvexHull(HULL_POINTS))
    assert "points=<2 points>, resolution=0.1" in repr(sc.OcTree([[0, 0, 0], [1, 1, 1]], 0.1))


def test_a_colour_name_without_matplotlib_is_a_clear_error() -> None:
    """matplotlib is optional: a colour name then says what to install or give instead."""
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "import spatialcontact as sc\n"
        "try:\n"
        "    sc.Sphere(1.0, color='tan')\n"
        "except sc.InvalidShapeError as e:\n"
        "    print(e)\n"
        "print(sc.Sphere(1.0, color=[0, 255, 0]).color)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    first, second = done.stdout.splitlines()
    assert first == (
        "color 'tan' is a colour name, which needs matplotlib (pip install "
        "'spatialcontact[plot]'); give 3-4 numbers instead"
    )
    assert second == "(0.0, 1.0, 0.0, 1.0)"
