"""NamedContactSensor: contacts of named scene objects, after Gazebo's ``ContactSensor``.

Every simulation step's contacts are queued (:meth:`NamedContactSensor.on_contacts`, Gazebo's
``OnContacts``); :meth:`NamedContactSensor.update` (Gazebo's ``Sensor::Update``), throttled by
the update rate, publishes the contacts of all steps queued since the previous update that
involve a watched name on either side, then keeps that reading until the next update.

Differences from Gazebo, converted here and nowhere else:

- collision names are scene object names (``scene.names``), not scoped SDF collision names;
  ``collision1`` is the object of each contact's ``o1`` (the lower scene index), as given;
- ``normals`` follow ODE's convention, which Gazebo reports: from ``collision2`` into
  ``collision1`` (the direction the contact pushes ``collision1``), the negated Coal normal;
- ``depths`` are positive on overlap (Coal's ``penetration_depth`` negated);
- wrench torques are about each object's frame origin (Gazebo: the link's centre of mass), and
  forces and torques are world-frame; with no forces given they are zero and
  :attr:`NamedContactSensor.forces_valid` is False;
- times are float seconds, kept internally as whole nanoseconds as Gazebo's ``common::Time``;
  they are given by the caller, so a ``sim_time`` earlier than the latest one given is refused
  (Gazebo reads its world's clock, which only goes back on a reset);
- there is no transport: callbacks registered with ``connect_updated`` are the subscribers.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from .._validate import describe, flag, integer, text
from ..contact import Contacts
from ._common import ObjectMap, StepData, check_scene
from ._errors import SensorTypeError, SensorValueError, real
from ._time import MAX_SECONDS, NS_PER_S, ns_to_seconds, seconds_to_ns
from .forces import ForceInput

__all__ = ["Connection", "ContactMessage", "ContactsMessage", "NamedContactSensor", "Wrenches"]

MAX_QUEUED_STEPS = 100
"""Steps kept waiting for an update; older ones are dropped (Gazebo's limit)."""


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class Wrenches:
    """Forces and torques of each contact point on both objects (Gazebo's ``JointWrench``)."""

    body_1_force: np.ndarray
    """ndarray, shape (k, 3), world frame: force on ``collision1``, newtons."""
    body_1_torque: np.ndarray
    """ndarray, shape (k, 3), world frame: its torque about ``collision1``'s origin, N·m."""
    body_2_force: np.ndarray
    """ndarray, shape (k, 3), world frame: force on ``collision2`` (``-body_1_force``)."""
    body_2_torque: np.ndarray
    """ndarray, shape (k, 3), world frame: its torque about ``collision2``'s origin, N·m."""


@dataclass(frozen=True, eq=False)
class ContactMessage:
    """The contacts between two objects in one step (Gazebo's ``msgs::Contact``)."""

    collision1: str
    """Name of the first object."""
    collision2: str
    """Name of the second object."""
    positions: np.ndarray
    """ndarray, shape (k, 3), world frame: contact positions, metres."""
    normals: np.ndarray
    """ndarray, shape (k, 3), world frame: unit normals from ``collision2`` into
    ``collision1``."""
    depths: np.ndarray
    """ndarray, shape (k,): overlap, metres, positive when the objects overlap."""
    wrenches: Wrenches
    """Forces and torques of each point on both objects."""
    time: float
    """Simulation time of the step, seconds."""

    def __len__(self) -> int:
        return len(self.depths)

    def __repr__(self) -> str:
        return (
            f"ContactMessage({self.collision1!r}, {self.collision2!r}, {len(self)} points, "
            f"time={self.time:g})"
        )


@dataclass(frozen=True, eq=False)
class ContactsMessage(Sequence[ContactMessage]):
    """A published reading (Gazebo's ``msgs::Contacts``): a sequence of :class:`ContactMessage`."""

    contact: tuple[ContactMessage, ...] = ()
    """The messages, oldest step first, in contact order within a step."""
    time: float = 0.0
    """Time of the measurement (the update that published it), seconds."""

    @overload
    def __getitem__(self, index: int) -> ContactMessage: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[ContactMessage]: ...
    def __getitem__(self, index: int | slice) -> ContactMessage | Sequence[ContactMessage]:
        return self.contact[index]

    def __len__(self) -> int:
        return len(self.contact)

    def __iter__(self) -> Iterator[ContactMessage]:
        return iter(self.contact)

    def __repr__(self) -> str:
        return f"ContactsMessage({len(self.contact)} contact messages, time={self.time:g})"


class Connection:
    """Handle of a callback connected with :meth:`NamedContactSensor.connect_updated`."""

    __slots__ = ("_callback", "_sensor")

    def __init__(self, sensor: NamedContactSensor, callback: Callable[[], Any]) -> None:
        self._sensor = sensor
        self._callback = callback

    @property
    def connected(self) -> bool:
        """bool: whether the callback is still connected."""
        return any(c is self for c in self._sensor._connections)

    def __repr__(self) -> str:
        return f"Connection({self._callback!r}, connected={self.connected})"


class NamedContactSensor:
    """Gazebo's contact sensor on named scene objects: queued steps, throttled updates.

    Parameters
    ----------
    scene : Scene
        The scene whose objects are named.
    collisions : str or sequence of str
        The watched object names (Gazebo's ``<collision>`` elements); each must be in
        ``scene.names``, once.
    update_rate : float
        Updates per simulated second, 0 or in [1e-9, 1e9]; 0 (default) updates on every call
        to :meth:`update`.
    active : bool
        Whether the sensor starts active (Gazebo's ``always_on``). Default True.
    name : str, optional
        A label for the user.

    Notes
    -----
    :meth:`update` follows ``Sensor::Update``: unless forced it does nothing when the sensor
    is inactive, when ``sim_time`` is not after :attr:`last_update_time`, or when less than one
    update period has passed (with Gazebo's carry-over of the lateness of the previous update).
    It then publishes the contacts of every queued step whose ``collision1`` or
    ``collision2`` is watched, empties the queue, sets :attr:`last_measurement_time` and, if
    at least one step was queued, :attr:`last_update_time`, and calls the connected callbacks.
    Without queued steps nothing changes and it returns False. An inactive sensor queues
    nothing. At most 100 steps are kept waiting; older ones are dropped. Watched names are
    looked up again whenever the scene's names change, so an object removed from the scene
    simply stops matching.

    Simulation time does not go back: :meth:`on_contacts` and :meth:`update` refuse a
    ``sim_time`` earlier than the latest one the sensor was given (by either, or by a
    :class:`~spatialcontact.sensors.SensorHub`), so message times never decrease; the one
    exception is Gazebo's rule above, an update neither forced nor after
    :attr:`last_update_time`, which returns False. :meth:`reset_last_update_time` starts a
    new run from time zero.

    Examples
    --------
    >>> import spatialcontact as sc
    >>> scene = sc.Scene()
    >>> _ = scene.add(sc.HalfSpace([0, 0, 1], 0.0), "floor")
    >>> _ = scene.add(sc.Sphere(0.5, pose=[[1, 0, 0, 0], [0, 1, 0, 0],
    ...                                    [0, 0, 1, 0.4], [0, 0, 0, 1]]), "ball")
    >>> sensor = NamedContactSensor(scene, ["ball"], update_rate=10.0)
    >>> sensor.on_contacts(scene.contacts(), sim_time=0.01)
    >>> sensor.update(0.01)  # less than 0.1 s since the last update (time 0)
    False
    >>> sensor.on_contacts(scene.contacts(), sim_time=0.1)
    >>> sensor.update(0.1)
    True
    >>> [(m.collision1, m.collision2, m.time) for m in sensor.contacts()]
    [('floor', 'ball', 0.01), ('floor', 'ball', 0.1)]
    >>> sensor.collision_contact_count("ball"), sensor.collision_name(5)
    (2, '')
    """

    sensor_type = "contact"

    def __init__(
        self,
        scene: Any,
        collisions: str | Sequence[str],
        update_rate: float = 0.0,
        *,
        active: bool = True,
        name: str | None = None,
    ) -> None:
        self.scene = check_scene(scene)
        if isinstance(collisions, str):
            collisions = [collisions]
        if not isinstance(collisions, (list, tuple)):
            raise SensorTypeError(
                f"collisions must be a list of object names, got {describe(collisions)}"
            )
        names = tuple(scene.names)
        if not collisions:
            raise SensorValueError("collisions is empty; name at least one scene object")
        seen: set[str] = set()
        for item in collisions:
            if not isinstance(item, str):
                raise SensorTypeError(
                    f"collisions must hold object names (str), got {describe(item)} in "
                    f"{describe(collisions)}"
                )
            if item not in names:
                raise SensorValueError(
                    f"collisions names {item!r}, which is not a scene object; the scene has "
                    f"{describe(list(names))}"
                )
            if item in seen:
                raise SensorValueError(f"collisions names {item!r} twice")
            seen.add(item)
        self.name = text(name, "name", True, type_error=SensorTypeError)
        self._collisions = tuple(collisions)
        self._watched_for: tuple[str, ...] = names
        self._watched = np.array([n in self._collisions for n in names], dtype=bool)
        self._objects = ObjectMap(scene)
        self._period_ns = 0
        self.update_rate = update_rate
        self.active = active
        self._queue: deque[tuple[tuple[ContactMessage, ...], bool]] = deque()
        self._reading = ContactsMessage()
        self._reading_valid = False
        self._last_update_ns = 0
        self._last_measurement_ns = 0
        self._delay_ns = 0
        self._clock_ns = 0
        """The latest simulation time given (steps and updates), ns: times may not go back."""
        self._connections: list[Connection] = []

    def __repr__(self) -> str:
        label = f"{self.name!r}, " if self.name is not None else ""
        return (
            f"NamedContactSensor({label}collisions={list(self._collisions)}, "
            f"update_rate={self.update_rate:g}, active={self.active})"
        )

    # ------------------------------------------------------------------ settings

    @property
    def active(self) -> bool:
        """bool: whether the sensor queues steps and updates (Gazebo's ``IsActive`` /
        ``SetActive``)."""
        return self._active

    @active.setter
    def active(self, value: bool) -> None:
        self._active = flag(value, "active", type_error=SensorTypeError)

    @property
    def update_rate(self) -> float:
        """float: updates per simulated second, 0 for every call (Gazebo's ``UpdateRate``).

        Set it to 0 or a rate in [1e-9, 1e9] Hz: the period, ``1 / update_rate``, is kept in
        whole nanoseconds (rounded), from 1 ns to :data:`MAX_SECONDS`.
        """
        return 0.0 if self._period_ns == 0 else NS_PER_S / self._period_ns

    @update_rate.setter
    def update_rate(self, hz: float) -> None:
        rate = _rate(hz)
        self._period_ns = 0 if rate == 0.0 else round(NS_PER_S / rate)

    @property
    def collisions(self) -> tuple[str, ...]:
        """tuple of str: the watched object names."""
        return self._collisions

    @property
    def collision_count(self) -> int:
        """int: how many object names the sensor watches (Gazebo's ``GetCollisionCount``)."""
        return len(self._collisions)

    def collision_name(self, index: int) -> str:
        """The watched name at ``index``, or ``""`` when out of range (Gazebo's
        ``GetCollisionName``; a negative index is out of range, as for Gazebo's unsigned one).
        """
        index = integer(index, "index", type_error=SensorTypeError)
        if 0 <= index < len(self._collisions):
            return self._collisions[index]
        return ""

    @property
    def last_update_time(self) -> float:
        """float: simulation time of the last update that published, seconds."""
        return ns_to_seconds(self._last_update_ns)

    @property
    def last_measurement_time(self) -> float:
        """float: simulation time of the last measurement, seconds."""
        return ns_to_seconds(self._last_measurement_ns)

    @property
    def forces_valid(self) -> bool:
        """bool: whether every step in the current reading came with forces."""
        return self._reading_valid

    def reset_last_update_time(self) -> None:
        """Set :attr:`last_update_time` and :attr:`last_measurement_time` back to zero, and
        forget the latest simulation time given, so that a new run may start from zero."""
        self._last_update_ns = 0
        self._last_measurement_ns = 0
        self._delay_ns = 0
        self._clock_ns = 0

    def _not_back(self, time_ns: int, sim_time: Any) -> None:
        """Refuse ``sim_time`` (``time_ns``) when it is earlier than the latest time given."""
        if time_ns < self._clock_ns:
            raise SensorValueError(
                "sim_time must not be earlier than the last time given to the sensor, "
                f"{ns_to_seconds(self._clock_ns)!r} (simulation time does not go back; "
                f"reset_last_update_time() starts a new run), got {describe(sim_time)}"
            )

    # ------------------------------------------------------------------ callbacks

    def connect_updated(self, callback: Callable[[], Any]) -> Connection:
        """Call ``callback()`` after every update that publishes a reading.

        Returns
        -------
        Connection
            The handle to give :meth:`disconnect_updated`.
        """
        if not callable(callback):
            raise SensorTypeError(f"callback must be callable, got {describe(callback)}")
        connection = Connection(self, callback)
        self._connections.append(connection)
        return connection

    def disconnect_updated(self, connection: Connection) -> None:
        """Stop calling a callback; disconnecting twice does nothing.

        Raises
        ------
        SensorTypeError
            If ``connection`` is not a :class:`Connection`.
        SensorValueError
            If it belongs to another sensor.
        """
        if not isinstance(connection, Connection):
            raise SensorTypeError(
                f"connection must be a Connection from connect_updated, got {describe(connection)}"
            )
        if connection._sensor is not self:
            raise SensorValueError(f"connection {connection!r} belongs to another sensor")
        self._connections = [c for c in self._connections if c is not connection]

    # ------------------------------------------------------------------ steps and updates

    def on_contacts(self, contacts: Contacts, sim_time: float, forces: ForceInput = None) -> None:
        """Queue one simulation step's contacts (Gazebo's ``OnContacts``); ignored when inactive.

        Parameters
        ----------
        contacts : Contacts
            All the step's contacts; the watched ones are kept.
        sim_time : float
            Simulation time of the step, seconds, >= 0, and not earlier than the latest time
            given to the sensor (by this method, :meth:`update` or a hub).
        forces : None, array_like, shape (n, 3) or (n,), or callable
            See :func:`~spatialcontact.sensors.resolve_forces`.

        Raises
        ------
        SensorValueError
            If ``sim_time`` is out of range or earlier than the latest time given, ``forces``
            does not fit ``contacts``, a contact shape is not in the scene (active or not), or
            a torque overflows. Nothing changes then, the sensor's time included.
        """
        time_ns = seconds_to_ns(sim_time, "sim_time")
        self._not_back(time_ns, sim_time)
        step = StepData.build(contacts, forces)
        messages = self._read(step, self._objects, time_ns)
        self._clock_ns = time_ns  # only once every check has passed
        if messages is not None:
            self._queue_step(messages, step.valid)

    def _read(
        self, step: StepData, objects: ObjectMap, time_ns: int
    ) -> tuple[ContactMessage, ...] | None:
        """The messages one step queues, None when inactive; every check that can refuse the
        step runs here, before anything changes."""
        if len(step):
            step.objects(objects)  # refuses contacts of shapes not in the scene, active or not
        return self._messages(step, objects, time_ns) if self._active else None

    def _queue_step(self, messages: tuple[ContactMessage, ...], valid: bool) -> None:
        self._queue.append((messages, valid))
        if len(self._queue) > MAX_QUEUED_STEPS:
            self._queue.popleft()

    def _messages(
        self, step: StepData, objects: ObjectMap, time_ns: int
    ) -> tuple[ContactMessage, ...]:
        if len(step) == 0:
            return ()
        i1, i2 = step.objects(objects)
        names = objects.names
        if names != self._watched_for:  # objects added or removed: look the names up again
            self._watched_for = names
            self._watched = np.array([n in self._collisions for n in names], dtype=bool)
        watched = self._watched
        rows = np.flatnonzero(watched[i1] | watched[i2])
        if len(rows) == 0:
            return ()
        first, second = i1[rows], i2[rows]
        codes = first * len(names) + second
        if np.all(codes == codes[0]):
            starts = np.zeros(1, dtype=np.intp)
        else:
            order = np.argsort(codes, kind="stable")  # by pair, contact order kept within
            rows, first, second, codes = rows[order], first[order], second[order], codes[order]
            starts = np.flatnonzero(np.concatenate([[True], codes[1:] != codes[:-1]]))
        ends = np.append(starts[1:], len(rows))
        # the messages of a step come in the order of each pair's first contact
        groups = sorted(
            zip(
                rows[starts].tolist(),
                range(len(starts)),
                starts.tolist(),
                ends.tolist(),
                strict=True,
            )
        )
        packed = _frozen(_gazebo_columns(step, objects)[rows])
        finite = np.isfinite(packed)
        if not finite.all():
            at = int(rows[np.argmin(finite.all(axis=1))])
            raise SensorValueError(
                f"forces must give finite torques, got forces whose torque at contact {at} "
                "overflows; give smaller forces"
            )
        column = {key: packed[:, span] for key, span in _SPANS.items()}
        first_names = [names[i] for i in first[starts].tolist()]
        second_names = [names[i] for i in second[starts].tolist()]
        time = ns_to_seconds(time_ns)
        out = []
        for _, k, lo, hi in groups:
            out.append(
                ContactMessage(
                    collision1=first_names[k],
                    collision2=second_names[k],
                    positions=column["positions"][lo:hi],
                    normals=column["normals"][lo:hi],
                    depths=column["depths"][lo:hi],
                    wrenches=Wrenches(
                        body_1_force=column["body_1_force"][lo:hi],
                        body_1_torque=column["body_1_torque"][lo:hi],
                        body_2_force=column["body_2_force"][lo:hi],
                        body_2_torque=column["body_2_torque"][lo:hi],
                    ),
                    time=time,
                )
            )
        return tuple(out)

    def update(self, sim_time: float, force: bool = False) -> bool:
        """Publish the queued steps if the update rate allows (Gazebo's ``Sensor::Update``).

        Parameters
        ----------
        sim_time : float
            Current simulation time, seconds, >= 0, and not earlier than the latest time
            given to the sensor, unless the update is not forced and ``sim_time`` is not
            after :attr:`last_update_time` (then it returns False, as Gazebo's).
        force : bool
            Update even when inactive or before the period has passed.

        Returns
        -------
        bool
            True when a new reading was published (and the callbacks called).

        Raises
        ------
        SensorValueError
            If ``sim_time`` is out of range, or earlier than the latest time given where the
            update could publish (a reading would be dated before the steps it holds).
        """
        now = seconds_to_ns(sim_time, "sim_time")
        forced = flag(force, "force", type_error=SensorTypeError)
        if forced or now > self._last_update_ns:  # else Gazebo's rule: nothing happens
            self._not_back(now, sim_time)
        return self._update_ns(now, forced)

    def _update_ns(self, now: int, force: bool) -> bool:
        self._clock_ns = max(self._clock_ns, now)
        if not (self._active or force):
            return False
        if now <= self._last_update_ns and not force:
            return False
        # Gazebo carries the lateness of this update over to the next one, unless it is a
        # whole period or more (then it gives up catching up).
        elapsed = now - self._last_update_ns + self._delay_ns
        if elapsed < self._period_ns and not force:
            return False
        self._delay_ns = max(0, elapsed - self._period_ns)
        if self._delay_ns >= self._period_ns:
            self._delay_ns = 0
        if not self._queue:
            return False
        messages = tuple(m for step_messages, _ in self._queue for m in step_messages)
        self._reading_valid = all(valid for _, valid in self._queue)
        self._queue.clear()
        self._last_measurement_ns = now
        self._reading = ContactsMessage(contact=messages, time=ns_to_seconds(now))
        self._last_update_ns = now
        for connection in list(self._connections):
            connection._callback()
        return True

    # ------------------------------------------------------------------ readings

    @overload
    def contacts(self) -> ContactsMessage: ...
    @overload
    def contacts(self, collision_name: str) -> dict[str, ContactMessage]: ...
    def contacts(
        self, collision_name: str | None = None
    ) -> ContactsMessage | dict[str, ContactMessage]:
        """The current reading, or the messages involving one name keyed by the other name.

        Parameters
        ----------
        collision_name : str, optional
            Without it: all the messages (Gazebo's ``GetContacts()``). With it: a dict from
            the other object's name to the latest message between the two (Gazebo's
            ``GetContacts(name)``; earlier steps' messages for the same pair are replaced).
        """
        if collision_name is None:
            return self._reading
        if not isinstance(collision_name, str):
            raise SensorTypeError(
                f"collision_name must be a string, got {describe(collision_name)}"
            )
        result: dict[str, ContactMessage] = {}
        for message in self._reading.contact:
            if message.collision1 == collision_name:
                result[message.collision2] = message
            elif message.collision2 == collision_name:
                result[message.collision1] = message
        return result

    def collision_contact_count(self, collision_name: str) -> int:
        """Number of contact points in the current reading involving ``collision_name``
        (Gazebo's ``GetCollisionContactCount``)."""
        if not isinstance(collision_name, str):
            raise SensorTypeError(
                f"collision_name must be a string, got {describe(collision_name)}"
            )
        return sum(
            len(m) for m in self._reading.contact if collision_name in (m.collision1, m.collision2)
        )


def _rate(hz: Any) -> float:
    """An update rate in Hz: 0 (every call), or one whose period is 1 ns to MAX_SECONDS."""
    rate = real(hz, "update_rate")
    if rate != 0.0 and not 1.0 / MAX_SECONDS <= rate <= NS_PER_S:
        raise SensorValueError(
            f"update_rate must be 0 or in [{1.0 / MAX_SECONDS:g}, {NS_PER_S:g}] Hz (a period "
            f"of 1 ns to {MAX_SECONDS:g} s), got {describe(hz)}"
        )
    return rate


_SPANS: dict[str, slice | int] = {
    "positions": slice(0, 3),
    "normals": slice(3, 6),
    "depths": 6,
    "body_1_force": slice(7, 10),
    "body_1_torque": slice(10, 13),
    "body_2_force": slice(13, 16),
    "body_2_torque": slice(16, 19),
}
"""Columns of :func:`_gazebo_columns`."""


def _gazebo_columns(step: StepData, objects: ObjectMap) -> np.ndarray:
    """Every contact of the step in Gazebo's conventions, (n, 19) per :data:`_SPANS`.

    Computed once per step and scene, whichever sensors read it.
    """
    key = ("gazebo", id(objects))
    cached: np.ndarray | None = step._per_scene.get(key)
    if cached is not None:
        return cached
    i1, i2 = step.objects(objects)
    contacts = step.contacts
    involved = np.unique(np.concatenate([i1, i2]))
    origins = step.poses(objects, involved.tolist())[:, :3, 3]
    positions = contacts.pos
    force = step.forces
    cached = np.empty((len(i1), 19))
    cached[:, _SPANS["positions"]] = positions
    cached[:, _SPANS["normals"]] = -contacts.normal  # from collision2 into collision1
    cached[:, _SPANS["depths"]] = -contacts.penetration_depth  # positive on overlap
    cached[:, _SPANS["body_1_force"]] = force
    cached[:, _SPANS["body_2_force"]] = -force
    lever_1 = positions - origins[np.searchsorted(involved, i1)]
    lever_2 = positions - origins[np.searchsorted(involved, i2)]
    with np.errstate(over="ignore", invalid="ignore"):  # the sensors refuse what overflows
        cached[:, _SPANS["body_1_torque"]] = _cross(lever_1, force)
        cached[:, _SPANS["body_2_torque"]] = _cross(lever_2, -force)
    step._per_scene[key] = cached
    return cached


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product of two (k, 3) arrays."""
    out = np.empty_like(a)
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out
