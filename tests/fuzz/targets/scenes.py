"""Scenes and worlds: one operation with a hostile or valid argument on a random scene, then
every query checked against brute force over the objects' pairs."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import spatialcontact as sc

from .. import values as V
from ..core import Case, close, target
from .common import r, trans, zoo

MAX_TRANSLATION = sc.pose.MAX_TRANSLATION
MAX_REPLICATE = sc.scene.scene.MAX_REPLICATE

KINDS = ("sphere", "box", "capsule")


class Model:
    """What the scene should hold: name -> (shape, world), allowed pairs, world count."""

    def __init__(self) -> None:
        self.objects: dict[str, tuple[Any, int]] = {}
        self.allowed: set[frozenset[str]] = set()
        self.worlds = 0

    def pairs(self, world: int | None = None) -> set[frozenset[str]]:
        """The colliding pairs a query of ``world`` should report."""
        names = list(self.objects)
        out: set[frozenset[str]] = set()
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                sa, wa = self.objects[a]
                sb, wb = self.objects[b]
                if not _considered(wa, wb, world) or frozenset((a, b)) in self.allowed:
                    continue
                if sa.iscollided(sb):
                    out.add(frozenset((a, b)))
        return out

    def partners(self, world: int | None) -> list[str]:
        if world is None:
            return list(self.objects)
        return [n for n, (_, w) in self.objects.items() if w == -1 or (world >= 0 and w == world)]


def _considered(wa: int, wb: int, world: int | None) -> bool:
    """Whether objects of worlds ``wa`` and ``wb`` pair in a query of ``world``."""
    if wa >= 0 and wb >= 0 and wa != wb:
        return False
    if world is None:
        return True
    if world == -1:
        return wa == wb == -1
    return world in (wa, wb)


def _fits(model: Model, step: Any) -> bool:
    """Whether :meth:`Scene.replicate` with ``n = 2`` and ``step`` keeps every copy of world 0's
    objects within the translation range (computed as the library places them)."""
    step = np.asarray(step, dtype=np.float64)
    with np.errstate(all="ignore"):
        for shape, world in model.objects.values():
            if world != 0:
                continue
            for k in (model.worlds, model.worlds + 1):
                if not np.all(np.abs(shape.T[:3, 3] + k * step) <= MAX_TRANSLATION):
                    return False
    return True


def _build(rng: np.random.Generator) -> tuple[sc.Scene, Model]:
    scene, model = sc.Scene(), Model()
    worlds = int(rng.integers(0, 3))
    for _ in range(worlds):
        scene.add_world()
    model.worlds = worlds
    for i in range(int(rng.integers(1, 6))):
        shape = zoo(rng, KINDS)
        if rng.random() < 0.2:
            shape = sc.CollisionShapeGroup([zoo(rng, KINDS), zoo(rng, KINDS)])
        world = int(rng.integers(-1, worlds)) if worlds else -1
        name = f"o{i}"
        scene.add(shape, name, world=world)
        model.objects[name] = (shape, world)
    names = list(model.objects)
    if len(names) > 1 and rng.random() < 0.3:
        a, b = names[0], names[1]
        scene.allow(a, b)
        model.allowed.add(frozenset((a, b)))
    return scene, model


def _agrees(scene: sc.Scene, model: Model, rng: np.random.Generator) -> None:
    """Every scene query against brute force."""
    assert list(scene.names) == list(model.objects), f"names {scene.names} != {list(model.objects)}"
    assert scene.worlds == model.worlds, f"worlds {scene.worlds} != {model.worlds}"
    for name, (_, own) in model.objects.items():
        assert scene.world_of(name) == own, f"world_of({name!r}) {scene.world_of(name)} != {own}"
    want = model.pairs()
    got = {frozenset(p) for p in scene.collisions()}
    assert got == want, f"collisions {sorted(map(sorted, got))} != {sorted(map(sorted, want))}"
    assert scene.in_collision() == bool(want)
    world: int | None = int(rng.integers(-1, model.worlds)) if model.worlds else None
    if world is not None:
        got_w = {frozenset(p) for p in scene.collisions(world=world)}
        want_w = model.pairs(world)
        assert got_w == want_w, f"collisions(world={world}) {got_w} != {want_w}"
        per = scene.in_collision_per_world()
        assert len(per) == model.worlds
    contacts = scene.contacts()
    named = {
        frozenset((scene.name_of(_top(c.o1, scene)), scene.name_of(_top(c.o2, scene))))
        for c in contacts
    }
    assert named == want, f"contact pairs {named} != {want}"
    probe = sc.Sphere(float(rng.uniform(0.1, 0.8)), pose=trans(*rng.uniform(-1.5, 1.5, 3)))
    partners = model.partners(world)
    hit = [n for n in partners if model.objects[n][0].iscollided(probe)]
    assert scene.collide(probe, world=world) == hit, (
        f"collide {scene.collide(probe, world)} != {hit}"
    )
    d, nearest, _, _ = scene.distance(probe, world=world)
    if partners:
        best = min(model.objects[n][0].distance(probe) for n in partners)
        close(d, best, 1e-6, "scene distance against the objects' minimum")
    else:
        assert nearest is None and math.isinf(d), f"distance {d} to an empty selection"


def _top(leaf: Any, scene: sc.Scene) -> Any:
    node = leaf
    while node._parent is not None:
        node = node._parent
    return node


def _name_pick(rng: np.random.Generator, model: Model) -> V.Pick:
    taken = list(model.objects)
    pick = V.name(rng)
    if taken and rng.random() < 0.2:
        return V.Pick(taken[int(rng.integers(len(taken)))], "error")  # a name taken
    return pick


def _world_pick(rng: np.random.Generator, model: Model, none_ok: bool) -> V.Pick:
    pick = V.integer(rng, -1, model.worlds - 1)
    if pick.value is None and none_ok:
        return V.Pick(None, "answer", None)
    if pick.expect == "answer" and model.worlds == 0 and pick.number == -1:
        return pick
    return pick


@target(
    "scene operations",
    covers=[
        "Scene",
        "Scene.add",
        "Scene.remove",
        "Scene.index_of",
        "Scene.name_of",
        "Scene.allow",
        "Scene.disallow",
        "Scene.is_allowed",
        "Scene.world_of",
        "Scene.add_world",
        "Scene.replicate",
        "Scene.in_collision",
        "Scene.in_collision_per_world",
        "Scene.collisions",
        "Scene.collisions_per_world",
        "Scene.contacts",
        "Scene.collide",
        "Scene.distance",
        "WorldContacts",
    ],
    weight=8,
)
def scene_operations(rng: np.random.Generator, env: Any) -> Case:
    scene, model = _build(rng)
    names = list(model.objects)
    op = (
        "add",
        "add",
        "remove",
        "move",
        "allow",
        "disallow",
        "is_allowed",
        "index_of",
        "name_of",
        "world_of",
        "add_world",
        "replicate",
        "query",
        "query",
    )[int(rng.integers(14))]
    param: Any = ()
    shows = True
    expect = "answer"
    value: Any = None
    apply: Any = None
    if op == "add":
        which = int(rng.integers(4))
        shape: Any = zoo(rng, KINDS)
        name: Any = f"new{int(rng.integers(100))}"
        world: Any = -1
        flag: Any = False
        if which == 0:
            options: list[tuple[Any, str]] = [
                (zoo(rng, KINDS), "answer"),
                (sc.CollisionShapeGroup([zoo(rng, KINDS)]), "answer"),
                (model.objects[names[0]][0], "error"),
                (None, "error"),
                (5, "error"),
                ("shape", "error"),
                (sc.Scene(), "error"),
                ([zoo(rng, KINDS)], "error"),
                (sc.Sphere(0.3, collision=False), "either"),
            ]
            shape, expect = options[int(rng.integers(len(options)))]
            value, param, shows = shape, ("obj", "shape", "already"), False
        elif which == 1:
            pick = _name_pick(rng, model)
            name, expect, value, param = pick.value, pick.expect, pick.value, "name"
            if name is None:
                expect = "answer"
        elif which == 2:
            pick = _world_pick(rng, model, False)
            world, expect, value, param = pick.value, pick.expect, pick.value, "world"
        else:
            pick = V.flag(rng)
            flag, expect, value, param = pick.value, pick.expect, pick.value, "self_collision"

        def apply() -> Any:
            given = scene.add(shape, name, self_collision=flag, world=world)
            model.objects[given] = (shape, int(world))
            return given

    elif op == "remove":
        choices: list[Any] = [names[0], "missing", None, 5, model.objects[names[0]][0], ""]
        value = choices[int(rng.integers(len(choices)))]
        expect = "answer" if value == names[0] and isinstance(value, str) else "error"
        param = "name"

        def apply() -> Any:
            removed = scene.remove(value)
            assert removed is model.objects[value][0], "remove returned another shape"
            del model.objects[value]
            model.allowed = {p for p in model.allowed if value not in p}
            return removed

    elif op == "move":
        who = names[int(rng.integers(len(names)))]
        pick = V.pose(rng, none_ok=False)
        value, expect, param = pick.value, pick.expect, ("pose", "T")

        def apply() -> Any:
            model.objects[who][0].T = value
            return None

    elif op in ("allow", "disallow", "is_allowed"):
        a = names[0]
        choices = [names[-1], "missing", None, 5, a, model.objects[names[-1]][0], sc.Sphere(0.1)]
        b = choices[int(rng.integers(len(choices)))]
        if isinstance(b, str):
            expect = "answer" if b in model.objects and b != a else "error"
        elif isinstance(b, sc.CollisionShape):
            held = any(b is s for s, _ in model.objects.values())
            expect = "answer" if held and b is not model.objects[a][0] else "error"
        else:
            expect = "error"
        value, param, shows = b, ("b", "name", "shape", "object"), isinstance(b, (str, int))

        def apply() -> Any:
            out = getattr(scene, op)(a, b)
            other = b if isinstance(b, str) else scene.name_of(b)
            if op == "allow" and other != a:
                model.allowed.add(frozenset((a, other)))
            elif op == "disallow":
                model.allowed.discard(frozenset((a, other)))
            else:
                assert out == (frozenset((a, other)) in model.allowed), f"is_allowed gave {out}"
            return out

    elif op in ("index_of", "name_of", "world_of"):
        shape0 = model.objects[names[0]][0]
        choices = [names[0], "missing", None, 5, shape0, sc.Sphere(0.1), b"o0"]
        value = choices[int(rng.integers(len(choices)))]
        wants_shape = op == "name_of"
        ok = value is shape0 if wants_shape else value == names[0] and isinstance(value, str)
        expect = "answer" if ok else "error"
        param, shows = ("name", "shape"), not isinstance(value, sc.CollisionShape)

        def apply() -> Any:
            out = getattr(scene, op)(value)
            want = {"index_of": 0, "name_of": names[0], "world_of": model.objects[names[0]][1]}
            assert out == want[op], f"{op} gave {out!r}, expected {want[op]!r}"
            return out

    elif op == "add_world":

        def apply() -> Any:
            k = scene.add_world()
            assert k == model.worlds, f"add_world gave {k}, expected {model.worlds}"
            model.worlds += 1
            return k

    elif op == "replicate":
        if rng.random() < 0.5:
            pick = V.integer(rng, 1, MAX_REPLICATE)
            while pick.expect != "error" and int(pick.number) > 4:
                pick = V.integer(rng, 1, MAX_REPLICATE)  # valid but slow: kept small
            n, spacing = pick.value, 0.0
            value, expect, param = n, pick.expect, "n"
        else:
            n = 2
            pick = V.real(rng, lambda x: _fits(model, [x, 0.0, 0.0]), V.uniform(-3.0, 3.0))
            if rng.random() < 0.3:
                pick = V.vector3(rng, lambda v: _fits(model, v), lambda g: g.uniform(-3, 3, 3))
                if isinstance(pick.value, float) and _fits(model, [pick.value, 0.0, 0.0]):
                    pick = V.Pick(pick.value, "answer", pick.value)  # a step along x
            spacing, value, expect, param = pick.value, pick.value, pick.expect, "spacing"
        if model.worlds == 0 or not any(w == 0 for _, w in model.objects.values()):
            expect = "error" if expect == "error" else "either"  # no world 0 to copy
            param, shows = (param, "world 0"), expect == "error" and False
        snapshot = dict(model.objects)

        def apply() -> Any:
            made = scene.replicate(n, spacing)
            count = int(n)
            assert made == list(range(model.worlds, model.worlds + count)), f"replicate gave {made}"
            step = np.zeros(3)
            sp = np.asarray(spacing, dtype=float).reshape(-1)
            step = np.array([sp[0], 0.0, 0.0]) if sp.size == 1 else sp
            originals = [(nm, s) for nm, (s, w) in snapshot.items() if w == 0]
            for k in made:
                for nm, s in originals:
                    copy_name = f"{nm}/{k}"
                    copied = scene[copy_name] if hasattr(scene, "__getitem__") else None
                    assert copied is not None and copied is not s
                    moved = (copied.world_T if hasattr(copied, "world_T") else copied.T)[:3, 3]
                    orig = (s.world_T if hasattr(s, "world_T") else s.T)[:3, 3]
                    assert np.allclose(moved - orig, k * step, atol=1e-9), "replica misplaced"
                    model.objects[copy_name] = (copied, k)
            for p in list(model.allowed):
                a, b = sorted(p)
                wa, wb = snapshot[a][1], snapshot[b][1]
                if 0 in (wa, wb) and {wa, wb} <= {0, -1}:
                    for k in made:
                        ca = f"{a}/{k}" if wa == 0 else a
                        cb = f"{b}/{k}" if wb == 0 else b
                        model.allowed.add(frozenset((ca, cb)))
            model.worlds += count
            return made

    else:
        query = ("contacts", "collisions", "in_collision", "collide", "distance")[
            int(rng.integers(5))
        ]
        if query == "contacts":
            pick = V.integer(rng, 1)
            param = "max_contacts_per_pair"
            if rng.random() < 0.5:
                pick, param = _world_pick(rng, model, True), "world"
        else:
            pick, param = _world_pick(rng, model, True), "world"
        value, expect = pick.value, pick.expect
        if param == "world" and value is None:
            expect = "answer"
        probe = sc.Sphere(0.5)

        def apply() -> Any:
            if query == "contacts":
                if param == "world":
                    return scene.contacts(world=value)
                return scene.contacts(value)
            if query in ("collide", "distance"):
                return getattr(scene, query)(probe, world=value)
            return getattr(scene, query)(world=value)

    state = (list(scene.names), scene.worlds, scene.revision)

    def run() -> Any:
        try:
            return apply()
        except Exception:
            assert (list(scene.names), scene.worlds) == state[:2], "the scene changed on a refusal"
            _agrees(scene, model, rng)
            raise

    def check(result: Any) -> None:
        _agrees(scene, model, rng)

    label = f"scene({len(names)} objects, {model.worlds} worlds).{op}({r(value)})"
    return Case(label, run, expect, param, value, check, shows_value=shows)
