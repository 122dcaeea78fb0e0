"""Forces for the sensors: resolve_forces, tangential_part and PenaltyForce.

Conventions under test: a force array row is the force on ``o1`` from ``o2``; a magnitude ``m``
(positive pushes apart) becomes ``-m * normal`` since the normal points from ``o1`` to ``o2``;
PenaltyForce gives ``max(0, δ^e (k + c δ̇))`` with ``δ = -penetration_depth``.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from conftest import trans
from hypothesis import given
from hypothesis import strategies as st

import spatialcontact as sc
from spatialcontact.sensors import (
    PenaltyForce,
    SensorTypeError,
    SensorValueError,
    resolve_forces,
    tangential_part,
)


def contact(
    a: sc.CollisionShape,
    b: sc.CollisionShape,
    depth: float,
    normal: tuple[float, float, float] = (0.0, 0.0, 1.0),
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0),
    b1: int = -1,
    b2: int = -1,
) -> sc.Contact:
    """A hand-made contact with witness points consistent with ``depth`` and ``normal``."""
    p = np.array(pos, dtype=float)
    n = np.array(normal, dtype=float)
    points = [p - 0.5 * depth * n, p + 0.5 * depth * n]
    return sc.Contact(a, b, b1, b2, n, points, p, depth)


@pytest.fixture
def pair() -> tuple[sc.Sphere, sc.Sphere]:
    return sc.Sphere(1.0), sc.Sphere(1.0)


# ------------------------------------------------------------------------- resolve_forces


def test_resolve_none_gives_zeros_and_invalid(pair: tuple[sc.Sphere, sc.Sphere]) -> None:
    a, b = pair
    forces, valid = resolve_forces(sc.Contacts([contact(a, b, -0.1)] * 2))
    assert forces.shape == (2, 3) and not forces.any()
    assert valid is False


def test_resolve_array_is_kept(pair: tuple[sc.Sphere, sc.Sphere]) -> None:
    a, b = pair
    given_forces = [[1.0, 2.0, 3.0], [-4.0, 5.0, 6.0]]
    forces, valid = resolve_forces(sc.Contacts([contact(a, b, -0.1)] * 2), given_forces)
    assert valid is True
    np.testing.assert_array_equal(forces, given_forces)


def test_resolve_magnitudes_push_o1_against_the_normal(pair: tuple[sc.Sphere, sc.Sphere]) -> None:
    a, b = pair
    # normals +x and +z; magnitudes 2 and 3 -> forces on o1: -2 x and -3 z.
    contacts = sc.Contacts([contact(a, b, -0.1, (1, 0, 0)), contact(a, b, -0.1, (0, 0, 1))])
    forces, valid = resolve_forces(contacts, [2.0, 3.0])
    assert valid
    np.testing.assert_array_equal(forces, [[-2.0, 0.0, 0.0], [0.0, 0.0, -3.0]])


def test_resolve_callable_receives_the_contacts(pair: tuple[sc.Sphere, sc.Sphere]) -> None:
    a, b = pair
    contacts = sc.Contacts([contact(a, b, -0.1)])
    seen: list[sc.Contacts] = []

    def model(cs: sc.Contacts) -> list[float]:
        seen.append(cs)
        return [5.0]

    forces, valid = resolve_forces(contacts, model)
    assert seen == [contacts] and valid
    np.testing.assert_array_equal(forces, [[0.0, 0.0, -5.0]])


def test_resolve_empty_contacts() -> None:
    forces, valid = resolve_forces(sc.Contacts(), [])
    assert forces.shape == (0, 3) and valid
    forces, valid = resolve_forces(sc.Contacts(), np.zeros((0, 3)))
    assert forces.shape == (0, 3) and valid


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        ([[1.0, 2.0, 3.0]], SensorValueError, r"shape \(2, 3\) or \(2,\).*got shape \(1, 3\)"),
        ([1.0, 2.0, 3.0], SensorValueError, r"got shape \(3,\)"),
        ([[1.0, 2.0], [3.0, 4.0]], SensorValueError, r"got shape \(2, 2\)"),
        ([1.0, float("nan")], SensorValueError, "forces must be finite"),
        ("12", SensorTypeError, "forces must be numbers, got '12'"),
        ([1.0, "x"], SensorTypeError, "forces must be numbers"),
        (lambda cs: None, SensorValueError, "forces callable returned None"),
    ],
)
def test_resolve_errors(
    pair: tuple[sc.Sphere, sc.Sphere], value: object, error: type, match: str
) -> None:
    a, b = pair
    contacts = sc.Contacts([contact(a, b, -0.1)] * 2)
    with pytest.raises(error, match=match):
        resolve_forces(contacts, value)


@pytest.mark.parametrize("shape", [(0, 7), (5, 0), (0, 0), (1,)])
def test_resolve_empty_contacts_checks_the_shape(shape: tuple[int, ...]) -> None:
    with pytest.raises(
        SensorValueError,
        match=rf"^forces must have shape \(0, 3\) or \(0,\) to match the 0 contacts, got shape "
        rf"{re.escape(str(shape))}$",
    ):
        resolve_forces(sc.Contacts(), np.zeros(shape))


def test_resolve_refuses_non_contacts() -> None:
    with pytest.raises(SensorTypeError, match=r"contacts must be a spatialcontact\.Contacts"):
        resolve_forces([1, 2])  # type: ignore[arg-type]


def test_errors_are_builtin_errors_too() -> None:
    assert issubclass(SensorValueError, ValueError)
    assert issubclass(SensorTypeError, TypeError)
    assert issubclass(SensorValueError, sc.SpatialContactError)


# ------------------------------------------------------------------------- tangential_part


def test_tangential_part_known_answer() -> None:
    # f = (3, 4, 5), n = z: normal part (0, 0, 5), tangential (3, 4, 0).
    out = tangential_part(np.array([[3.0, 4.0, 5.0]]), np.array([[0.0, 0.0, 1.0]]))
    np.testing.assert_allclose(out, [[3.0, 4.0, 0.0]])


@given(
    st.lists(st.floats(-100, 100), min_size=3, max_size=3),
    st.lists(st.floats(-1, 1), min_size=3, max_size=3).filter(lambda v: np.linalg.norm(v) > 0.1),
)
def test_tangential_part_is_perpendicular_to_the_normal(f: list[float], n: list[float]) -> None:
    normal = np.array([n]) / np.linalg.norm(n)
    t = tangential_part(np.array([f]), normal)
    assert abs(float(t[0] @ normal[0])) < 1e-9
    # what is left is along the normal
    rest = np.array(f) - t[0]
    assert np.linalg.norm(np.cross(rest, normal[0])) < 1e-9


@pytest.mark.parametrize(
    ("normal", "length"), [([0.0, 0.0, 2.0], "2"), ([1.0, 1.0, 1.0], "1.73205"), ([0.0] * 3, "0")]
)
def test_tangential_part_refuses_normals_that_are_not_unit(
    normal: list[float], length: str
) -> None:
    with pytest.raises(
        SensorValueError,
        match=rf"^normals must be unit vectors \(length 1 within 1e-06\), got row 1 "
        rf"{re.escape(str(normal))} of length {re.escape(length)}$",
    ):
        tangential_part([[1.0, 2.0, 3.0]] * 2, [[0.0, 0.0, 1.0], normal])


def test_tangential_part_takes_normals_within_the_tolerance() -> None:
    out = tangential_part([[3.0, 4.0, 5.0]], [[0.0, 0.0, 1.0 + 9e-7]])
    np.testing.assert_allclose(out, [[3.0, 4.0, 0.0]], atol=1e-5)


def test_tangential_part_refuses_a_result_that_overflows() -> None:
    with pytest.raises(
        SensorValueError,
        match=r"^forces row 0 is too large: its tangential part overflows, got "
        r"\[1\.5e\+308, 1\.5e\+308, 0\.0\]$",
    ):
        tangential_part([[1.5e308, 1.5e308, 0.0]], [[0.6, 0.8, 0.0]])  # f . n is 2.1e308
    huge = tangential_part([[1e308, 1e308, 0.0]], [[0.0, 0.0, 1.0]])  # nothing along n
    assert huge.tolist() == [[1e308, 1e308, 0.0]]


# ------------------------------------------------------------------------- PenaltyForce


def test_linear_spring_on_real_spheres() -> None:
    # Unit spheres 1.5 apart overlap by 2 - 1.5 = 0.5; k = 1000 -> 500 N, pushing o1 along -x.
    a, b = sc.Sphere(1.0), sc.Sphere(1.0, pose=trans(1.5))
    model = PenaltyForce(1000.0)
    contacts = a.contacts(b)
    np.testing.assert_allclose(model.magnitudes(contacts), [500.0])
    np.testing.assert_allclose(model.forces(contacts), [[-500.0, 0.0, 0.0]], atol=1e-9)


def test_hunt_crossley_exponent(pair: tuple[sc.Sphere, sc.Sphere]) -> None:
    a, b = pair
    # k = 100, e = 1.5, δ = 0.04: 100 * 0.04^1.5 = 100 * 0.008 = 0.8 N.
    model = PenaltyForce(100.0, exponent=1.5)
    np.testing.assert_allclose(model.magnitudes(sc.Contacts([contact(a, b, -0.04)])), [0.8])


def test_separated_contacts_have_no_force(pair: tuple[sc.Sphere, sc.Sphere]) -> None:
    a, b = pair
    # A contact reported through a security margin has a positive depth: no overlap.
    model = PenaltyForce(100.0, damping=10.0)
    out = model.magnitudes(sc.Contacts([contact(a, b, 0.02)]), approach_speed=[5.0])
    assert out.tolist() == [0.0]


def test_damping_with_given_approach_speed(pair: tuple[sc.Sphere, sc.Sphere]) -> None:
    a, b = pair
    contacts = sc.Contacts([contact(a, b, -0.1), contact(a, b, -0.1)])
    model = PenaltyForce(1000.0, damping=50.0)
    # δ (k + c δ̇) = 0.1 * (1000 + 50 * 2) = 110; and 0.1 * (1000 + 50 * -30) = -50 -> 0.
    out = model.magnitudes(contacts, approach_speed=[2.0, -30.0])
    np.testing.assert_allclose(out, [110.0, 0.0])


def test_damping_from_the_previous_step(pair: tuple[sc.Sphere, sc.Sphere]) -> None:
    a, b = pair
    c = sc.Sphere(1.0)
    model = PenaltyForce(1000.0, damping=100.0)
    # First call: no history, δ̇ = 0 -> 0.1 * 1000 = 100.
    first = model.magnitudes(sc.Contacts([contact(a, b, -0.1)]), dt=0.01)
    np.testing.assert_allclose(first, [100.0])
    # Second call, dt = 0.01: (a, b) deepens to 0.12, δ̇ = 0.02 / 0.01 = 2 ->
    # 0.12 * (1000 + 100 * 2) = 144. (a, c) is new: δ_previous = 0, δ̇ = 0.05 / 0.01 = 5 ->
    # 0.05 * (1000 + 500) = 75.
    second = model.magnitudes(sc.Contacts([contact(a, b, -0.12), contact(a, c, -0.05)]), dt=0.01)
    np.testing.assert_allclose(second, [144.0, 75.0])
    # Third: (a, b) recedes to 0.11, δ̇ = -1 -> 0.11 * (1000 - 100) = 99.
    third = model.magnitudes(sc.Contacts([contact(a, b, -0.11)]), dt=0.01)
    np.testing.assert_allclose(third, [99.0])
    # reset() forgets the history: δ̇ = 0 again -> 0.11 * 1000 = 110.
    model.reset()
    np.testing.assert_allclose(
        model.magnitudes(sc.Contacts([contact(a, b, -0.11)]), dt=0.01), [110.0]
    )


def test_repeated_keys_are_matched_by_rank(pair: tuple[sc.Sphere, sc.Sphere]) -> None:
    a, b = pair
    model = PenaltyForce(1000.0, damping=100.0)
    model.magnitudes(sc.Contacts([contact(a, b, -0.1), contact(a, b, -0.2)]), dt=0.1)
    # Same key (a, b, -1, -1) twice: rank 0 was 0.1, rank 1 was 0.2.
    # Now 0.2 (δ̇ = 1) and 0.2 (δ̇ = 0): 0.2 * (1000 + 100) = 220 and 0.2 * 1000 = 200.
    out = model.magnitudes(sc.Contacts([contact(a, b, -0.2), contact(a, b, -0.2)]), dt=0.1)
    np.testing.assert_allclose(out, [220.0, 200.0])


def test_primitive_indices_are_part_of_the_key(pair: tuple[sc.Sphere, sc.Sphere]) -> None:
    a, b = pair
    model = PenaltyForce(1000.0, damping=100.0)
    model.magnitudes(sc.Contacts([contact(a, b, -0.1, b1=3)]), dt=0.1)
    # Triangle 4 was not touching before: δ̇ = 0.1 / 0.1 = 1 -> 0.1 * 1100 = 110;
    # triangle 3 held 0.1: δ̇ = 0 -> 100.
    out = model.magnitudes(
        sc.Contacts([contact(a, b, -0.1, b1=4), contact(a, b, -0.1, b1=3)]), dt=0.1
    )
    np.testing.assert_allclose(out, [110.0, 100.0])


def test_empty_contacts(pair: tuple[sc.Sphere, sc.Sphere]) -> None:
    model = PenaltyForce(10.0, damping=1.0)
    assert model.magnitudes(sc.Contacts(), dt=0.1).shape == (0,)
    assert model.forces(sc.Contacts(), dt=0.1).shape == (0, 3)


def test_repr() -> None:
    text = repr(PenaltyForce(1000.0, damping=2.5, exponent=1.5))
    assert text == "PenaltyForce(stiffness=1000, damping=2.5, exponent=1.5)"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"stiffness": 0.0}, SensorValueError, r"stiffness must be positive, .* got 0\.0$"),
        ({"stiffness": -1.0}, SensorValueError, r"stiffness must be positive, .* got -1\.0$"),
        ({"stiffness": 1e308}, SensorValueError, r"at most 1e\+12 N/m\^e, got 1e\+308$"),
        ({"stiffness": True}, SensorTypeError, "stiffness must be a real number, got True$"),
        ({"stiffness": 10**400}, SensorValueError, r"stiffness must be .* got 1\.000e\+400$"),
        ({"stiffness": 1.0, "damping": 1e13}, SensorValueError, r"damping .* at most 1e\+12 N"),
        ({"stiffness": 1.0, "exponent": 3.5}, SensorValueError, r"exponent .* at most 3, got 3\.5"),
        ({"stiffness": 1.0, "damping": "0"}, SensorTypeError, "damping must be a real number"),
        ({"stiffness": "a"}, TypeError, "stiffness must be a real number, got 'a'"),
        ({"stiffness": 1.0, "damping": -1}, SensorValueError, "damping must be zero or positive"),
        ({"stiffness": 1.0, "exponent": 0.5}, SensorValueError, "exponent must be at least 1"),
        ({"stiffness": float("inf")}, ValueError, "stiffness must be finite, got inf"),
    ],
)
def test_penalty_construction_errors(kwargs: dict[str, object], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        PenaltyForce(**kwargs)  # type: ignore[arg-type]


def test_penalty_call_errors(pair: tuple[sc.Sphere, sc.Sphere]) -> None:
    a, b = pair
    contacts = sc.Contacts([contact(a, b, -0.1)])
    damped = PenaltyForce(10.0, damping=1.0)
    with pytest.raises(SensorValueError, match="damping needs the approach speed"):
        damped.magnitudes(contacts)
    with pytest.raises(SensorValueError, match=r"dt must be positive seconds in .* got 0\.0$"):
        damped.magnitudes(contacts, dt=0.0)
    with pytest.raises(SensorValueError, match=r"approach_speed must be 1 finite numbers"):
        damped.magnitudes(contacts, approach_speed=[1.0, 2.0])
    with pytest.raises(SensorTypeError, match="approach_speed must be numbers"):
        damped.magnitudes(contacts, approach_speed=["x"])
    with pytest.raises(SensorTypeError, match=r"contacts must be a spatialcontact\.Contacts"):
        damped.magnitudes([contacts[0]], dt=0.1)  # type: ignore[arg-type]


@given(
    st.floats(1.0, 1e5),
    st.floats(1.0, 2.0),
    st.lists(st.floats(-0.5, 0.5), min_size=1, max_size=8),
)
def test_penalty_forces_are_repulsive_and_monotone(
    stiffness: float, exponent: float, depths: list[float]
) -> None:
    a, b = sc.Sphere(1.0), sc.Sphere(1.0)
    contacts = sc.Contacts([contact(a, b, d) for d in depths])
    model = PenaltyForce(stiffness, exponent=exponent)
    m = model.magnitudes(contacts)
    assert np.all(m >= 0.0)
    assert np.all(m[np.array(depths) >= 0.0] == 0.0)
    order = np.argsort(depths)  # deeper (more negative) first
    assert np.all(np.diff(m[order]) <= 1e-9)  # deeper never gives less force
    f = model.forces(contacts)
    # on o1, against the normal (+z): never upwards
    assert np.all(f[:, 2] <= 0.0)


# ------------------------------------------------------------------ ranges and finite forces


def test_penalty_parameters_at_their_limits_give_finite_forces(
    pair: tuple[sc.Sphere, sc.Sphere],
) -> None:
    a, b = pair
    # the deepest overlap the size range allows: 2e6 m
    deep = sc.Contacts([contact(a, b, -2e6)])
    stiff = PenaltyForce(1e12, damping=1e12, exponent=3.0)
    assert stiff.magnitudes(deep, approach_speed=[1e3]).tolist() == [8e18 * (1e12 + 1e15)]
    assert np.isfinite(stiff.forces(deep, approach_speed=[-1e3])).all()


def test_a_force_that_overflows_is_refused(pair: tuple[sc.Sphere, sc.Sphere]) -> None:
    a, b = pair
    deep = sc.Contacts([contact(a, b, -0.1), contact(a, b, -2e6)])
    stiff = PenaltyForce(1e12, damping=1e12, exponent=3.0)
    with pytest.raises(
        SensorValueError,
        match=r"^the force of contact 1 is not finite \(inf\): overlap\^exponent \* \(stiffness "
        r"\+ damping \* approach_speed\) overflowed",
    ):
        stiff.magnitudes(deep, approach_speed=[0.0, 1e300])


def test_a_force_that_overflows_is_not_remembered(pair: tuple[sc.Sphere, sc.Sphere]) -> None:
    a, b = pair
    stiff = PenaltyForce(1e12, damping=1e12, exponent=3.0)
    stiff.magnitudes(sc.Contacts([contact(a, b, -0.1)]), approach_speed=[0.0])
    kept = stiff._previous
    deeper = sc.Contacts([contact(a, b, -0.2)])
    with pytest.raises(SensorValueError, match=r"^the force of contact 0 is not finite \(inf\)"):
        stiff.magnitudes(deeper, approach_speed=[1e300])
    assert stiff._previous == kept
    # the rate still comes from the last call that succeeded: (0.2 - 0.1) / 0.1 = 1 m/s
    (f,) = stiff.magnitudes(deeper, dt=0.1).tolist()
    assert f == pytest.approx(0.2**3 * (1e12 + 1e12 * 1.0))


def test_the_undamped_force_is_guarded_only_outside_the_parameter_range(
    pair: tuple[sc.Sphere, sc.Sphere],
) -> None:
    # Within the accepted range (stiffness at most 1e12, exponent at most 3) on depths within
    # the supported coordinates, no force can overflow and none is checked; a stiffness set
    # past the range afterwards goes back through the check.
    a, b = pair
    deep = sc.Contacts([contact(a, b, -0.1), contact(a, b, -2e6)])
    model = PenaltyForce(1e12, exponent=3.0)
    np.testing.assert_allclose(model.magnitudes(deep), [1e12 * 0.1**3, 1e12 * 2e6**3])
    model.stiffness = 1e300
    with pytest.raises(
        SensorValueError,
        match=r"^the force of contact 1 is not finite \(inf\): stiffness \* overlap\^exponent",
    ):
        model.magnitudes(deep)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (["1", "2"], r"^forces must be numbers, got \['1', '2'\] \(strings\)$"),
        (
            [True, 1.0],
            r"^forces must be numbers, got \[True, 1\.0\] \(booleans or masked arrays among",
        ),
        ([1.0, None], r"^forces must be numbers, got \[1\.0, None\] \(None among the values\)$"),
        ([1.0, 2j], r"^forces must be numbers, got \[1\.0, 2j\] \(complex numbers\)$"),
        (
            np.ma.masked_array([1.0, 2.0]),
            r"(?s)^forces must be numbers, got masked_array\(.* \(a masked array",
        ),
    ],
)
def test_resolve_refuses_what_numpy_would_convert(
    pair: tuple[sc.Sphere, sc.Sphere], value: object, message: str
) -> None:
    a, b = pair
    with pytest.raises(SensorTypeError, match=message):
        resolve_forces(sc.Contacts([contact(a, b, -0.1)] * 2), value)


def test_approach_speed_and_dt_are_checked(pair: tuple[sc.Sphere, sc.Sphere]) -> None:
    a, b = pair
    contacts = sc.Contacts([contact(a, b, -0.1)])
    damped = PenaltyForce(10.0, damping=1.0)
    with pytest.raises(
        SensorTypeError, match=r"^approach_speed must be numbers, got \['1'\] \(strings\)$"
    ):
        damped.magnitudes(contacts, approach_speed=["1"])
    with pytest.raises(
        SensorTypeError, match=r"^approach_speed must be numbers, got \[True\] \(booleans\)$"
    ):
        damped.magnitudes(contacts, approach_speed=[True])
    cases: list[tuple[Any, type, str]] = [
        (float("nan"), SensorValueError, r"^dt must be finite, got nan$"),
        (-0.1, SensorValueError, r"^dt must be positive seconds in .* got -0\.1$"),
        # The hub's range (its clock counts nanoseconds): the same step is refused by both.
        (5e-324, SensorValueError, r"^dt must be positive seconds in \[1e-09, 1e\+09\] \(the "),
        (1e-12, SensorValueError, r"^dt must be positive seconds in .* got 1e-12$"),
        (2e9, SensorValueError, r"^dt must be positive seconds in .* got 2000000000\.0$"),
        ("0.1", SensorTypeError, r"^dt must be a real number, got '0\.1'$"),
    ]
    for bad, error, message in cases:
        with pytest.raises(error, match=message):
            damped.magnitudes(contacts, dt=bad)
    assert damped.magnitudes(contacts, dt=1e-9).shape == (1,)  # the shortest step the hub takes


def test_sensor_errors_are_core_errors_too() -> None:
    assert issubclass(SensorValueError, sc.errors.InvalidArgumentError)
    assert issubclass(SensorValueError, ValueError)
    assert issubclass(SensorTypeError, sc.ShapeTypeError) and issubclass(SensorTypeError, TypeError)
    with pytest.raises(sc.errors.InvalidArgumentError, match="stiffness"):
        PenaltyForce(-1.0)
    with pytest.raises(TypeError, match="stiffness"):
        PenaltyForce("stiff")  # type: ignore[arg-type]


@given(st.floats(0.0, 2e6), st.floats(1e-300, 1e12), st.floats(1.0, 3.0))
def test_penalty_forces_are_finite_in_range(overlap: float, k: float, e: float) -> None:
    a, b = sc.Sphere(1.0), sc.Sphere(1.0)
    force = PenaltyForce(k, exponent=e).magnitudes(sc.Contacts([contact(a, b, -overlap)]))
    assert np.isfinite(force).all() and (force >= 0.0).all()
