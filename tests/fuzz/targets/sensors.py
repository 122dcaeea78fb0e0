"""Contact sensors: constructors, steps and writes with hostile values; readings checked
against the contacts and a penalty force in closed form."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import spatialcontact as sc
from spatialcontact import sensors as S

from .. import values as V
from ..core import Case, close, finite, target
from .common import r, trans


def _world(rng: np.random.Generator) -> tuple[sc.Scene, Any, Any, float]:
    """A table and a box resting ``depth`` into it (random depth, possibly apart)."""
    depth = float(rng.uniform(-0.01, 0.02))
    scene = sc.Scene()
    table = sc.Cuboid([4.0, 2.0, 0.2], pose=trans(0, 0, -0.1))
    box = sc.Cuboid([0.4, 0.4, 0.4], pose=trans(0, 0, 0.2 - depth))
    scene.add(table, "table")
    scene.add(box, "box")
    return scene, table, box, depth


def _dt_pick(rng: np.random.Generator) -> V.Pick:
    """A time step: the sensors' clock counts whole nanoseconds, up to 1e9 s."""
    return V.real(rng, lambda x: 1e-9 <= x <= 1e9, V.log_uniform(1e-3, 0.1))


def _finite_number(value: Any) -> bool:
    try:
        return isinstance(value, (int, float)) and math.isfinite(float(value))
    except OverflowError:
        return False


@target(
    "sensor hub",
    covers=[
        "SensorHub",
        "SensorHub.step",
        "SensorHub.feed",
        "SensorHub.reset",
        "SensorHub.sensors=",
        "PenaltyForce",
        "PenaltyForce.reset",
    ],
    weight=3,
)
def hub(rng: np.random.Generator, env: Any) -> Case:
    scene, _, box, depth = _world(rng)
    on_box = S.ObjectContactSensor(box)
    stiffness = 2e4
    which = ("dt", "stiffness", "damping", "exponent", "sensors", "max_contacts", "forces", "feed")[
        int(rng.integers(8))
    ]
    pf_args: dict[str, Any] = {"stiffness": stiffness}
    pick = V.Pick(0.01, "answer", 0.01)
    param: Any = which
    sensors_arg: Any = [on_box]
    hub_kwargs: dict[str, Any] = {}
    step_kwargs: dict[str, Any] = {}
    assign = False
    if which == "dt" or which == "feed":
        pick = _dt_pick(rng)
        param = "dt"
    elif which == "stiffness":
        pick = V.real(rng, lambda x: math.isfinite(x) and 0 < x <= 1e12, V.log_uniform(1.0, 1e6))
        pf_args["stiffness"] = pick.value
        if pick.expect == "answer" and pick.number > 1e9:
            pick.expect = "either"
    elif which == "damping":
        pick = V.real(rng, lambda x: math.isfinite(x) and 0 <= x <= 1e9, V.log_uniform(1e-2, 1e3))
        pf_args["damping"] = pick.value
    elif which == "exponent":
        pick = V.real(rng, lambda x: math.isfinite(x) and 1.0 <= x <= 3.0, V.uniform(1.0, 2.0))
        pf_args["exponent"] = pick.value
        if pick.expect == "error" and _finite_number(pick.value) and float(pick.value) > 0:
            pick.expect = "either"  # the accepted range of exponents is the model's
    elif which == "sensors":
        options: list[tuple[Any, str]] = [
            ([on_box], "answer"),
            ((on_box,), "answer"),
            ([], "answer"),
            (None, "error"),
            ([5], "error"),
            (on_box, "either"),
            ([on_box, on_box], "either"),
            (["box"], "error"),
            ([S.ObjectContactSensor(sc.Sphere(0.1))], "error"),  # a shape in no scene
        ]
        sensors_arg, expect = options[int(rng.integers(len(options)))]
        pick = V.Pick(sensors_arg, expect)
        assign = bool(rng.integers(2))  # given to the constructor, or assigned afterwards
    elif which == "max_contacts":
        pick = V.integer(rng, 1, S.hub.MAX_CONTACTS_PER_PAIR)
        hub_kwargs["max_contacts_per_pair"] = pick.value
        param = "max_contacts_per_pair"
    else:
        n_guess = 1 if depth > 0 else 0
        options2: list[tuple[Any, str]] = [
            (None, "answer"),
            (np.zeros((n_guess, 3)), "answer"),
            (np.zeros(n_guess), "answer"),
            (np.zeros((n_guess + 1, 3)), "error"),
            (np.full((n_guess, 3), np.nan), "either"),
            ("forces", "error"),
            (np.zeros((n_guess, 3), dtype=complex), "error"),
            (np.zeros((n_guess, 2)), "error"),
            (np.zeros((n_guess, 3)).astype(object), "error"),
        ]
        value, expect = options2[int(rng.integers(len(options2)))]
        if isinstance(value, np.ndarray) and value.size == 0 and expect == "error":
            expect = "either"
        step_kwargs["forces"] = value
        pick = V.Pick(value, expect)

    def call() -> Any:
        model = S.PenaltyForce(**pf_args)
        if assign:
            h = S.SensorHub(scene, [on_box], force_model=model, **hub_kwargs)
            try:
                h.sensors = sensors_arg
            except Exception:
                assert h.sensors == (on_box,), f"sensors changed to {h.sensors} on a refusal"
                raise
        else:
            h = S.SensorHub(scene, sensors_arg, force_model=model, **hub_kwargs)
        dt = pick.value if which in ("dt", "feed") else 0.01
        before = h.time
        try:
            if which == "feed":
                h.feed(scene.contacts(), dt)
                found = None
            else:
                found = h.step(dt, **step_kwargs)
        except Exception:
            assert h.time == before, f"time moved to {h.time} on a refused step"
            raise
        return h, found, dt, model

    def check(result: Any) -> None:
        h, found, dt, model = result
        close(h.time, float(np.asarray(dt).reshape(-1)[0]), 1e-9, "hub time after one step")
        touching = depth > 1e-9
        listed = isinstance(sensors_arg, (list, tuple)) and on_box in sensors_arg
        if (listed or sensors_arg is on_box) and abs(depth) > 1e-9:
            assert on_box.in_contact == touching, f"in_contact {on_box.in_contact}, depth {depth}"
        if found is not None and which in ("dt", "stiffness") and len(found) and model is not None:
            k = float(np.asarray(pf_args["stiffness"]).reshape(-1)[0])
            magnitudes = model.magnitudes(found)
            finite(magnitudes, "force magnitudes")
            for c, m in zip(found, magnitudes, strict=True):
                close(float(m), k * max(0.0, -c.penetration_depth), 1e-6, "penalty force")
        h.reset()
        assert h.time == 0.0

    label = f"SensorHub(step) {which}={r(pick.value)} pf={r(pf_args)} depth={depth:.4f}"
    if assign:
        label += " (assigned to hub.sensors)"
    return Case(
        label,
        call,
        pick.expect,
        (param, "sensors", "sensor"),
        pick.value,
        check,
        shows_value=which not in ("sensors",) and not isinstance(pick.value, np.ndarray),
    )


@target(
    "penalty force",
    covers=[
        "PenaltyForce.magnitudes",
        "PenaltyForce.forces",
        "spatialcontact.sensors:resolve_forces",
        "spatialcontact.sensors:tangential_part",
    ],
    weight=2,
)
def penalty(rng: np.random.Generator, env: Any) -> Case:
    _, table, box, _ = _world(rng)
    contacts = box.contacts(table, max_contacts=4)
    n = len(contacts)
    model = S.PenaltyForce(1e3, damping=10.0 if rng.random() < 0.3 else 0.0)
    which = ("approach_speed", "dt", "forces", "tangential", "contacts")[int(rng.integers(5))]
    if which == "approach_speed":
        options: list[tuple[Any, str]] = [
            (None, "answer"),
            (np.ones(n), "answer"),
            (1.0, "either"),
            (np.ones(n + 1), "error"),
            (np.full(n, np.nan), "error"),
            ("fast", "error"),
            (np.ones((n, 3)), "either"),
        ]
        value, expect = options[int(rng.integers(len(options)))]
        if n == 0 and expect == "error":
            expect = "either"

        def call() -> Any:
            return model.forces(contacts, approach_speed=value), model.magnitudes(
                contacts, approach_speed=value
            )

        param: Any = "approach_speed"
    elif which == "dt":
        pick = _dt_pick(rng)  # the hub's rule: the same step is taken or refused by both
        value, expect = pick.value, pick.expect
        if pick.value is None:
            expect = "answer"

        def call() -> Any:
            model.reset()
            return model.forces(contacts, dt=value), model.magnitudes(contacts, dt=value)

        param = "dt"
    elif which == "forces":
        options = [
            (None, "answer"),
            (np.zeros((n, 3)), "answer"),
            (np.ones(n), "answer"),
            (np.zeros((n + 1, 3)), "error"),
            ("f", "error"),
            (np.full((n, 3), np.inf), "error"),
            (np.zeros((n, 3), dtype=complex), "error"),
            ([[0.0, 0.0]] * max(n, 1), "error"),
        ]
        value, expect = options[int(rng.integers(len(options)))]
        if n == 0 and isinstance(value, np.ndarray) and value.size == 0 and expect == "error":
            expect = "either"

        def call() -> Any:
            return S.resolve_forces(contacts, value)

        param = "forces"
    elif which == "tangential":
        f = rng.normal(size=(3, 3))
        nn = rng.normal(size=(3, 3))
        nn /= np.linalg.norm(nn, axis=1, keepdims=True)
        options = [
            ((f, nn), "answer"),
            ((f[:2], nn), "error"),
            ((f, nn[:, :2]), "error"),
            ((f * np.nan, nn), "either"),
            (("f", nn), "error"),
            ((f, None), "error"),
            ((f.astype(complex), nn), "error"),
        ]
        (fv, nv), expect = options[int(rng.integers(len(options)))]
        value = fv if expect == "answer" or fv is not f else nv

        def call() -> Any:
            return S.tangential_part(fv, nv)

        param = ("forces", "normals")
    else:
        options = [
            (contacts, "answer"),
            (list(contacts), "either"),
            (None, "error"),
            (5, "error"),
            (sc.Contacts(), "answer"),
        ]
        value, expect = options[int(rng.integers(len(options)))]

        def call() -> Any:
            return model.magnitudes(value)

        param = "contacts"

    no_speed = which == "contacts" or (which in ("approach_speed", "dt") and value is None)
    if no_speed and model.damping > 0 and expect == "answer":
        expect = "either"  # damping needs the approach speed (or dt): refused, or no contacts
        param = (*((param,) if isinstance(param, str) else param), "damping", "approach_speed")

    def check(result: Any) -> None:
        if which == "tangential" and expect == "answer":
            assert np.allclose(np.einsum("ij,ij->i", result, nv), 0.0, atol=1e-9), "not tangential"
        if which in ("approach_speed", "dt") and value is None and model.damping == 0:
            forces, mags = result
            for c, m, fv3 in zip(contacts, mags, forces, strict=True):
                close(float(m), 1e3 * max(0.0, -c.penetration_depth), 1e-6, "penalty magnitude")
                close(float(np.linalg.norm(fv3)), float(m), 1e-6, "force length")

    return Case(
        f"penalty {which}={r(value)} ({n} contacts)",
        call,
        expect,
        param,
        value,
        check,
        shows_value=not isinstance(value, (np.ndarray, list, sc.Contacts)) and not no_speed,
    )


@target(
    "object sensor",
    covers=[
        "ObjectContactSensor",
        "ObjectContactSensor.add",
        "ObjectContactSensor.add_force",
        "ObjectContactSensor.tick",
        "ObjectContactSensor.step",
        "ObjectContactSensor.clear",
        "ObjectContactSensor.reset",
        "ObjectContactSensor.plot",
        "ObjectContactSensor.step_plot",
        "ObjectContactSensor.plot_clear",
    ],
    weight=3,
)
def object_sensor(rng: np.random.Generator, env: Any) -> Case:
    _, table, box, depth = _world(rng)
    which = ("ctor", "add", "add_force", "tick", "step", "plot")[int(rng.integers(6))]
    kwargs: dict[str, Any] = {}
    param: Any = which
    value: Any = None
    expect = "answer"
    shape: Any = box
    if which == "ctor":
        key = ("shape", "force_scale", "marker_size", "linewidth", "alpha", "color", "name")[
            int(rng.integers(7))
        ]
        if key == "shape":
            options: list[tuple[Any, str]] = [
                (box, "answer"),
                (None, "error"),
                (5, "error"),
                ("box", "error"),
                (sc.CollisionShapeGroup([sc.Sphere(0.1)]), "answer"),
            ]
            shape, expect = options[int(rng.integers(len(options)))]
            value = shape
        elif key == "color":
            from .shapes import _color_pick

            pick = _color_pick(rng)
            kwargs[key], value, expect = pick.value, pick.value, pick.expect
            if pick.value is None:
                expect = "either"
        elif key == "name":
            pick = V.name(rng)
            kwargs[key], value, expect = pick.value, pick.value, pick.expect
        else:
            ok = (
                (lambda x: math.isfinite(x) and 0 <= x <= 1)
                if key == "alpha"
                else (lambda x: math.isfinite(x) and x > 0)
            )
            if key in ("linewidth", "marker_size"):
                ok = lambda x: math.isfinite(x) and x >= 0  # noqa: E731  (zero draws nothing)
            pick = V.real(rng, ok, V.uniform(0.1, 1.0))
            if key == "force_scale" and pick.expect == "error" and _finite_number(pick.value):
                pick.expect = "either"  # a zero or negative scale may be allowed
            kwargs[key], value, expect = pick.value, pick.value, pick.expect
        param = key
    sensor_box = box

    def call() -> Any:
        sensor = (
            S.ObjectContactSensor(shape, **kwargs)
            if which == "ctor"
            else S.ObjectContactSensor(sensor_box)
        )
        contacts = sensor_box.contacts(table)
        if which in ("ctor",):
            return sensor, contacts
        if which == "add":
            for c in contacts:
                sensor.add(c, force=add_value)
            return sensor, contacts
        if which == "add_force":
            sensor.add_force(add_value)
            return sensor, contacts
        if which == "tick":
            for c in contacts:
                sensor.add(c)
            sensor.tick(add_value)
            return sensor, contacts
        if which == "step":
            sensor.step(add_value)
            return sensor, contacts
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig = plt.figure()
        try:
            ax = fig.add_subplot(projection="3d") if add_value == "3d" else fig.add_subplot()
            target_ax = ax if add_value in ("2d", "3d") else add_value
            for c in contacts:
                sensor.add(c)
            sensor.plot(target_ax)
            sensor.step_plot()
            sensor.plot_clear()
            sensor.clear()
            sensor.reset()
        finally:
            plt.close(fig)
        return sensor, contacts

    add_value: Any = None
    if which == "add":
        options = [
            (None, "answer"),
            (np.zeros(3), "answer"),
            (np.full(3, np.nan), "error"),
            ("f", "error"),
            (np.zeros(2), "either"),
            (5, "either"),
        ]  # 2D: IR-SIM's forces
        add_value, expect = options[int(rng.integers(len(options)))]
        value, param = add_value, ("force", "contact")
    elif which == "add_force":
        options = [
            (np.zeros(3), "answer"),
            ([1.0, 0.0, 0.0], "answer"),
            (np.full(3, np.inf), "error"),
            (None, "error"),
            ("f", "error"),
            (np.zeros(4), "error"),
            (np.zeros(2), "either"),
        ]
        add_value, expect = options[int(rng.integers(len(options)))]
        value, param = add_value, "force"
    elif which == "tick":
        pick = V.real(rng, lambda x: 0 <= x <= 1e9, V.uniform(0.0, 0.1))
        add_value, expect, value, param = pick.value, pick.expect, pick.value, "step_time"
    elif which == "step":
        add_value = [None, {}, 5, "state", np.zeros(3)][int(rng.integers(5))]
        expect, value, param = "either", add_value, "state"
    elif which == "plot":
        add_value = ["2d", "3d", None, 5, "ax"][int(rng.integers(5))]
        expect = "answer" if add_value in ("2d", "3d") else "error"
        value, param = add_value, "ax"

    if which == "add" and not len(box.contacts(table)):
        expect = "answer"  # nothing touches: no record is added, so no force is read

    def check(result: Any) -> None:
        sensor, contacts = result
        if which == "ctor":
            return
        if which in ("add", "tick", "plot") and len(contacts) and which != "plot":
            assert sensor.in_contact, "a contact was added but in_contact is False"
            assert sensor.partners == [table], f"partners {sensor.partners}"
        if which == "tick" and len(contacts):
            close(
                sensor.contact_time,
                float(np.asarray(add_value).reshape(-1)[0]),
                1e-12,
                "contact_time",
            )

    return Case(
        f"ObjectContactSensor {which} {r(kwargs)} value={r(value)} depth={depth:.4f}",
        call,
        expect,
        param,
        value,
        check,
        shows_value=not isinstance(value, (sc.CollisionShape, np.ndarray, list)),
    )


@target(
    "matrix and named sensors",
    covers=[
        "MatrixContactSensor",
        "MatrixContactSensor.update",
        "NamedContactSensor",
        "NamedContactSensor.active=",
        "NamedContactSensor.update_rate=",
        "NamedContactSensor.on_contacts",
        "NamedContactSensor.update",
        "NamedContactSensor.contacts",
        "NamedContactSensor.collision_name",
        "NamedContactSensor.collision_contact_count",
        "NamedContactSensor.connect_updated",
        "NamedContactSensor.disconnect_updated",
        "NamedContactSensor.reset_last_update_time",
        "Connection",
        "ContactMessage",
        "ContactsMessage",
        "Wrenches",
    ],
    weight=3,
)
def matrix_named(rng: np.random.Generator, env: Any) -> Case:
    scene, _, _, depth = _world(rng)
    contacts = scene.contacts()
    which = (
        "matrix sensing",
        "matrix counterparts",
        "matrix update",
        "named ctor",
        "named rate",
        "named update",
        "named queries",
        "named callbacks",
    )[int(rng.integers(8))]
    selections: list[tuple[Any, str]] = [
        ("box", "answer"),
        (["box"], "answer"),
        ("*", "answer"),
        ("b*", "answer"),
        ([1], "answer"),
        ("nomatch*", "error"),
        ([99], "error"),
        ([1, 1], "error"),
        (5, "either"),
        (None, "error"),
        ([1, "box"], "error"),
        ([True], "error"),
        ("", "error"),
        (["box", "box"], "either"),
    ]
    value: Any = None
    expect = "answer"
    param: Any = which.split()[-1]
    if which.startswith("matrix"):
        sensing: Any = "box"
        counterparts: Any = None
        forces: Any = None
        if which == "matrix sensing":
            sensing, expect = selections[int(rng.integers(len(selections)))]
            value, param = sensing, ("sensing", "selection", "index", "matched")
        elif which == "matrix counterparts":
            counterparts, expect = selections[int(rng.integers(len(selections)))]
            if counterparts is None:
                expect = "answer"
            value, param = counterparts, ("counterparts", "selection", "index", "matched")
        else:
            n = len(contacts)
            options: list[tuple[Any, str]] = [
                (None, "answer"),
                (np.zeros((n, 3)), "answer"),
                (np.ones(n), "answer"),
                (np.zeros((n + 2, 3)), "error"),
                ("f", "error"),
                (np.full((n, 3), np.nan), "either"),
            ]
            forces, expect = options[int(rng.integers(len(options)))]
            value, param = forces, "forces"

        def call() -> Any:
            m = S.MatrixContactSensor(scene, sensing, counterparts=counterparts)
            m.update(contacts, forces)
            return m

        def check_matrix(m: Any) -> None:
            assert len(m.sensing_names) >= 1
            if m.force_matrix is not None:
                finite(m.force_matrix, "force matrix")

    else:
        collisions: Any = ["box"]
        rate: Any = 10.0
        sim_time: Any = 0.05
        if which == "named ctor":
            options2: list[tuple[Any, str]] = [
                ("box", "answer"),
                (["box", "table"], "answer"),
                (["nothing"], "error"),
                ([], "error"),
                (None, "error"),
                (5, "error"),
                ([5], "error"),
                (["box", "box"], "either"),
            ]
            collisions, expect = options2[int(rng.integers(len(options2)))]
            value, param = collisions, ("collisions", "collision", "name")
        elif which == "named rate":
            pick = V.real(rng, lambda x: x == 0 or 1e-9 <= x <= 1e9, V.log_uniform(0.1, 100.0))
            rate, value, expect, param = pick.value, pick.value, pick.expect, "update_rate"
        elif which == "named update":
            pick = V.real(rng, lambda x: 0 <= x <= 1e9, V.uniform(0.0, 1.0))
            sim_time, value, expect, param = (
                pick.value,
                pick.value,
                pick.expect,
                ("sim_time", "time"),
            )
        else:
            value, expect, param = None, "answer", ()

        def call() -> Any:
            s = S.NamedContactSensor(
                scene, collisions, update_rate=rate if which == "named ctor" else 10.0
            )
            if which == "named rate":
                s.update_rate = rate
                s.active = True
            calls: list[int] = []
            connection = s.connect_updated(lambda: calls.append(1))
            s.on_contacts(contacts, sim_time)
            updated = s.update(sim_time, force=True)
            msg = s.contacts()
            if which == "named queries":
                name: Any = [s.collision_name(0), "nothing", 5, None][int(rng.integers(4))]
                try:
                    s.collision_contact_count(name)
                    s.contacts(name)
                except sc.SpatialContactError as error:
                    assert isinstance(error, (ValueError, TypeError, KeyError)), repr(error)
                try:
                    s.collision_name(int(rng.integers(-2, 4)))
                except sc.SpatialContactError as error:
                    assert isinstance(error, (ValueError, TypeError, KeyError, IndexError)), repr(
                        error
                    )
            s.reset_last_update_time()
            s.disconnect_updated(connection)
            S.Connection(s, lambda: None)
            return s, msg, updated, calls

        def check_named(result: Any) -> None:
            s, msg, updated, calls = result
            assert isinstance(msg, S.ContactsMessage)
            if updated:
                assert calls, "updated without calling the callback"
            touching = any("box" in (c.collision1, c.collision2) for c in msg.contact)
            if abs(depth) > 1e-9 and "box" in s.collisions:
                assert touching == (depth > 0), f"message contacts {touching}, depth {depth}"

    check = check_matrix if which.startswith("matrix") else check_named
    return Case(
        f"{which} value={r(value)} depth={depth:.4f}",
        call,
        expect,
        param,
        value,
        check,
        shows_value=not isinstance(value, (np.ndarray, list)) and value is not None,
    )
