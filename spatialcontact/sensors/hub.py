"""SensorHub: one scene query and one force computation per step, fed to every sensor."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .._validate import count, describe
from ..contact import Contacts
from ._common import ObjectMap, StepData, check_scene, in_scene
from ._errors import SensorTypeError, SensorValueError
from ._time import NS_PER_S, ns_to_seconds, seconds_to_ns
from .forces import ForceInput, PenaltyForce, resolve_forces
from .matrix_sensor import MatrixContactSensor
from .named_sensor import NamedContactSensor
from .object_sensor import ObjectContactSensor

__all__ = ["SensorHub"]

Sensor = ObjectContactSensor | MatrixContactSensor | NamedContactSensor


class SensorHub:
    """Runs the contact sensors of a scene: each step queries once and feeds them all.

    Parameters
    ----------
    scene : Scene
        The scene to query (:meth:`~spatialcontact.Scene.contacts`).
    sensors : iterable of ObjectContactSensor, MatrixContactSensor or NamedContactSensor
        The sensors to feed; matrix and named sensors must read this ``scene``, and an object
        sensor's shape must be in it (an object of the scene or inside one) when the hub is
        made, so add the objects first.
    force_model : PenaltyForce, optional
        Computes the forces when the caller gives none; without it (and without caller
        forces) the forces are zero and the sensors report ``forces_valid = False``.
    max_contacts_per_pair : int
        Passed to ``scene.contacts``, >= 1. Default 1.

    Raises
    ------
    SensorValueError
        If a matrix or named sensor reads another scene, an object sensor's shape is not in
        ``scene`` (a copy of a scene object, say: a new shape that no contact names), or
        ``max_contacts_per_pair`` is below 1.
    SensorTypeError
        If ``sensors`` holds something else than sensors, or ``force_model`` is not a
        :class:`PenaltyForce`.

    Notes
    -----
    :meth:`step` advances :attr:`time` by ``dt``, queries the scene once, computes the forces
    once (the caller's, else the force model's, else none) and feeds every sensor in order:
    an :class:`ObjectContactSensor` gets ``clear``, ``add`` for each of its contacts (with the
    contact's force on its shape), ``add_force`` with its net force (only when forces are
    known) and ``tick(dt)``; a :class:`MatrixContactSensor` gets ``update``; a
    :class:`NamedContactSensor` queues the step at the new time, then gets ``update(time)``.
    A step that would take a named sensor's time back (one given a later ``sim_time`` by hand
    or by another hub) is refused before anything changes.

    An object sensor whose shape later leaves the scene reads no contacts from then on, as a
    named sensor's removed name matches none.

    Examples
    --------
    >>> import spatialcontact as sc
    >>> from spatialcontact.sensors import ObjectContactSensor, PenaltyForce, SensorHub
    >>> scene = sc.Scene()
    >>> _ = scene.add(sc.HalfSpace([0, 0, 1], 0.0), "floor")
    >>> _ = scene.add(sc.Sphere(0.5, pose=[[1, 0, 0, 0], [0, 1, 0, 0],
    ...                                    [0, 0, 1, 0.49], [0, 0, 0, 1]]), "ball")
    >>> feet = ObjectContactSensor(scene["ball"])
    >>> hub = SensorHub(scene, [feet], force_model=PenaltyForce(1e4))
    >>> _ = hub.step(0.01)
    >>> feet.in_contact, feet.force.round(6).tolist()  # 0.01 m overlap x 1e4 N/m, upwards
    (True, [0.0, 0.0, 100.0])
    """

    def __init__(
        self,
        scene: Any,
        sensors: Iterable[Sensor],
        force_model: PenaltyForce | None = None,
        *,
        max_contacts_per_pair: int = 1,
    ) -> None:
        self.scene = check_scene(scene)
        self.sensors = sensors  # checked by the setter
        if force_model is not None and not isinstance(force_model, PenaltyForce):
            raise SensorTypeError(
                f"force_model must be a PenaltyForce or None, got {describe(force_model)}"
            )
        per_pair = count(
            max_contacts_per_pair,
            "max_contacts_per_pair",
            error=SensorValueError,
            type_error=SensorTypeError,
        )
        self.force_model = force_model
        self.max_contacts_per_pair = per_pair
        self._objects = ObjectMap(scene)
        self._time_ns = 0
        self.contacts: Contacts = Contacts()
        """Contacts: the last step's contacts."""
        self.forces = np.zeros((0, 3))
        """ndarray, shape (n, 3), world frame: the last step's force on each contact's ``o1``."""
        self.forces_valid = False
        """bool: whether the last step had forces (the caller's or the force model's)."""

    @property
    def sensors(self) -> tuple[Sensor, ...]:
        """tuple: the sensors fed, in order.

        Assigning an iterable of sensors (or one sensor) replaces them, with the checks of the
        constructor: a matrix or named sensor must read :attr:`scene`, and an object sensor's
        shape must be in it.
        """
        return self._sensors

    @sensors.setter
    def sensors(self, sensors: Iterable[Sensor]) -> None:
        self._sensors = _check_sensors(self.scene, sensors)
        self._named = tuple(s for s in self._sensors if isinstance(s, NamedContactSensor))

    def __repr__(self) -> str:
        return (
            f"SensorHub({len(self.sensors)} sensors, force_model={self.force_model!r}, "
            f"time={self.time:g})"
        )

    @property
    def time(self) -> float:
        """float: simulation time, seconds (the sum of the ``dt`` of every step)."""
        return self._time_ns / NS_PER_S

    def reset(self) -> None:
        """Start a new run: time zero, object sensors and the force model reset, named
        sensors' update times reset."""
        self._time_ns = 0
        self.contacts = Contacts()
        self.forces = np.zeros((0, 3))
        self.forces_valid = False
        if self.force_model is not None:
            self.force_model.reset()
        for sensor in self.sensors:
            if isinstance(sensor, ObjectContactSensor):
                sensor.reset()
            elif isinstance(sensor, NamedContactSensor):
                sensor.reset_last_update_time()

    def step(self, dt: float, *, forces: ForceInput = None, approach_speed: Any = None) -> Contacts:
        """Advance ``dt`` seconds: query the scene, compute forces, feed every sensor.

        Parameters
        ----------
        dt : float
            Step length, seconds, in [1e-9, 1e9]. :attr:`time` counts whole nanoseconds (as
            Gazebo's clock), so ``dt`` is rounded to the nearest nanosecond; a ``dt`` below
            1 ns is refused, since it would leave the time where it was.
        forces : None, array_like, shape (n, 3) or (n,), or callable
            The caller's forces for this step's contacts (see
            :func:`~spatialcontact.sensors.resolve_forces`); a callable receives the contacts,
            since they are only known after the query. Overrides the force model.
        approach_speed : array_like, shape (n,), optional
            Passed to the force model (damping); needs ``force_model``.

        Returns
        -------
        Contacts
            The step's contacts.
        """
        dt_ns = seconds_to_ns(dt, "dt", positive=True)  # checked before the query
        self._check_clocks(dt_ns)
        contacts = self.scene.contacts(max_contacts_per_pair=self.max_contacts_per_pair)
        self._feed_ns(contacts, dt_ns, forces, approach_speed)
        return contacts

    def feed(
        self,
        contacts: Contacts,
        dt: float,
        *,
        forces: ForceInput = None,
        approach_speed: Any = None,
    ) -> None:
        """Feed already-queried contacts as one step of ``dt`` seconds (see :meth:`step`).

        Raises
        ------
        SensorValueError
            If ``dt`` is not in [1e-9, 1e9] seconds, the forces do not fit the contacts, or a
            named sensor was given a later time than the hub's after this step.
        SensorTypeError
            If ``dt`` is not a number or ``contacts`` not :class:`~spatialcontact.Contacts`.
        """
        dt_ns = seconds_to_ns(dt, "dt", positive=True)
        self._check_clocks(dt_ns)
        self._feed_ns(contacts, dt_ns, forces, approach_speed)

    def _check_clocks(self, dt_ns: int) -> None:
        """Refuse a step that would take a named sensor's time back: one given a later
        ``sim_time`` (by hand, or by another hub) than the hub's time after this step."""
        now = self._time_ns + dt_ns
        for sensor in self._named:
            if sensor._clock_ns > now:
                raise SensorValueError(
                    f"sensor {sensor!r} was given sim_time {ns_to_seconds(sensor._clock_ns)!r}, "
                    f"later than the hub's time after this step, {ns_to_seconds(now)!r}: its "
                    "messages' times would go back; reset() starts a new run for the hub and "
                    "its sensors"
                )

    def _feed_ns(
        self, contacts: Contacts, dt_ns: int, forces: ForceInput, approach_speed: Any
    ) -> None:
        if not isinstance(contacts, Contacts):
            raise SensorTypeError(
                f"contacts must be a spatialcontact.Contacts, got {describe(contacts)}"
            )
        if forces is not None:
            if approach_speed is not None:
                raise SensorValueError(
                    "approach_speed is for the force model; it cannot go with caller forces"
                )
            array, valid = resolve_forces(contacts, forces)
        elif self.force_model is not None:
            array = self.force_model.forces(
                contacts, approach_speed=approach_speed, dt=dt_ns / NS_PER_S
            )
            valid = True
        else:
            if approach_speed is not None:
                raise SensorValueError("approach_speed needs a force_model; the hub has none")
            array, valid = np.zeros((len(contacts), 3)), False
        step = StepData(contacts, array, valid)
        self._time_ns += dt_ns
        seconds = dt_ns / NS_PER_S
        for sensor in self._sensors:
            if isinstance(sensor, ObjectContactSensor):
                sensor._feed(step, seconds)
            elif isinstance(sensor, MatrixContactSensor):
                sensor._update(step, self._objects)
            else:
                if sensor.active:
                    sensor._queue_step(step, self._objects, self._time_ns)
                sensor._update_ns(self._time_ns, False)
        self.contacts = contacts
        self.forces = array
        self.forces_valid = valid


def _check_sensors(scene: Any, sensors: Any) -> tuple[Sensor, ...]:
    """``sensors`` as a tuple, each a sensor kind that can read ``scene``."""
    if isinstance(sensors, (ObjectContactSensor, MatrixContactSensor, NamedContactSensor)):
        sensors = [sensors]
    try:
        items = tuple(sensors)
    except TypeError:
        raise SensorTypeError(
            f"sensors must be an iterable of sensors, got {describe(sensors)}"
        ) from None
    for sensor in items:
        if not isinstance(sensor, (ObjectContactSensor, MatrixContactSensor, NamedContactSensor)):
            raise SensorTypeError(
                "sensors must be ObjectContactSensor, MatrixContactSensor or "
                f"NamedContactSensor, got {describe(sensor)}"
            )
        if isinstance(sensor, ObjectContactSensor):
            if not in_scene(scene, sensor.parent):
                raise SensorValueError(
                    f"sensor {sensor!r} is on {describe(sensor.parent)}, a shape not in the "
                    f"hub's scene {describe(scene)}: no contact names it, so the sensor would "
                    "never fire (a copy of a scene object is a new shape; mount the sensor on "
                    "the object itself, scene[name], and add it to the scene before making "
                    "the hub)"
                )
        elif sensor.scene is not scene:
            raise SensorValueError(
                f"sensor {sensor!r} reads another scene than the hub's {describe(scene)}"
            )
    return items
