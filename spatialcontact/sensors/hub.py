"""SensorHub: one scene query and one force computation per step, fed to every sensor."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .._validate import count, describe
from ..contact import Contacts
from ._common import ObjectMap, StepData, check_scene, in_scene
from ._errors import SensorTypeError, SensorValueError
from ._time import MAX_SECONDS, NS_PER_S, ns_to_seconds, seconds_to_ns
from .forces import ForceInput, PenaltyForce, resolve_forces
from .matrix_sensor import MatrixContactSensor
from .named_sensor import NamedContactSensor
from .object_sensor import ObjectContactSensor

__all__ = ["MAX_CONTACTS_PER_PAIR", "SensorHub"]

Sensor = ObjectContactSensor | MatrixContactSensor | NamedContactSensor

MAX_CONTACTS_PER_PAIR = 1 << 30
"""Largest ``max_contacts_per_pair`` a hub accepts: more contacts than a pair of shapes can
give (the scene's broad phase stops gathering at this many in one call)."""

_MAX_NS = round(MAX_SECONDS * NS_PER_S)
"""The latest time a hub may reach, ns: its sensors accept no later time."""


class SensorHub:
    """Runs the contact sensors of a scene: each step queries once and feeds them all.

    Parameters
    ----------
    scene : Scene
        The scene to query (:meth:`~spatialcontact.Scene.contacts`).
    sensors : iterable of ObjectContactSensor, MatrixContactSensor or NamedContactSensor
        The sensors to feed, each once; matrix and named sensors must read this ``scene``, and
        an object sensor's shape must be in it (an object of the scene or inside one) when the
        hub is made, so add the objects first.
    force_model : PenaltyForce, optional
        Computes the forces when the caller gives none; without it (and without caller
        forces) the forces are zero and the sensors report ``forces_valid = False``.
    max_contacts_per_pair : int
        Passed to ``scene.contacts``, in [1, :data:`MAX_CONTACTS_PER_PAIR`] (2**30). Default 1.

    Raises
    ------
    SensorValueError
        If a matrix or named sensor reads another scene, an object sensor's shape is not in
        ``scene`` (a copy of a scene object, say: a new shape that no contact names), a
        sensor is listed twice, or ``max_contacts_per_pair`` is out of range.
    SensorTypeError
        If ``sensors`` is a string or holds something else than sensors, or ``force_model``
        is not a :class:`PenaltyForce`.

    Notes
    -----
    :meth:`step` advances :attr:`time` by ``dt``, queries the scene once, computes the forces
    once (the caller's, else the force model's, else none) and feeds every sensor in order:
    an :class:`ObjectContactSensor` gets ``clear``, ``add`` for each of its contacts (with the
    contact's force on its shape), ``add_force`` with its net force (only when forces are
    known) and ``tick(dt)``; a :class:`MatrixContactSensor` gets ``update``; a
    :class:`NamedContactSensor` queues the step at the new time, then gets ``update(time)``.
    Every check comes first: a step refused (a named sensor's time would go back, having
    been given a later ``sim_time`` by hand or by another hub; :attr:`time` would pass
    1e9 s; forces that do not fit; contacts of shapes not in the scene; a matrix sensor made
    before objects were removed) changes nothing, in the hub, its force model or its sensors.

    A sensor belongs to one hub: one listed by two hubs is fed by each, so its timers and
    queue count the steps of both. Give each hub its own sensors.

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
        if per_pair > MAX_CONTACTS_PER_PAIR:
            raise SensorValueError(
                f"max_contacts_per_pair must be at most {MAX_CONTACTS_PER_PAIR} "
                f"(MAX_CONTACTS_PER_PAIR), got {describe(max_contacts_per_pair)}"
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
        constructor: a matrix or named sensor must read :attr:`scene`, an object sensor's
        shape must be in it, and no sensor may be listed twice.
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
            Step length, seconds, in [1e-9, 1e9], and :attr:`time` after the step at most 1e9
            s (the sensors' clock limit). :attr:`time` counts whole nanoseconds (as Gazebo's
            clock), so ``dt`` is rounded to the nearest nanosecond; a ``dt`` below 1 ns is
            refused, since it would leave the time where it was.
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

        Raises
        ------
        SensorValueError
            As :meth:`feed`; the scene is not queried when ``dt`` is refused.
        """
        dt_ns = seconds_to_ns(dt, "dt", positive=True)  # checked before the query
        self._check_clocks(dt_ns, dt)
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
            If ``dt`` is not in [1e-9, 1e9] seconds or would take :attr:`time` past 1e9 s,
            the forces do not fit the contacts or overflow, a contact shape is not in the
            scene, a matrix sensor's objects were removed from the scene, or a named sensor
            was given a later time than the hub's after this step. Nothing changes then.
        SensorTypeError
            If ``dt`` is not a number or ``contacts`` not :class:`~spatialcontact.Contacts`.
        """
        dt_ns = seconds_to_ns(dt, "dt", positive=True)
        self._check_clocks(dt_ns, dt)
        self._feed_ns(contacts, dt_ns, forces, approach_speed)

    def _check_clocks(self, dt_ns: int, dt: Any) -> None:
        """Refuse a step that would take :attr:`time` past the sensors' limit, or a named
        sensor's time back: one given a later ``sim_time`` (by hand, or by another hub) than
        the hub's time after this step."""
        now = self._time_ns + dt_ns
        if now > _MAX_NS:
            raise SensorValueError(
                f"dt must keep the hub's time at most {MAX_SECONDS:g} s (the sensors' clock "
                f"limit), so at most {ns_to_seconds(_MAX_NS - self._time_ns)!r} s from its "
                f"time {self.time!r}, got {describe(dt)}; reset() starts a new run"
            )
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
        # Every check, and every computation that can fail, runs before anything changes.
        if not isinstance(contacts, Contacts):
            raise SensorTypeError(
                f"contacts must be a spatialcontact.Contacts, got {describe(contacts)}"
            )
        memory = None
        if forces is not None:
            if approach_speed is not None:
                raise SensorValueError(
                    "approach_speed is for the force model; it cannot go with caller forces"
                )
            array, valid = resolve_forces(contacts, forces)
        elif self.force_model is not None:
            magnitudes, memory = self.force_model._magnitudes(
                contacts, approach_speed, dt_ns / NS_PER_S
            )
            array, valid = -magnitudes[:, None] * contacts.normal, True
        else:
            if approach_speed is not None:
                raise SensorValueError("approach_speed needs a force_model; the hub has none")
            array, valid = np.zeros((len(contacts), 3)), False
        step = StepData(contacts, array, valid)
        objects = self._objects
        if len(step):
            step.objects(objects)  # refuses contacts of shapes not in the scene
        now = self._time_ns + dt_ns
        readings = [_read(sensor, step, objects, now) for sensor in self._sensors]
        self._time_ns = now
        if self.force_model is not None:
            self.force_model._keep(memory)
        self.contacts = contacts
        self.forces = array
        self.forces_valid = valid
        seconds = dt_ns / NS_PER_S
        for sensor, reading in zip(self._sensors, readings, strict=True):
            if isinstance(sensor, ObjectContactSensor):
                sensor._apply(reading, seconds)
            elif isinstance(sensor, MatrixContactSensor):
                sensor._apply(reading)
            elif reading is not None:
                sensor._queue_step(reading, valid)
        # Named sensors publish last, once every sensor holds the step: their callbacks (user
        # code, which may raise) see the whole step and cannot leave part of it unapplied.
        for sensor in self._named:
            sensor._update_ns(now, False)


def _read(sensor: Sensor, step: StepData, objects: ObjectMap, now: int) -> Any:
    """What ``sensor`` takes from the step at time ``now`` (ns), changing nothing yet."""
    if isinstance(sensor, ObjectContactSensor):
        return sensor._read(step)
    if isinstance(sensor, MatrixContactSensor):
        return sensor._read(step, objects)
    return sensor._read(step, objects, now)


def _check_sensors(scene: Any, sensors: Any) -> tuple[Sensor, ...]:
    """``sensors`` as a tuple, each a sensor kind that can read ``scene``."""
    if isinstance(sensors, (ObjectContactSensor, MatrixContactSensor, NamedContactSensor)):
        sensors = [sensors]
    not_sensors = f"sensors must be an iterable of sensors, got {describe(sensors)}"
    if isinstance(sensors, (str, bytes)):  # iterable, but of characters
        raise SensorTypeError(not_sensors)
    try:
        items = tuple(sensors)
    except TypeError:
        raise SensorTypeError(not_sensors) from None
    first: dict[int, int] = {}
    for k, sensor in enumerate(items):
        if not isinstance(sensor, (ObjectContactSensor, MatrixContactSensor, NamedContactSensor)):
            raise SensorTypeError(
                "sensors must be ObjectContactSensor, MatrixContactSensor or "
                f"NamedContactSensor, got {describe(sensor)}"
            )
        # the same sensor twice would be fed twice per step (its timers counting double)
        seen = first.setdefault(id(sensor), k)
        if seen != k:
            raise SensorValueError(
                f"sensors must list each sensor once, got {sensor!r} at index {seen} and "
                f"again at index {k}"
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
