"""spatialcontact.plot: the triangles of every shape, the axes, contacts, the trimesh export."""

from __future__ import annotations

import io
import math
import re
import subprocess
import sys
from typing import Any

import matplotlib
import numpy as np
import pytest
import trimesh
from mpl_toolkits.mplot3d.art3d import Line3DCollection, Poly3DCollection
from spatialmath import SE3

matplotlib.use("Agg")
import matplotlib.pyplot as plt

import spatialcontact as sc
from spatialcontact.plot import plot, plot_contacts, to_trimesh_scene, triangles
from spatialcontact.sensors import PlottingUnavailableError

POSE = SE3.Trans(0.3, -0.2, 0.5) * SE3.RPY(0.1, 0.2, 0.3)


@pytest.fixture(autouse=True)
def _close_figures() -> object:
    yield None
    plt.close("all")


def local(points: np.ndarray, shape: sc.CollisionShape) -> np.ndarray:
    """World points (n, 3) back in the shape's frame."""
    T = np.asarray(shape.world_T)
    return (points - T[:3, 3]) @ T[:3, :3]


# ------------------------------------------------------------------------ triangles


def test_a_box_is_twelve_triangles_on_its_corners() -> None:
    box = sc.Cuboid([0.2, 0.4, 0.6], pose=POSE)
    tri = triangles(box)
    assert tri.shape == (12, 3, 3)
    corners = np.abs(local(tri.reshape(-1, 3), box))
    np.testing.assert_allclose(corners, np.broadcast_to([0.1, 0.2, 0.3], corners.shape), atol=1e-12)


def test_round_shapes_lie_on_their_surfaces() -> None:
    ball = sc.Sphere(0.25, pose=POSE)
    v = local(triangles(ball).reshape(-1, 3), ball)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 0.25, atol=1e-12)

    egg = sc.Ellipsoid([0.1, 0.2, 0.4], pose=POSE)
    v = local(triangles(egg).reshape(-1, 3), egg)
    np.testing.assert_allclose(np.linalg.norm(v / [0.1, 0.2, 0.4], axis=1), 1.0, atol=1e-12)


@pytest.mark.parametrize(
    ("make", "z_low", "z_high"),
    [
        (lambda: sc.Cylinder(0.1, 0.6, pose=POSE), -0.3, 0.3),
        (lambda: sc.Capsule(0.1, 0.6, pose=POSE), -0.4, 0.4),  # caps add the radius
        (lambda: sc.Cone(0.1, 0.6, pose=POSE), -0.3, 0.3),  # base at -L/2, apex at +L/2
    ],
    ids=["cylinder", "capsule", "cone"],
)
def test_shapes_along_z_span_their_length(make: object, z_low: float, z_high: float) -> None:
    shape = make()  # type: ignore[operator]
    v = local(triangles(shape).reshape(-1, 3), shape)
    assert v[:, 2].min() == pytest.approx(z_low, abs=1e-12)
    assert v[:, 2].max() == pytest.approx(z_high, abs=1e-12)
    assert np.hypot(v[:, 0], v[:, 1]).max() == pytest.approx(0.1, abs=1e-12)


def test_the_cone_apex_is_at_plus_half_length() -> None:
    cone = sc.Cone(0.1, 0.6)
    v = triangles(cone).reshape(-1, 3)
    top = v[v[:, 2] > 0.29]
    np.testing.assert_allclose(top, np.broadcast_to([0.0, 0.0, 0.3], top.shape), atol=1e-12)


def test_a_mesh_is_its_own_triangles() -> None:
    mesh = sc.Mesh(sc.meshes.path("objects/box.stl"), pose=POSE)
    T = np.asarray(mesh.world_T)
    expected = (mesh.vertices @ T[:3, :3].T + T[:3, 3])[mesh.faces]
    np.testing.assert_allclose(triangles(mesh), expected)


def test_a_convex_hull_is_drawn_on_its_points_and_encloses_them() -> None:
    rng = np.random.default_rng(3)
    points = rng.normal(size=(40, 3))
    hull = sc.ConvexHull(points)
    tri = triangles(hull)
    corners = tri.reshape(-1, 3)
    # Every corner is one of the points given.
    assert np.min(np.linalg.norm(corners[:, None] - points[None], axis=2), axis=1).max() < 1e-9
    # Every point is on the inner side of every face: the outward normals bound them all.
    centroid = points.mean(axis=0)
    for a, b, c in tri:
        n = np.cross(b - a, c - a)
        n = n if n @ (a - centroid) > 0 else -n
        assert ((points - a) @ n <= 1e-9).all()


def test_an_octree_is_its_cells_boxes() -> None:
    cells_in = np.array([[0.05, 0.05, 0.05], [0.35, 0.05, 0.05]])
    tree = sc.OcTree(cells_in, 0.1)
    tri = triangles(tree)
    assert tri.shape == (12 * len(tree.cells), 3, 3)
    v = tri.reshape(len(tree.cells), -1, 3)
    for cell, corners in zip(tree.cells, v, strict=True):
        np.testing.assert_allclose(np.abs(corners - cell[:3]), cell[3] / 2, atol=1e-12)


def test_a_half_space_is_a_square_on_its_plane_sized_to_the_rest() -> None:
    floor = sc.HalfSpace([0.0, 0.0, 2.0], 1.0)  # z <= 0.5
    alone = triangles(floor).reshape(-1, 3)
    np.testing.assert_allclose(alone[:, 2], 0.5)
    assert np.ptp(alone[:, 0]) == pytest.approx(2.0)  # 2 m without other shapes
    box = sc.Cuboid([0.4, 0.4, 0.4], pose=SE3.Trans(5.0, 3.0, 2.0))
    beside = triangles(floor, box)[:2].reshape(-1, 3)
    assert np.ptp(beside[:, 0]) == pytest.approx(1.5 * 0.4)  # 1.5 times the rest's size
    np.testing.assert_allclose(beside.mean(axis=0), [5.0, 3.0, 0.5], atol=1e-12)  # under it
    given = triangles(floor, halfspace_size=3.0).reshape(-1, 3)
    assert np.ptp(given[:, 1]) == pytest.approx(3.0)


def test_groups_scenes_and_robots_give_their_leaves_at_world_poses() -> None:
    box = sc.Cuboid([0.2, 0.2, 0.2], pose=SE3.Trans(0.1, 0, 0))
    group = sc.CollisionShapeGroup([box], pose=SE3.Trans(1.0, 0, 0))
    v = triangles(group).reshape(-1, 3)
    assert v[:, 0].min() == pytest.approx(1.0) and v[:, 0].max() == pytest.approx(1.2)

    scene = sc.Scene()
    scene.add(sc.Sphere(0.1), "ball")
    scene.add(group, "group")
    assert len(triangles(scene)) == len(triangles(scene["ball"])) + 12

    panda = sc.meshes.path("panda")
    robot = sc.RobotModel.from_urdf(panda / "panda.urdf")
    robot.set_q(robot.neutral)
    expected = sum(len(triangles(leaf)) for leaf in robot.group.leaves())
    assert len(triangles(robot)) == expected > 1000
    np.testing.assert_allclose(triangles(robot.group), triangles(robot))


def test_triangles_refuses_what_is_not_a_shape() -> None:
    with pytest.raises(sc.ShapeTypeError, match=r"objects\[1\] must be a spatialcontact shape.*3"):
        triangles(sc.Sphere(1.0), 3)
    with pytest.raises(sc.InvalidArgumentError, match="halfspace_size must be positive, got -1"):
        triangles(sc.HalfSpace(), halfspace_size=-1)


SIZES = "(sizes must lie in [1e-05, 1e+06] m)"


@pytest.mark.parametrize(
    ("objects", "given", "message"),
    [
        ((sc.Sphere(0.1),), -1, f"halfspace_size must be positive, got -1 {SIZES}"),
        ((sc.Sphere(0.1),), math.nan, f"halfspace_size must be finite, got nan {SIZES}"),
        ((sc.HalfSpace(),), 1e308, f"halfspace_size is too large, got 1e+308 {SIZES}"),
        ((sc.HalfSpace(),), 1e-6, f"halfspace_size is too small, got 1e-06 {SIZES}"),
    ],
    ids=["negative-without-half-space", "nan-without-half-space", "huge", "tiny"],
)
def test_halfspace_size_is_a_size_whether_or_not_a_half_space_is_drawn(
    objects: tuple[sc.CollisionShape, ...], given: float, message: str
) -> None:
    # Unchecked before without a half-space; 1e308 gave numpy's LinAlgError in plot().
    for call in (triangles, plot, to_trimesh_scene):
        with pytest.raises(sc.InvalidArgumentError, match=re.escape(message)):
            call(*objects, halfspace_size=given)
    assert not plt.get_fignums()  # refused before a figure was opened
    assert np.ptp(triangles(sc.HalfSpace(), halfspace_size=1e6)[:, :, 0]) == pytest.approx(1e6)


# ------------------------------------------------------------------------ matplotlib


def test_plot_draws_one_surface_per_leaf_with_equal_scales() -> None:
    a = sc.Cuboid([1.0, 0.5, 0.25], color="red")
    b = sc.Sphere(0.25, pose=SE3.Trans(1.0, 0, 0))
    ax = plot(a, b)
    assert ax.name == "3d"
    surfaces = [c for c in ax.collections if isinstance(c, Poly3DCollection)]
    assert len(surfaces) == 2
    low = np.array([ax.get_xlim()[0], ax.get_ylim()[0], ax.get_zlim()[0]])
    high = np.array([ax.get_xlim()[1], ax.get_ylim()[1], ax.get_zlim()[1]])
    assert (low <= [-0.5, -0.25, -0.25]).all() and (high >= [1.25, 0.25, 0.25]).all()
    aspect = np.asarray(ax.get_box_aspect())
    np.testing.assert_allclose(aspect / aspect[0], (high - low) / (high - low)[0], rtol=1e-6)


def test_plot_colours_own_palette_highlight() -> None:
    red = sc.Cuboid([0.1, 0.1, 0.1], color="red")
    plain = sc.Cuboid([0.1, 0.1, 0.1], pose=SE3.Trans(0.5, 0, 0))  # default grey
    marked = sc.Cuboid([0.1, 0.1, 0.1], pose=SE3.Trans(1.0, 0, 0))
    ax = plot(red, plain, marked, highlight=[marked], alpha=1.0)
    faces = [c.get_facecolor() for c in ax.collections if isinstance(c, Poly3DCollection)]
    brightest = [f[:, :3].max(axis=0) for f in faces]  # shading darkens, never brightens
    assert brightest[0][0] > 0.8 and brightest[0][1] < 0.1  # its own red
    assert not np.allclose(brightest[1], 0.3, atol=0.05)  # not the default grey
    assert brightest[2][0] > 0.8 and brightest[2][2] < 0.3  # highlighted orange-red
    ax = plot(plain, color="blue")
    face = next(c for c in ax.collections if isinstance(c, Poly3DCollection)).get_facecolor()
    assert face[:, 2].max() > 0.8 and face[:, 0].max() < 0.1


def highlighted(ax: Any) -> list[bool]:
    """For each surface drawn, whether it is in the highlight's orange-red."""
    faces = [c.get_facecolor() for c in ax.collections if isinstance(c, Poly3DCollection)]
    return [bool(f[:, 0].max() > 0.8 and f[:, 2].max() < 0.3) for f in faces]


def test_highlight_takes_one_object_or_none() -> None:
    # A single shape or None raised a raw "not iterable" TypeError.
    a = sc.Cuboid([0.1, 0.1, 0.1])
    b = sc.Cuboid([0.1, 0.1, 0.1], pose=SE3.Trans(0.5, 0, 0))
    group = sc.CollisionShapeGroup([sc.Sphere(0.1), sc.Sphere(0.1, pose=SE3.Trans(0, 0.5, 0))])
    assert highlighted(plot(a, b, highlight=b, alpha=1.0)) == [False, True]
    assert highlighted(plot(a, b, highlight=None, alpha=1.0)) == [False, False]
    assert highlighted(plot(a, group, highlight=group, alpha=1.0)) == [False, True, True]
    assert highlighted(plot(a, group, highlight=(x for x in [a]), alpha=1.0)) == [
        True,
        False,
        False,
    ]


@pytest.mark.parametrize("highlight", [5, "ball", b"ball"], ids=["int", "str", "bytes"])
def test_highlight_must_be_shapes(highlight: object) -> None:
    with pytest.raises(sc.ShapeTypeError) as raised:
        plot(sc.Sphere(0.1), highlight=highlight)
    assert str(raised.value) == (
        "highlight must be a spatialcontact shape, group, Scene or RobotModel, an iterable of "
        f"them, or None, got {highlight!r}"
    )


def test_edges_must_be_a_bool() -> None:
    # "yes" was taken as true.
    with pytest.raises(sc.ShapeTypeError) as raised:
        plot(sc.Sphere(0.1), edges="yes")  # type: ignore[arg-type]
    assert str(raised.value) == "edges must be True or False, got 'yes'"
    assert not plt.get_fignums()
    ax = plot(sc.Sphere(0.1), edges=np.True_)  # type: ignore[arg-type]
    surface = next(c for c in ax.collections if isinstance(c, Poly3DCollection))
    assert surface.get_linewidth()[0] == pytest.approx(0.3)


def test_plot_on_given_axes_keeps_what_was_drawn_in_the_limits() -> None:
    figure = plt.figure()
    ax = figure.add_subplot(projection="3d")
    plot(sc.Sphere(0.1), ax=ax)
    assert plot(sc.Sphere(0.1, pose=SE3.Trans(2.0, 0, 0)), ax=ax) is ax
    assert ax.get_xlim()[0] <= -0.1 and ax.get_xlim()[1] >= 2.1


def test_contacts_are_dots_with_lines_scaled_by_depth_or_force() -> None:
    table = sc.Cuboid([1.0, 1.0, 0.1], pose=SE3.Trans(0, 0, -0.05))
    ball = sc.Sphere(0.1, pose=SE3.Trans(0, 0, 0.08))  # 2 cm deep
    contacts = ball.contacts(table)
    ax = plot_contacts(contacts, scale=10.0)
    (lines,) = [c for c in ax.collections if isinstance(c, Line3DCollection)]
    (segment,) = lines._segments3d
    start, end = np.asarray(segment)
    np.testing.assert_allclose(start, contacts[0].pos, atol=1e-12)
    np.testing.assert_allclose(end - start, [0, 0, -0.2], atol=1e-9)  # normal * 0.02 * 10

    ax = plot_contacts(contacts, forces=[50.0], scale=0.01)  # 50 N along the normal
    (lines,) = [c for c in ax.collections if isinstance(c, Line3DCollection)]
    start, end = np.asarray(lines._segments3d[0])
    np.testing.assert_allclose(end - start, [0, 0, -0.5], atol=1e-9)

    ax = plot_contacts(contacts, forces=[[1.0, 0.0, 0.0]], scale=0.5)
    (lines,) = [c for c in ax.collections if isinstance(c, Line3DCollection)]
    start, end = np.asarray(lines._segments3d[0])
    np.testing.assert_allclose(end - start, [0.5, 0, 0], atol=1e-12)


def test_contacts_without_scale_get_a_visible_length() -> None:
    table = sc.Cuboid([1.0, 1.0, 0.1], pose=SE3.Trans(0, 0, -0.05))
    ball = sc.Sphere(0.1, pose=SE3.Trans(0, 0, 0.099))  # 1 mm deep: too short to see as is
    ax = plot(table, ball, contacts=ball.contacts(table))
    (lines,) = [c for c in ax.collections if isinstance(c, Line3DCollection)]
    start, end = np.asarray(lines._segments3d[0])
    assert np.linalg.norm(end - start) == pytest.approx(0.15 * 1.0, rel=0.05)  # 15% of 1 m


def test_no_contacts_draws_no_lines() -> None:
    ax = plot(sc.Sphere(0.1), contacts=sc.Contacts())
    assert not [c for c in ax.collections if isinstance(c, Line3DCollection)]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda c, ax: plot_contacts(c, forces=[1.0, 2.0]),
            sc.InvalidArgumentError,
            r"forces must have shape \(1,\) or \(1, 3\) for 1 contacts, got shape \(2,\)",
        ),
        (
            lambda c, ax: plot_contacts(c, forces=[math.nan]),
            sc.InvalidArgumentError,
            "forces must be finite",
        ),
        (lambda c, ax: plot_contacts(c, scale=math.inf), sc.InvalidArgumentError, "scale"),
        (
            lambda c, ax: plot_contacts([1, 2]),  # type: ignore[arg-type]
            sc.ShapeTypeError,
            r"contacts must be a Contacts, got \[1, 2\]",
        ),
        (
            lambda c, ax: plot(sc.Sphere(1.0), ax=ax),
            sc.ShapeTypeError,
            "ax must be matplotlib 3D axes",
        ),
        (
            lambda c, ax: plot(sc.Sphere(1.0), alpha=2),
            sc.InvalidArgumentError,
            r"alpha must be in \[0, 1\], got 2",
        ),
        (
            lambda c, ax: plot(sc.Sphere(1.0), highlight=["x"]),
            sc.ShapeTypeError,
            re.escape(
                "highlight[0] must be a spatialcontact shape, group, Scene or RobotModel, got 'x'"
            ),
        ),
        (lambda c, ax: plot(sc.Sphere(1.0), color="nocolour"), sc.InvalidShapeError, "nocolour"),
    ],
    ids=[
        "forces-shape",
        "forces-nan",
        "scale",
        "contacts",
        "2d-axes",
        "alpha",
        "highlight",
        "color",
    ],
)
def test_bad_input_raises_naming_it(call: object, error: type[Exception], message: str) -> None:
    ball = sc.Sphere(0.1, pose=SE3.Trans(0, 0, 0.05))
    contacts = ball.contacts(sc.HalfSpace())
    flat = plt.figure().add_subplot()
    with pytest.raises(error, match=message):
        call(contacts, flat)  # type: ignore[operator]


class Opaque:
    """An object that is not a number, with a repr that does not change between runs."""

    def __repr__(self) -> str:
        return "Opaque()"


FORCES_1 = "forces must be an array of shape (1,) or (1, 3) of real numbers, got"


@pytest.mark.parametrize(
    ("forces", "error", "message"),
    [
        (["1"], sc.ShapeTypeError, f"{FORCES_1} ['1'] (strings)"),
        (["a"], sc.ShapeTypeError, f"{FORCES_1} ['a'] (strings)"),
        ([True], sc.ShapeTypeError, f"{FORCES_1} [True] (booleans)"),
        (
            [[1.0, True, 0.0]],
            sc.ShapeTypeError,
            f"{FORCES_1} [[1.0, True, 0.0]] (booleans or masked arrays among the values)",
        ),
        ([1 + 2j], sc.ShapeTypeError, f"{FORCES_1} [(1+2j)] (complex numbers)"),
        ([None], sc.ShapeTypeError, f"{FORCES_1} [None] (None among the values)"),
        (Opaque(), sc.ShapeTypeError, f"{FORCES_1} Opaque()"),
        (
            10**400,
            sc.InvalidArgumentError,
            "forces must be an array of shape (1,) or (1, 3) of real numbers within float range "
            "(about ±1.8e308), got 1.000e+400",
        ),
        ([math.inf], sc.InvalidArgumentError, "forces must be finite, got [inf]"),
    ],
    ids=[
        "digit-string",
        "string",
        "bool",
        "bool-among-floats",
        "complex",
        "none",
        "object",
        "huge-int",
        "inf",
    ],
)
def test_forces_must_be_real_numbers(forces: object, error: type[Exception], message: str) -> None:
    # Strings, booleans and complex numbers were converted silently or raised numpy's errors.
    contacts = sc.Sphere(0.1, pose=SE3.Trans(0, 0, 0.05)).contacts(sc.HalfSpace())
    with pytest.raises(error, match=re.escape(message)):
        plot_contacts(contacts, forces=forces)


def test_masked_forces_are_refused() -> None:
    contacts = sc.Sphere(0.1, pose=SE3.Trans(0, 0, 0.05)).contacts(sc.HalfSpace())
    masked = np.ma.masked_array([1.0], mask=[True])
    with pytest.raises(sc.ShapeTypeError) as raised:
        plot_contacts(contacts, forces=masked)
    assert str(raised.value) == (
        f"{FORCES_1} {masked!r} (a masked array: fill or compress it first)"
    )


def test_forces_given_to_the_trimesh_export_are_checked_even_without_contacts() -> None:
    box = sc.Cuboid()
    with pytest.raises(sc.ShapeTypeError) as raised:
        to_trimesh_scene(box, contacts=sc.Contacts(), forces="bad")
    assert str(raised.value) == (
        "forces must be an array of shape (0,) or (0, 3) of real numbers, got 'bad'"
    )
    assert set(to_trimesh_scene(box, contacts=sc.Contacts(), forces=[]).geometry) == {"cuboid_0"}


def test_forces_without_contacts_are_refused() -> None:
    message = (
        "forces are drawn at contacts, and contacts is None: pass contacts too, or no forces "
        "(got forces=[1.0])"
    )
    for call in (plot, to_trimesh_scene):
        with pytest.raises(sc.InvalidArgumentError) as raised:
            call(sc.Sphere(0.1), forces=[1.0])
        assert str(raised.value) == message


@pytest.mark.parametrize(
    ("color", "error", "message"),
    [
        ("notacolor", sc.InvalidArgumentError, "'notacolor'"),
        (5, sc.InvalidArgumentError, "5"),
        ((1, 0, 0, 2), sc.InvalidArgumentError, "(1, 0, 0, 2)"),
        ((math.nan, 0, 0), sc.InvalidArgumentError, "(nan, 0, 0)"),
        (None, sc.ShapeTypeError, "None"),
        (
            (True, 0, 0),
            sc.ShapeTypeError,
            "(True, 0, 0) (booleans or masked arrays among the values)",
        ),
        (Opaque(), sc.ShapeTypeError, "Opaque()"),
    ],
    ids=["unknown-name", "number", "out-of-range", "nan", "none", "bools", "object"],
)
def test_contact_colour_must_be_a_matplotlib_colour(
    color: object, error: type[Exception], message: str
) -> None:
    # Unchecked before: matplotlib raised its own errors while drawing.
    contacts = sc.Sphere(0.1, pose=SE3.Trans(0, 0, 0.05)).contacts(sc.HalfSpace())
    with pytest.raises(error) as raised:
        plot_contacts(contacts, color=color)
    assert str(raised.value) == (
        "color must be a matplotlib colour (a name, a hex string or 3-4 numbers in [0, 1]), "
        f"got {message}"
    )
    assert not plt.get_fignums()  # refused before a figure was opened


def test_contact_colour_takes_names_hex_and_numbers() -> None:
    contacts = sc.Sphere(0.1, pose=SE3.Trans(0, 0, 0.05)).contacts(sc.HalfSpace())
    for color, rgb in (("C3", (0.84, 0.15, 0.16)), ("#0000ff", (0, 0, 1)), ([0, 1, 0], (0, 1, 0))):
        ax = plot_contacts(contacts, color=color)
        (lines,) = [c for c in ax.collections if isinstance(c, Line3DCollection)]
        np.testing.assert_allclose(lines.get_color()[0][:3], rgb, atol=0.01)


@pytest.mark.parametrize("scale", [-1, 0, -0.5], ids=["minus-one", "zero", "negative"])
def test_scale_must_be_positive(scale: float) -> None:
    # A negative scale drew the lines backwards, and plot() checked it only with contacts.
    contacts = sc.Sphere(0.1, pose=SE3.Trans(0, 0, 0.05)).contacts(sc.HalfSpace())
    message = f"scale must be positive, got {scale!r}"
    for call in (
        lambda: plot_contacts(contacts, scale=scale),
        lambda: plot(sc.Sphere(0.1), contacts=contacts, scale=scale),
        lambda: plot(sc.Sphere(0.1), scale=scale),
        lambda: to_trimesh_scene(sc.Sphere(0.1), contacts=contacts, scale=scale),
    ):
        with pytest.raises(sc.InvalidArgumentError) as raised:
            call()
        assert str(raised.value) == message


def test_lines_too_long_for_floats_are_refused_and_huge_forces_autoscale() -> None:
    contacts = sc.Sphere(0.1, pose=SE3.Trans(0, 0, 0.05)).contacts(sc.HalfSpace())
    with pytest.raises(sc.InvalidArgumentError) as raised:
        plot_contacts(contacts, forces=[1e300], scale=1e10)
    assert str(raised.value) == (
        "scale is too large for these forces: the lines would be infinitely long, got "
        "10000000000.0 (largest value 1e+300)"
    )

    # Without a scale, forces whose norm overflows (or underflows) get the lines of ordinary ones.
    def line(forces: list[list[float]]) -> np.ndarray:
        scene = to_trimesh_scene(sc.Cuboid(), contacts=contacts, forces=forces)
        return np.asarray(scene.geometry["normal_0"].bounds)

    np.testing.assert_allclose(line([[1e308, 1e308, 0.0]]), line([[1.0, 1.0, 0.0]]), atol=1e-12)
    np.testing.assert_allclose(line([[1e-320, 0.0, 0.0]]), line([[1.0, 0.0, 0.0]]), atol=1e-12)


# ------------------------------------------------------------------------ trimesh


def test_trimesh_scene_places_named_coloured_leaves_and_contacts() -> None:
    floor = sc.Cuboid([1.0, 1.0, 0.1], pose=SE3.Trans(0, 0, -0.05), name="floor", color="tan")
    ball = sc.Sphere(0.1, pose=SE3.Trans(0, 0, 0.08), name="ball")
    scene = to_trimesh_scene(floor, ball, contacts=ball.contacts(floor), scale=1.0)
    assert set(scene.geometry) == {"floor", "ball", "contact_0", "normal_0"}
    T, _ = scene.graph["ball"]
    np.testing.assert_allclose(T, ball.world_T)
    np.testing.assert_allclose(scene.bounds[0], [-0.5, -0.5, -0.1], atol=1e-9)
    color = scene.geometry["floor"].visual.face_colors[0]
    np.testing.assert_array_equal(color, [210, 180, 140, 255])  # tan
    data = scene.export(file_type="glb")
    again = trimesh.load(io.BytesIO(data), file_type="glb")
    np.testing.assert_allclose(again.bounds, scene.bounds, atol=1e-6)


def test_trimesh_scene_names_unnamed_leaves_by_type() -> None:
    scene = to_trimesh_scene(sc.Sphere(0.1), sc.Cuboid())
    assert set(scene.geometry) == {"sphere_0", "cuboid_1"}


def test_trimesh_scene_keeps_every_leaf_when_names_clash() -> None:
    # trimesh replaces a node given a name already used: the first ball was lost.
    small = sc.Sphere(0.1, name="ball")
    big = sc.Sphere(0.2, name="ball", pose=SE3.Tx(1))
    scene = to_trimesh_scene(small, big, sc.Sphere(0.3, name="ball_2"), sc.Sphere(0.4, name="ball"))
    assert scene.graph.nodes_geometry == ["ball", "ball_2", "ball_2_2", "ball_3"]
    np.testing.assert_allclose(scene.graph["ball_2"][0], big.world_T)
    assert scene.geometry["ball"].extents == pytest.approx([0.2] * 3, rel=0.05)
    assert scene.geometry["ball_2"].extents == pytest.approx([0.4] * 3, rel=0.05)
    # A name like a generated label, and like a contact's.
    assert to_trimesh_scene(
        sc.Sphere(0.1, name="sphere_1"), sc.Sphere(0.1)
    ).graph.nodes_geometry == [
        "sphere_1",
        "sphere_1_2",
    ]
    ball = sc.Sphere(0.1, pose=SE3.Trans(0, 0, 0.05))
    scene = to_trimesh_scene(
        sc.Sphere(0.1, name="contact_0"), ball, contacts=ball.contacts(sc.HalfSpace())
    )
    assert scene.graph.nodes_geometry == ["contact_0", "sphere_1", "contact_0_2", "normal_0"]


# ------------------------------------------------------------------------ optional import


def test_import_spatialcontact_loads_neither_plot_nor_matplotlib_nor_click() -> None:
    code = (
        "import sys, spatialcontact; "
        "print(sorted(m for m in ('matplotlib', 'spatialcontact.plot', 'click', "
        "'spatialcontact.cli') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_without_matplotlib_plot_says_how_to_install_it() -> None:
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "import spatialcontact as sc\n"
        "from spatialcontact.plot import plot, to_trimesh_scene\n"
        "print(len(to_trimesh_scene(sc.Sphere(1.0)).geometry))\n"  # trimesh needs no matplotlib
        "try:\n    plot(sc.Sphere(1.0))\nexcept ImportError as e:\n"
        "    print(type(e).__name__, e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[0] == "1"
    assert out.stdout.splitlines()[1].startswith(
        "PlottingUnavailableError plotting needs matplotlib"
    )
    assert 'pip install "spatialcontact[plot]"' in out.stdout
    assert issubclass(PlottingUnavailableError, ImportError)
