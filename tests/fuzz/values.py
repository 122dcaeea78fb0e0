"""Pools of hostile and valid values, each with the verdict the documented rules give it.

A :class:`Pick` is a value and what must come of passing it: ``"answer"`` (valid; ``number``
is the float it stands for), ``"error"`` (refused), or ``"either"`` (the rules allow both; a
one-element array where a number is wanted, say: if accepted, it must stand for its element).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np

NAN, INF = float("nan"), float("inf")


@dataclass
class Pick:
    """A value and its verdict (see the module docstring)."""

    value: Any
    expect: str
    number: Any = None
    """What a valid value stands for: a float, an int, a (3,) or (4, 4) array, ..."""


def _wrapped_type_mistakes() -> list[Any]:
    return [
        "1.0",
        b"1",
        "",
        True,
        False,
        np.True_,
        1 + 2j,
        np.complex128(1.0),
        None,
        Decimal("1.5"),
        {"x": 1.0},
        np.ma.masked_array(1.0),
        np.array("1.0"),
        np.datetime64("2020-01-01"),
        object(),
    ]


def real(
    rng: np.random.Generator,
    ok: Callable[[float], bool],
    typical: Callable[[np.random.Generator], float],
) -> Pick:
    """A number for a real parameter that accepts the floats ``ok`` says yes to."""
    roll = rng.random()
    if roll < 0.3:
        x = typical(rng)
        form = int(rng.integers(6))
        value: Any
        if form == 0:
            value = x
        elif form == 1:
            value = np.float64(x)
        elif form == 2:
            value = np.float32(x)
        elif form == 3:
            value = np.array(x)
        elif form == 4:
            value = Fraction(x).limit_denominator(10**9)
        else:
            value = round(x) if ok(float(round(x))) else x
        number = float(value)
        return Pick(value, "answer" if ok(number) else "error", number)
    if roll < 0.7:
        specials: list[Any] = [0, 0.0, -0.0, -1.0, -1, 1e-300, -1e-300, 1e300, -1e300, NAN, INF]
        specials += [-INF, 10**400, -(10**400), 1e-5 * (1 - 1e-12), 1e6 * (1 + 1e-12), 1e-5, 1e6]
        specials += [
            np.float64(NAN),
            np.int64(-3),
            np.uint8(200),
            2**63,
            5e-324,
            1.7976931348623157e308,
        ]
        value = specials[int(rng.integers(len(specials)))]
        try:
            number = float(value)
        except OverflowError:
            return Pick(value, "error")
        return Pick(value, "answer" if ok(number) else "error", number)
    if roll < 0.9:
        mistakes = _wrapped_type_mistakes()
        return Pick(mistakes[int(rng.integers(len(mistakes)))], "error")
    x = typical(rng)
    shaped: list[Any] = [[x], (x,), np.array([x]), np.array([[x]]), np.array([x, x]), [x, x], []]
    value = shaped[int(rng.integers(len(shaped)))]
    if np.size(value) == 1 and ok(x):
        return Pick(value, "either", x)
    return Pick(value, "error")


def in_range(lo: float, hi: float) -> Callable[[float], bool]:
    return lambda x: math.isfinite(x) and lo <= x <= hi


def log_uniform(lo: float, hi: float) -> Callable[[np.random.Generator], float]:
    return lambda rng: float(10 ** rng.uniform(math.log10(lo), math.log10(hi)))


def uniform(lo: float, hi: float) -> Callable[[np.random.Generator], float]:
    return lambda rng: float(rng.uniform(lo, hi))


def size(rng: np.random.Generator, lo: float = 1e-5, hi: float = 1e6) -> Pick:
    """A size: valid within [lo, hi] metres (most valid picks within [0.01, 10])."""
    typical = log_uniform(max(lo, 1e-2), min(hi, 10.0))
    return real(rng, in_range(lo, hi), typical)


def integer(rng: np.random.Generator, lo: int | None, hi: int | None = None) -> Pick:
    """A count: a Python or numpy int in [lo, hi] is valid (no end where None); bools and
    floats are not."""
    top = 10**800 if hi is None else hi
    bottom = -(10**800) if lo is None else lo
    roll = rng.random()
    if roll < 0.35:
        low = max(bottom, -20)
        n = int(rng.integers(low, min(top, low + 40) + 1))
        forms: list[Any] = [n, np.int64(n), np.int32(n), np.array(n)]
        if 0 <= n < 2**16:
            forms.append(np.uint16(n))
        value = forms[int(rng.integers(len(forms)))]
        n = int(value)
        if isinstance(value, np.ndarray):  # a 0-d array: some entry points take it, some not
            return Pick(value, "either" if bottom <= n <= top else "error", n)
        return Pick(value, "answer" if bottom <= n <= top else "error", n)
    specials: list[Any] = [-1, 0, 10**400, -(2**63), 2**64, np.int64(-5)]
    if lo is not None:
        specials.append(lo - 1)
    if hi is not None:
        specials.append(hi + 1)
    one = max(bottom, 1)
    hostile: list[Any] = [1.0, float(one), 2.5, NAN, INF, "3", True, False, None, 1j, [one]]
    hostile += [np.array([one]), np.float64(one), Decimal(one), np.array(float(one))]
    pool = specials + hostile
    value = pool[int(rng.integers(len(pool)))]
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return Pick(value, "answer" if bottom <= int(value) <= top else "error", int(value))
    return Pick(value, "error")


def flag(rng: np.random.Generator) -> Pick:
    """A flag: True, False or numpy bools; nothing else (not 0, 1 or "yes")."""
    pool: list[Any] = [True, False, np.True_, np.False_, np.array(True)]
    bad: list[Any] = [0, 1, 1.0, "yes", "", None, [True], np.array([True]), 1j, np.int64(1)]
    if rng.random() < 0.5:
        value = pool[int(rng.integers(len(pool)))]
        return Pick(value, "answer", bool(value))
    return Pick(bad[int(rng.integers(len(bad)))], "error")


def name(rng: np.random.Generator, allow_none: bool = True) -> Pick:
    """A name: any str (also empty or unicode) is valid, None where allowed."""
    good: list[Any] = ["a", "link 1", "ünïcødé-名前-🙂", "x" * 2000, "with\nnewline", "\x00"]
    bad: list[Any] = [5, 1.5, b"name", True, ["a"], np.str_("a"), ("a",), object()]
    if rng.random() < 0.5:
        value = good[int(rng.integers(len(good)))]
        return Pick(value, "answer", value)
    value = bad[int(rng.integers(len(bad)))]
    if isinstance(value, str):  # np.str_ is a str
        return Pick(value, "answer", str(value))
    if value is None:
        return Pick(value, "answer" if allow_none else "error", None)
    return Pick(value, "error")


# -------------------------------------------------------------------------------- poses


def rotation(rng: np.random.Generator) -> np.ndarray:
    """A random rotation matrix (3, 3)."""
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def rigid(rng: np.random.Generator, reach: float = 2.0) -> np.ndarray:
    """A random rigid transform (4, 4) with a translation within ``±reach`` per axis."""
    T = np.eye(4)
    T[:3, :3] = rotation(rng)
    T[:3, 3] = rng.uniform(-reach, reach, 3)
    return T


def pose(rng: np.random.Generator, none_ok: bool = True) -> Pick:
    """A pose: a rigid (4, 4) array, list or SE3 within ±1e6 m is valid; ``number`` is the
    (4, 4) float array it stands for."""
    T = rigid(rng)
    roll = rng.random()
    if roll < 0.35:
        form = int(rng.integers(5))
        if form == 0:
            return Pick(T, "answer", T)
        if form == 1:
            return Pick(T.tolist(), "answer", T)
        if form == 2:
            from spatialmath import SE3

            return Pick(SE3(T, check=False), "answer", T)
        if form == 3:
            return Pick(np.eye(4, dtype=int), "answer", np.eye(4))
        far = T.copy()
        far[:3, 3] = rng.choice([-1.0, 1.0], 3) * rng.uniform(0, 1e6, 3)
        return Pick(far, "answer", far)
    if roll < 0.4:
        if none_ok:
            return Pick(None, "answer", np.eye(4))
        return Pick(None, "error")
    bad: list[Any] = []
    scaled = T.copy()
    scaled[:3, :3] *= 1.5
    bad.append(scaled)
    mirrored = T.copy()
    mirrored[:3, 0] *= -1.0  # a reflection: orthonormal, det -1
    bad.append(mirrored)
    sheared = T.copy()
    sheared[0, 1] += 0.3
    bad.append(sheared)
    for value in (NAN, INF, -INF):
        broken = T.copy()
        broken[int(rng.integers(3)), int(rng.integers(4))] = value
        bad.append(broken)
    last = T.copy()
    last[3] = [0.0, 0.0, 0.0, 2.0]
    bad.append(last)
    far = T.copy()
    far[:3, 3] = [1e7, 0.0, 0.0]
    bad.append(far)
    bad += [T[:3, :3], T[:3], T.reshape(16), T[None], np.stack([T, T]), np.zeros((4, 4))]
    bad += [T.astype(object), T.astype(complex), np.eye(4, dtype=bool), "eye(4)", 1.0]
    bad += [np.ma.masked_array(T), np.array(1.0), [[1, 0, 0, 0]] * 4, [], {"T": T}]
    bad += [np.eye(4) * 2, np.full((4, 4), 1e300)]
    value = bad[int(rng.integers(len(bad)))]
    return Pick(value, "error")


# ------------------------------------------------------------------------------- vectors


def vector3(
    rng: np.random.Generator,
    ok: Callable[[np.ndarray], bool],
    typical: Callable[[np.random.Generator], np.ndarray],
) -> Pick:
    """Three numbers, valid when ``ok`` says yes to their float array."""
    roll = rng.random()
    if roll < 0.4:
        v = typical(rng)
        forms: list[Any] = [v, v.tolist(), tuple(v.tolist()), v.astype(np.float32), v.reshape(1, 3)]
        value = forms[int(rng.integers(len(forms)))]
        number = np.asarray(value, dtype=np.float64)
        if number.shape != (3,):
            return Pick(value, "either", number.reshape(-1))
        return Pick(value, "answer" if ok(number) else "error", number)
    v = typical(rng)
    bad: list[Any] = [v[:2], np.append(v, 1.0), [], 1.0, [v.tolist()] * 2, "1 2 3", None]
    bad += [[1.0, True, 2.0], [1.0, 1j, 1.0], [1.0, None, 1.0], v.astype(object), [1, 2, 10**400]]
    bad += [np.ma.masked_array(v), [[1.0, 2.0], [3.0]], v.astype(complex)]
    for value in (0.0, -1.0, NAN, INF, 1e-300, 1e300, 1e7):
        changed = v.copy()
        changed[int(rng.integers(3))] = value
        bad.append(changed)
    value = bad[int(rng.integers(len(bad)))]
    plain = isinstance(value, np.ndarray) and not isinstance(value, np.ma.MaskedArray)
    if plain and value.dtype.kind == "f" and value.shape == (3,):
        return Pick(value, "answer" if ok(value) else "error", value)
    return Pick(value, "error")


def sizes3(rng: np.random.Generator, max_aspect: float | None = None) -> Pick:
    """Three sizes in [1e-5, 1e6] m (and within ``max_aspect`` of each other)."""

    def ok(v: np.ndarray) -> bool:
        if not (np.all(np.isfinite(v)) and np.all((v >= 1e-5) & (v <= 1e6))):
            return False
        return max_aspect is None or v.max() <= max_aspect * v.min()

    return vector3(rng, ok, lambda r: 10 ** r.uniform(-1.5, 0.7, 3))


# -------------------------------------------------------------------------------- points


def cloud(rng: np.random.Generator, n: int | None = None) -> np.ndarray:
    """A random point cloud (n, 3) of extent about 1 m."""
    count = int(rng.integers(4, 30)) if n is None else n
    return rng.normal(size=(count, 3)) * rng.uniform(0.1, 2.0)


def hostile_points(rng: np.random.Generator) -> tuple[Any, str]:
    """Point sets that must be refused (with what is wrong), or odd but valid ones."""
    base = cloud(rng)
    kinds: list[tuple[Any, str]] = [
        (np.zeros((0, 3)), "error"),
        (base[:, :2], "error"),
        (base.reshape(-1), "error"),
        (base[None], "error"),
        (np.vstack([base, [[NAN, 0, 0]]]), "error"),
        (np.vstack([base, [[INF, 0, 0]]]), "error"),
        (base + 2e14, "error"),
        (base * 1e77, "error"),
        (base * 1e-300, "error"),
        (np.vstack([base, [[1e7, 0.0, 0.0]]]), "error"),
        (base.astype(object), "error"),
        (base.astype(complex), "error"),
        (base.astype(bool), "error"),
        (base.astype(str), "error"),
        (np.ma.masked_array(base), "error"),
        ("points", "error"),
        (None, "error"),
        (base.astype(np.float32), "either"),
        (base.astype(int), "either"),
        (np.round(base * 3), "either"),
        (base[:3], "either"),
        (np.repeat(base[:1], 5, axis=0), "error"),
        (np.c_[base[:, :2], np.zeros(len(base))], "either"),
        (np.outer(rng.normal(size=8), [1.0, 2.0, 3.0]), "either"),
        (base * 1e-4, "either"),
        (base * 1e5, "either"),
        (base + 9.9e5, "either"),
        (base.tolist(), "either"),
        (np.vstack([base, base]), "either"),
    ]
    return kinds[int(rng.integers(len(kinds)))]
