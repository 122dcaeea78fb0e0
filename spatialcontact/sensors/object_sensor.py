"""ObjectContactSensor: the contact sensor of one shape, after IR-SIM's ``Contact2D``.

It keeps IR-SIM's attribute names and meaning: what the last step recorded about the shape
(``in_contact``, ``partners``, ``records``, ``reports``, ``force``), how long it has been
touching or free (``contact_time``, ``air_time``, one running while the other is held at zero),
whether the last step began or ended a contact (``started``, ``ended``), and the writes a
simulation loop makes each step: :meth:`clear`, :meth:`add`, :meth:`add_force`, :meth:`tick`.

Differences from IR-SIM, converted here and nowhere else:

- contacts are 3D: ``force`` is a ``(3,)`` world-frame vector (IR-SIM: ``(2, 1)``), and
  :meth:`add_force` also takes IR-SIM's ``(2,)`` / ``(2, 1)`` planar forces (with z = 0);
- a contact's force is not part of the record: :meth:`add` takes it as ``force=`` (it only
  sizes the drawn line) and :meth:`add_force` accumulates the net force, which is what
  ``force`` reports; ``forces_valid`` says whether :meth:`add_force` ran since :meth:`clear`;
- ``partners`` are the leaf shapes touched (IR-SIM: objects);
- ``reports`` use :meth:`spatialcontact.Contact.report`: the normal points from the other shape
  into this one (the direction the contact pushes it) and the depth is positive on overlap,
  whereas the raw records keep Coal's convention (normal from ``o1`` to ``o2``, negative depth);
- :meth:`plot` draws on 3D axes too (in 3D); on 2D axes it draws the x-y projection.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._base import leaves_of
from .._validate import describe, numbers, text
from ..color import parse_color
from ..contact import Contact, ContactReport
from ..errors import InvalidArgumentError, ShapeTypeError
from ..shapes import CollisionShape
from ._common import StepData, check_contact, holds
from ._errors import PlottingUnavailableError, SensorTypeError, SensorValueError, real
from ._time import check_time_step

__all__ = ["ObjectContactSensor"]

_Reading = tuple[list[Contact], list[CollisionShape], list[np.ndarray], np.ndarray | None]
"""One step from a hub (see :meth:`ObjectContactSensor._read`)."""

_STYLE_KEYS = ("force_scale", "marker_size", "linewidth", "alpha", "color")


def require_matplotlib() -> Any:
    """Import matplotlib, or raise :class:`PlottingUnavailableError` saying how to install it."""
    try:
        import matplotlib
    except ImportError as exc:
        raise PlottingUnavailableError(
            "plotting needs matplotlib, which is not installed; install it with "
            "`pip install spatialcontact[plot]` (or `pip install matplotlib`)"
        ) from exc
    return matplotlib


def is_3d(ax: Any) -> bool:
    """True for a matplotlib 3D axes (``projection='3d'``)."""
    return getattr(ax, "name", "") == "3d"


def _force_vector(value: Any, name: str) -> np.ndarray:
    """A world force as (3,): accepts (3,), (3, 1), and planar (2,), (2, 1) with z = 0."""
    array = numbers(
        value, name, "2 or 3 numbers", type_error=SensorTypeError, error=SensorValueError
    )
    if array.shape in ((2,), (2, 1)):
        array = np.append(array.reshape(2), 0.0)
    elif array.shape in ((3,), (3, 1)):
        array = array.reshape(3)
    else:
        raise SensorValueError(
            f"{name} must have shape (3,), (3, 1), (2,) or (2, 1), got shape {array.shape}: "
            f"{describe(value)}"
        )
    if not np.all(np.isfinite(array)):
        raise SensorValueError(f"{name} must be finite, got {describe(value)}")
    return array


class ObjectContactSensor:
    """Contact sensor mounted on one shape, with IR-SIM's ``Contact2D`` readings.

    Parameters
    ----------
    shape : CollisionShape
        The shape carrying the sensor (a leaf, a group, or a scene object): contacts of any of
        its leaves count. Available as :attr:`parent`.
    force_scale : float
        Length of the drawn force line per newton, metres. Default 0.05.
    marker_size : float
        Size of the contact point markers. Default 6.
    linewidth : float
        Width of the force lines. Default 1.5.
    alpha : float
        Opacity of the drawing in [0, 1]. Default 0.9.
    color : str or tuple, optional
        A matplotlib colour name, or 3-4 numbers in [0, 1] (or [0, 255]) kept as an
        ``(r, g, b, a)`` tuple. Default ``"tab:red"``.
    name : str, optional
        A label for the user.
    state : array_like, optional
        Kept for IR-SIM's sensor interface (:meth:`step`); the readings do not depend on it.

    Attributes
    ----------
    sensor_type : str
        ``"contact"``.
    parent : CollisionShape
        The shape the sensor is mounted on.
    in_contact : bool
        Whether a contact was recorded against ``parent`` in the last step.
    partners : list of CollisionShape
        The leaf shapes ``parent`` touched in the last step, each once, in order of first
        contact.
    records : list of Contact
        The contact records of the last step, in the order added.
    force : ndarray, shape (3,), world frame
        Net contact force on ``parent`` in the last step, newtons.
    forces_valid : bool
        Whether :meth:`add_force` was called since the last :meth:`clear`; False means
        ``force`` is zero because no force was given, not because none acted.
    contact_time : float
        Seconds ``parent`` has been touching something (0 while free).
    air_time : float
        Seconds ``parent`` has been free (0 while touching).
    started : bool
        Whether the last :meth:`tick` began a contact.
    ended : bool
        Whether the last :meth:`tick` ended one.

    Examples
    --------
    >>> import spatialcontact as sc
    >>> ball = sc.Sphere(0.5, pose=[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.4], [0, 0, 0, 1]])
    >>> floor = sc.HalfSpace([0, 0, 1], 0.0)
    >>> sensor = ObjectContactSensor(ball)
    >>> sensor.clear()
    >>> for contact in ball.contacts(floor):
    ...     sensor.add(contact)
    >>> sensor.tick(0.01)
    >>> sensor.in_contact, sensor.started, sensor.contact_time
    (True, True, 0.01)
    >>> sensor.reports[0].normal.round(6).tolist()  # from the floor into the ball
    [0.0, 0.0, 1.0]
    """

    sensor_type = "contact"

    def __init__(
        self,
        shape: CollisionShape,
        *,
        force_scale: float = 0.05,
        marker_size: float = 6.0,
        linewidth: float = 1.5,
        alpha: float = 0.9,
        color: Any = "tab:red",
        name: str | None = None,
        state: Any = None,
    ) -> None:
        if not isinstance(shape, CollisionShape):
            raise SensorTypeError(f"shape must be a CollisionShape, got {describe(shape)}")
        label = text(name, "name", True, type_error=SensorTypeError)
        style = _check_style(
            {
                "force_scale": force_scale,
                "marker_size": marker_size,
                "linewidth": linewidth,
                "alpha": alpha,
                "color": color,
            }
        )
        self.parent = shape
        self.name = label
        self.force_scale: float = style["force_scale"]
        self.marker_size: float = style["marker_size"]
        self.linewidth: float = style["linewidth"]
        self.alpha: float = style["alpha"]
        self.color: Any = style["color"]
        self._state = state

        self.in_contact = False
        self.partners: list[CollisionShape] = []
        self.records: list[Contact] = []
        self.force = np.zeros(3)
        self.forces_valid = False
        self.contact_time = 0.0
        self.air_time = 0.0
        self.started = False
        self.ended = False
        self._was_in_contact = False
        self._force_blocks: list[np.ndarray] = []
        self._uids: tuple[int, np.ndarray] | None = None

        self._ax: Any = None
        self._point_artist: Any = None
        self._force_artist: Any = None
        self._draw_style: dict[str, Any] = {}

    def __repr__(self) -> str:
        label = f"{self.name!r}, " if self.name is not None else ""
        return (
            f"ObjectContactSensor({label}shape={type(self.parent).__name__}, "
            f"in_contact={self.in_contact}, contacts={len(self.records)})"
        )

    @property
    def shape(self) -> CollisionShape:
        """CollisionShape: the shape carrying the sensor (IR-SIM's :attr:`parent`)."""
        return self.parent

    # -------------------------------------------------------------------- readings

    @property
    def reports(self) -> list[ContactReport]:
        """list of ContactReport: the last step's contacts seen from :attr:`parent`'s side.

        Each report's ``normal`` points from the other shape into ``parent`` and its
        ``depth`` is positive on overlap.
        """
        parent = self.parent
        return [contact.report(parent) for contact in self.records]

    @property
    def record_forces(self) -> np.ndarray:
        """ndarray, shape (n, 3), world frame: the force on :attr:`parent` given with each
        record to :meth:`add` (zeros where none was given)."""
        if not self._force_blocks:
            return np.zeros((0, 3))
        return np.concatenate(self._force_blocks)

    # -------------------------------------------------------------------- writes

    def clear(self) -> None:
        """Forget the last step's contacts: flag, partners, records and force."""
        self.in_contact = False
        self.partners = []
        self.records = []
        self._force_blocks = []
        self.force = np.zeros(3)
        self.forces_valid = False

    def reset(self) -> None:
        """Forget everything, the timers included, as at the start of a run."""
        self.clear()
        self.contact_time = 0.0
        self.air_time = 0.0
        self.started = False
        self.ended = False
        self._was_in_contact = False

    def add(self, contact: Contact, force: Any = None) -> None:
        """Record a contact of :attr:`parent` found in this step.

        Parameters
        ----------
        contact : Contact
            A contact with one side in :attr:`parent`.
        force : array_like, shape (3,), optional
            The world-frame force this contact puts on :attr:`parent`, newtons. It sizes the
            drawn force line only; the net :attr:`force` comes from :meth:`add_force`.

        Raises
        ------
        SensorValueError
            If neither side of ``contact`` belongs to :attr:`parent`.
        """
        contact = check_contact(contact)
        vector = np.zeros(3) if force is None else _force_vector(force, "force")
        if holds(self.parent, contact.o1):
            other = contact.o2
        elif holds(self.parent, contact.o2):
            other = contact.o1
        else:
            raise SensorValueError(
                f"contact {contact!r} does not involve the sensor's shape {describe(self.parent)}"
            )
        self._record(contact, other, vector)

    def _record(self, contact: Contact, other: CollisionShape, force: np.ndarray) -> None:
        self.in_contact = True
        if not any(other is p for p in self.partners):
            self.partners.append(other)
        self.records.append(contact)
        self._force_blocks.append(force.reshape(1, 3))

    def add_force(self, force: Any) -> None:
        """Accumulate a world-frame force on :attr:`parent` into :attr:`force`.

        Parameters
        ----------
        force : array_like, shape (3,) or (3, 1), or planar (2,) or (2, 1)
            Newtons; a planar force gets z = 0.

        Raises
        ------
        SensorValueError
            If ``force`` is not finite, or would take the net force past the float range
            (the net force is then kept as it was).
        """
        self.force = self._net(_force_vector(force, "force"), force)
        self.forces_valid = True

    def _net(self, vector: np.ndarray, given: Any) -> np.ndarray:
        """:attr:`force` plus ``vector`` (from ``given``), refused when it overflows."""
        with np.errstate(over="ignore"):
            total = self.force + vector
        if not np.isfinite(total).all():
            raise SensorValueError(
                f"force must keep the net force finite, got {describe(given)} to add to "
                f"{self.force.tolist()}, which overflows; give smaller forces"
            )
        return total

    def tick(self, step_time: float) -> None:
        """Advance :attr:`contact_time` or :attr:`air_time` by one step.

        Raises :attr:`started` for a step that began a contact and :attr:`ended` for one that
        ended it; the other timer is held at zero.

        Parameters
        ----------
        step_time : float
            Seconds, >= 0.
        """
        dt = check_time_step(step_time, "step_time")
        self.started = self.in_contact and not self._was_in_contact
        self.ended = self._was_in_contact and not self.in_contact
        self._was_in_contact = self.in_contact
        if self.in_contact:
            self.contact_time += dt
            self.air_time = 0.0
        else:
            self.air_time += dt
            self.contact_time = 0.0

    def step(self, state: Any = None) -> None:
        """Keep the sensor state (IR-SIM's interface); the readings come from the writes."""
        self._state = state

    # ------------------------------------------------------------------ fed by a hub

    def _leaf_uids(self) -> np.ndarray:
        moves = self.parent._revision
        cached = self._uids
        if cached is None or cached[0] != moves:
            uids = np.sort(np.fromiter((leaf._uid for leaf in leaves_of(self.parent)), np.int64))
            cached = self._uids = (moves, uids)
        return cached[1]

    def _select(self, step: StepData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rows whose ``o1`` or ``o2`` is a leaf of :attr:`parent`, and on which side."""
        on_o1, on_o2 = step.touching(self._leaf_uids())
        rows = np.flatnonzero(on_o1 | on_o2)
        return rows, on_o1[rows], on_o2[rows]

    def _read(self, step: StepData) -> _Reading:
        """What one step from a hub gives the sensor, changing nothing: its records, the
        partners, each record's force on :attr:`parent`, and the net force (None without
        forces), refused when the net force overflows."""
        rows, on_o1, on_o2 = self._select(step)
        if not len(rows):
            return [], [], [], np.zeros(3) if step.valid else None
        items = step.items
        records = [items[r] for r in rows.tolist()]
        # the other side; a contact inside parent on both sides is seen from o1's, as
        # Contact.report does
        others = np.where(on_o1, step.o2_array[rows], step.o1_array[rows])
        partners = list(dict.fromkeys(others.tolist()))
        forces = step.forces[rows]
        blocks = [np.where(on_o1[:, None], forces, -forces)]
        if not step.valid:
            return records, partners, blocks, None
        # such a contact puts f and -f on parent: no net force
        sign = on_o1.astype(np.float64) - on_o2
        with np.errstate(over="ignore", invalid="ignore"):
            net = sign @ forces
        if not np.isfinite(net).all():
            raise SensorValueError(
                f"forces must sum to a finite net force on the sensor's shape "
                f"{describe(self.parent)}, got forces whose sum overflows; give smaller forces"
            )
        return records, partners, blocks, net

    def _apply(self, reading: _Reading, step_time: float) -> None:
        """One step from a hub, as :meth:`_read` worked it out: clear, add, add_force, tick."""
        records, partners, blocks, net = reading
        self.clear()
        self.records = records
        self.partners = partners
        self.in_contact = bool(records)
        self._force_blocks = blocks
        if net is not None:  # finite: _read refused a net force that overflows
            self.force = self.force + net
            self.forces_valid = True
        self.tick(step_time)

    # ------------------------------------------------------------------ plotting

    def plot(self, ax: Any, state: Any = None, **kwargs: Any) -> None:
        """Draw a marker at each contact point and a force line along each contact normal.

        The line starts at the contact point, points along the report normal (into
        :attr:`parent`) and is ``normal force x force_scale`` long, where the normal force is
        the component of the record's force along that normal. On 2D axes the x-y projection
        is drawn; on 3D axes (``projection='3d'``) the drawing is 3D. Does nothing when the
        sensor is already drawn (call :meth:`plot_clear` first to draw elsewhere); a drawing
        taken off its axes (by ``ax.cla()``, say) counts as none.

        Parameters
        ----------
        ax : matplotlib Axes or Axes3D
        state : array_like, optional
            Passed to :meth:`step`.
        **kwargs
            Style for this drawing: ``force_scale``, ``marker_size``, ``linewidth``,
            ``alpha``, ``color``.

        Raises
        ------
        PlottingUnavailableError
            If matplotlib is not installed (an ``ImportError``).
        SensorTypeError
            If ``ax`` is not a matplotlib ``Axes``, or a style keyword is unknown or of the
            wrong type.
        """
        require_matplotlib()
        from matplotlib.axes import Axes

        if not isinstance(ax, Axes):
            raise SensorTypeError(f"ax must be a matplotlib Axes, got {describe(ax)}")
        unknown = sorted(set(kwargs) - set(_STYLE_KEYS))
        if unknown:
            raise SensorTypeError(
                f"plot got unexpected keyword argument(s) {', '.join(unknown)}; "
                f"accepted: {', '.join(_STYLE_KEYS)}"
            )
        if state is not None:
            self.step(state)
        if self._point_artist is not None and self._point_artist.axes is not None:
            return
        self.plot_clear()  # artists taken off their axes (by ax.cla(), say) are drawn anew
        style = {key: getattr(self, key) for key in _STYLE_KEYS}
        style.update(_check_style(kwargs))
        three_d = is_3d(ax)
        common = {"color": style["color"], "alpha": style["alpha"], "zorder": 4}
        if three_d:
            from mpl_toolkits.mplot3d.art3d import Line3DCollection

            (points,) = ax.plot(
                [], [], [], linestyle="", marker="o", markersize=style["marker_size"], **common
            )
            lines = Line3DCollection([], linewidths=style["linewidth"], **_colors(common))
            ax.add_collection(lines, autolim=False)  # empty for now: no limits to update
        else:
            from matplotlib.collections import LineCollection

            (points,) = ax.plot(
                [], [], linestyle="", marker="o", markersize=style["marker_size"], **common
            )
            lines = LineCollection([], linewidths=style["linewidth"], **_colors(common))
            ax.add_collection(lines)
        self._ax = ax
        self._point_artist = points
        self._force_artist = lines
        self._draw_style = style
        self.step_plot()

    @property
    def artists(self) -> tuple[Any, ...]:
        """tuple: the matplotlib artists drawn (markers, force lines), empty when not drawn."""
        if self._point_artist is None:
            return ()
        return (self._point_artist, self._force_artist)

    def _segments(self) -> tuple[np.ndarray, np.ndarray]:
        """Contact points (n, 3) and force line segments (n, 2, 3) of the last step."""
        reports = self.reports
        if not reports:
            return np.zeros((0, 3)), np.zeros((0, 2, 3))
        points = np.array([r.point for r in reports])
        normals = np.array([r.normal for r in reports])
        along = np.einsum("ij,ij->i", self.record_forces, normals)
        scale = self._draw_style.get("force_scale", self.force_scale)
        ends = points + normals * (along * scale)[:, None]
        return points, np.stack([points, ends], axis=1)

    def step_plot(self) -> None:
        """Move the markers and force lines to the last step's contacts."""
        if self._point_artist is None:
            return
        points, segments = self._segments()
        if is_3d(self._ax):
            self._point_artist.set_data_3d(points[:, 0], points[:, 1], points[:, 2])
            self._force_artist.set_segments(list(segments))
        else:
            self._point_artist.set_data(points[:, 0], points[:, 1])
            self._force_artist.set_segments(list(segments[:, :, :2]))

    def plot_clear(self) -> None:
        """Remove the drawing from the axes; artists already taken off them (by ``ax.cla()``,
        say) are left as they are."""
        for artist in (self._point_artist, self._force_artist):
            if artist is not None and artist.axes is not None:
                artist.remove()
        self._ax = None
        self._point_artist = None
        self._force_artist = None


def _colors(common: dict[str, Any]) -> dict[str, Any]:
    return {"colors": common["color"], "alpha": common["alpha"], "zorder": common["zorder"]}


def _check_style(style: dict[str, Any]) -> dict[str, Any]:
    out = dict(style)
    for key in ("force_scale", "marker_size", "linewidth"):
        if key in out:
            value = real(out[key], key)
            if value < 0.0:
                raise SensorValueError(f"{key} must be zero or positive, got {describe(out[key])}")
            out[key] = value
    if "alpha" in out:
        value = real(out["alpha"], "alpha")
        if not 0.0 <= value <= 1.0:
            raise SensorValueError(f"alpha must be in [0, 1], got {describe(out['alpha'])}")
        out["alpha"] = value
    if "color" in out:
        out["color"] = _check_color(out["color"])
    return out


def _check_color(color: Any) -> Any:
    """A colour name (checked when matplotlib is installed) as given, or 3-4 numbers as the
    ``(r, g, b, a)`` tuple :func:`~spatialcontact.color.parse_color` makes of them."""
    if not isinstance(color, (str, tuple, list, np.ndarray)):
        raise SensorTypeError(
            f"color must be a matplotlib colour (a name or an RGB(A) tuple), got {describe(color)}"
        )
    if isinstance(color, str):
        try:
            from matplotlib.colors import is_color_like
        except ImportError:  # drawing needs matplotlib, and plot() says so
            return color
        if not is_color_like(color):
            raise SensorValueError(f"color must be a matplotlib colour name, got {color!r}")
        return color
    try:
        return parse_color(color, "color")
    except ShapeTypeError as error:
        raise SensorTypeError(str(error)) from None
    except InvalidArgumentError as error:
        raise SensorValueError(str(error)) from None
