"""ObjectContactSensor drawing on matplotlib's Agg backend, on 2D and 3D axes.

The force line of each contact starts at the contact point and runs along the report normal
(into the sensor's shape) for ``normal force x force_scale`` metres.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from conftest import make_contact

import spatialcontact as sc
from spatialcontact.sensors import (
    ObjectContactSensor,
    PlottingUnavailableError,
    SensorTypeError,
)


def contact(
    a: sc.CollisionShape,
    b: sc.CollisionShape,
    normal: tuple[float, float, float],
    pos: tuple[float, float, float],
    depth: float = -0.1,
) -> sc.Contact:
    return make_contact(a, b, normal, pos, depth)


@pytest.fixture
def figure() -> Iterator[Any]:
    fig = plt.figure()
    yield fig
    plt.close(fig)


@pytest.fixture
def fed_sensor() -> ObjectContactSensor:
    """A box touched by a table below (20 N up) and a wall on its +x side (10 N along -x)."""
    box, table, wall = sc.Cuboid([1, 1, 1]), sc.Cuboid([4, 4, 1]), sc.Cuboid([1, 4, 4])
    sensor = ObjectContactSensor(box, force_scale=0.05)
    sensor.clear()
    # table is o1, box o2, normal +z from table to box: the report normal on the box is +z.
    sensor.add(contact(table, box, (0.0, 0.0, 1.0), (0.0, 0.0, -0.5)), force=[0.0, 0.0, 20.0])
    # box is o1, wall o2, normal +x: report normal on the box is -x.
    sensor.add(contact(box, wall, (1.0, 0.0, 0.0), (0.5, 0.2, 0.1)), force=[-10.0, 0.0, 0.0])
    sensor.add_force([-10.0, 0.0, 20.0])
    return sensor


def test_plot_on_2d_axes_draws_the_xy_projection(
    figure: Any, fed_sensor: ObjectContactSensor
) -> None:
    ax = figure.add_subplot()
    n_lines, n_collections = len(ax.lines), len(ax.collections)
    fed_sensor.plot(ax)
    assert len(ax.lines) == n_lines + 1 and len(ax.collections) == n_collections + 1
    points, lines = fed_sensor.artists
    assert points in ax.lines and lines in ax.collections
    x, y = points.get_data()
    np.testing.assert_allclose(x, [0.0, 0.5])
    np.testing.assert_allclose(y, [0.0, 0.2])
    # table contact: 20 N x 0.05 = 1 m along +z, whose x-y projection is a point;
    # wall contact: 10 N x 0.05 = 0.5 m along -x from (0.5, 0.2): to (0.0, 0.2).
    segments = lines.get_segments()
    np.testing.assert_allclose(segments[0], [[0.0, 0.0], [0.0, 0.0]])
    np.testing.assert_allclose(segments[1], [[0.5, 0.2], [0.0, 0.2]])
    assert points.get_marker() == "o" and points.get_markersize() == 6.0
    figure.canvas.draw()  # renders without error


def test_plot_on_3d_axes_draws_in_3d(figure: Any, fed_sensor: ObjectContactSensor) -> None:
    ax = figure.add_subplot(projection="3d")
    fed_sensor.plot(ax)
    points, lines = fed_sensor.artists
    assert points in ax.lines and lines in ax.collections
    x, y, z = points.get_data_3d()
    np.testing.assert_allclose(np.column_stack([x, y, z]), [[0.0, 0.0, -0.5], [0.5, 0.2, 0.1]])
    segments = np.array(lines._segments3d)  # the 3D segments as set
    np.testing.assert_allclose(segments[0], [[0.0, 0.0, -0.5], [0.0, 0.0, 0.5]])
    np.testing.assert_allclose(segments[1], [[0.5, 0.2, 0.1], [0.0, 0.2, 0.1]])
    figure.canvas.draw()


def test_step_plot_follows_the_last_step(figure: Any, fed_sensor: ObjectContactSensor) -> None:
    ax = figure.add_subplot()
    fed_sensor.plot(ax)
    points, lines = fed_sensor.artists
    fed_sensor.clear()
    fed_sensor.step_plot()
    assert len(points.get_data()[0]) == 0 and len(lines.get_segments()) == 0
    box = fed_sensor.parent
    other = sc.Sphere(0.1)
    fed_sensor.add(contact(box, other, (0.0, 1.0, 0.0), (1.0, 2.0, 3.0)), force=[0.0, -4.0, 0.0])
    fed_sensor.step_plot()
    np.testing.assert_allclose(points.get_data(), [[1.0], [2.0]])
    # 4 N x 0.05 = 0.2 m along the report normal -y
    np.testing.assert_allclose(lines.get_segments()[0], [[1.0, 2.0], [1.0, 1.8]])
    figure.canvas.draw()


def test_plot_style_keywords_and_second_call(figure: Any, fed_sensor: ObjectContactSensor) -> None:
    ax = figure.add_subplot()
    fed_sensor.plot(ax, marker_size=9.0, color="blue", force_scale=0.1)
    points, lines = fed_sensor.artists
    assert points.get_markersize() == 9.0
    np.testing.assert_allclose(lines.get_segments()[1], [[0.5, 0.2], [-0.5, 0.2]])  # 10 x 0.1
    fed_sensor.plot(ax)  # already drawn: nothing more
    assert fed_sensor.artists == (points, lines) and ax.lines.count(points) == 1


def test_plot_clear_removes_the_drawing(figure: Any, fed_sensor: ObjectContactSensor) -> None:
    ax = figure.add_subplot()
    fed_sensor.plot(ax)
    points, lines = fed_sensor.artists
    fed_sensor.plot_clear()
    assert fed_sensor.artists == ()
    assert points not in ax.lines and lines not in ax.collections
    fed_sensor.step_plot()  # nothing drawn: nothing to move
    fed_sensor.plot_clear()  # twice is harmless
    ax3 = figure.add_subplot(projection="3d")
    fed_sensor.plot(ax3)  # can draw again, elsewhere
    assert len(fed_sensor.artists) == 2
    figure.canvas.draw()


@pytest.mark.parametrize("projection", [None, "3d"])
def test_plot_clear_after_the_axes_were_cleared(
    figure: Any, fed_sensor: ObjectContactSensor, projection: str | None
) -> None:
    ax = figure.add_subplot(projection=projection)
    fed_sensor.plot(ax)
    ax.cla()  # takes the sensor's artists off the axes
    fed_sensor.plot_clear()  # nothing left to remove: no error
    assert not fed_sensor.artists
    other = figure.add_subplot(projection="3d")
    fed_sensor.plot(other)  # draws again, elsewhere
    points, lines = fed_sensor.artists
    assert points in other.lines and lines in other.collections
    other.cla()
    fed_sensor.plot(other)  # taken off by cla: drawn anew without plot_clear
    points, lines = fed_sensor.artists
    assert points in other.lines and lines in other.collections
    figure.canvas.draw()


def test_plot_with_no_contacts_draws_empty_artists(figure: Any) -> None:
    sensor = ObjectContactSensor(sc.Sphere(1.0))
    ax = figure.add_subplot()
    sensor.plot(ax, state=np.zeros(3))
    points, lines = sensor.artists
    assert len(points.get_data()[0]) == 0 and len(lines.get_segments()) == 0
    figure.canvas.draw()


def test_plot_refuses_unknown_keywords(figure: Any, fed_sensor: ObjectContactSensor) -> None:
    ax = figure.add_subplot()
    with pytest.raises(SensorTypeError, match=r"unexpected keyword argument.*zorder"):
        fed_sensor.plot(ax, zorder=3)
    assert fed_sensor.artists == ()


def test_plot_without_matplotlib_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, fed_sensor: ObjectContactSensor
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    with pytest.raises(PlottingUnavailableError, match=r"pip install spatialcontact\[plot\]"):
        fed_sensor.plot(object())
    assert issubclass(PlottingUnavailableError, ImportError)
