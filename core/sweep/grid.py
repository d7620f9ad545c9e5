"""A sweep's grid: a TOML file → a frozen :class:`Grid` → hashable :class:`Cell` records.

Seed 000's robustness section (§12; the benchmark specification §2.13) re-runs the whole
protocol for each cell of its grids: the 3 × 3 bias × dropout grid, the extraction-noise table,
the training-size curve and cross-bias transfer. A grid file names any of those knobs as axes:

.. code-block:: toml

    name = "bias-by-seed"              # optional (default: the file's stem)
    description = "where each resolver breaks"

    [axes]                             # a scalar is one value, a list an axis
    seed = { start = 20260321, count = 50 }   # or a list of seeds
    bias_scale = [0.5, 1.0, 2.0, 4.0]
    personas_per_difficulty = 160
    methods = ["dsnbf", "nbf", "majority_vote"]   # a list of lists is an axis of method sets

    [options]                          # fixed for every cell
    noise_seed = 12345
    bootstrap_seed = 42

Knobs (:data:`KNOBS`, in the order cells are expanded, the last varying fastest): ``seed``,
``personas_per_difficulty``, ``bias_scale``, ``dropout_scale``, ``fit_bias_scale`` and
``fit_dropout_scale`` (transfer: fit on these scales, test on the cell's; ``"same"`` refits
in-distribution), ``difficulty_mix`` (relative shares of stable, temporal_shift and
stated_vs_revealed personas), ``train_size`` (``"all"`` or a stratified subsample) and
``train_draw`` (which draw), ``noise_profile`` (``none``, ``uniform``, ``paper``, ``gemini``,
``paraphrase``) and ``noise_eps`` (ε of ``uniform``), ``methods`` and ``bootstrap`` (B of the
persona-clustered interval, 0 = none). The ranges are the command line's
(``core.cli``): seeds in [0, 2³² − 1], 4 to 1000 personas per difficulty, scales in
[0, 4], B = 0 or 100 to 20,000.

Cells that cannot differ are one cell: a non-uniform profile ignores ε, a full training set
has one draw, fit scales equal to the test scales are ``"same"``, and difficulty mixes are
compared after scaling the largest share to 1. Each :class:`Cell` ships parameters, never
arrays, and its ``cell_id`` (a hash of its parameters and :data:`CELL_VERSION`) is stable
across processes, machines and runs: the store's resume key.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..evaluation.run import FORCED_METHODS, SELECTIVE_METHODS
from ..testbed.config import DEFAULT_SEEDS, TestbedConfig
from ..testbed.vocab import DIFFICULTIES

__all__ = [
    "CELL_VERSION",
    "KNOBS",
    "MAX_CELLS",
    "NOISE_PROFILES",
    "Cell",
    "Grid",
    "kept_counts",
    "load_grid",
    "parse_grid",
]

#: Ranges of the knobs, the command line's (``core.cli``; a test keeps them equal): seeds and
#: persona counts as :class:`~core.testbed.config.TestbedConfig`, bootstrap replicates as
#: ``evaluate --bootstrap``.
MAX_SEED = 2**32 - 1
MIN_PERSONAS, MAX_PERSONAS = 4, 1000
MAX_SCALE = 4.0
MIN_BOOTSTRAP, MAX_BOOTSTRAP = 100, 20_000
#: Bumped when a cell's computation changes meaning, so old results are not reused.
CELL_VERSION = 1
#: The most cells one grid may expand to.
MAX_CELLS = 100_000
#: ``noise_profile`` values (``core.prose.noise``; ``uniform`` takes ``noise_eps``).
NOISE_PROFILES = ("none", "uniform", "paper", "gemini", "paraphrase")
#: Every resolver name a cell may run (forced, then selective variants).
ALL_METHODS = tuple(FORCED_METHODS) + tuple(SELECTIVE_METHODS)
#: Grid knobs in expansion order, with their defaults.
KNOBS: dict[str, Any] = {
    "seed": DEFAULT_SEEDS[0],
    "personas_per_difficulty": 160,
    "bias_scale": 1.0,
    "dropout_scale": 1.0,
    "fit_bias_scale": "same",
    "fit_dropout_scale": "same",
    "difficulty_mix": (1.0, 1.0, 1.0),
    "train_size": "all",
    "train_draw": 0,
    "noise_profile": "none",
    "noise_eps": None,
    "methods": ALL_METHODS,
    "bootstrap": 0,
}
#: ``[options]`` keys (fixed for every cell) and their defaults: the noise stream is
#: ``default_rng([noise_seed, seed])`` (as ``core.evaluation.robustness.noise_curve``), the
#: interval resamples with ``default_rng(bootstrap_seed)`` (as ``core.evaluation.metrics``).
OPTIONS = {"noise_seed": 12345, "bootstrap_seed": 42}
_TOP = ("name", "description", "axes", "options")
#: Base of the training-size draws: draw ``i`` uses ``default_rng(42 + i)``
#: (``core.evaluation.robustness.train_size_curve``).
TRAIN_DRAW_BASE = 42
MAX_TRAIN_DRAW = 10_000


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return (isinstance(v, int | float) and not isinstance(v, bool)
            and math.isfinite(float(v)))


def _int_in(name: str, v: Any, lo: int, hi: int) -> int:
    if not _is_int(v) or not lo <= v <= hi:
        raise ValueError(f"{name} must be an integer in [{lo}, {hi}], got {v!r}")
    return int(v)


def _float_in(name: str, v: Any, lo: float, hi: float) -> float:
    if not _is_number(v) or not lo <= float(v) <= hi:
        raise ValueError(f"{name} must be a finite number in [{lo:g}, {hi:g}], got {v!r}")
    return float(v)


def _round_half_up(x: float) -> int:
    return int(math.floor(x + 0.5))


def kept_counts(personas_per_difficulty: int, mix: tuple[float, float, float]
                ) -> dict[str, dict[str, int]]:
    """Personas kept per split and difficulty under a difficulty mix.

    The mix is scaled so that its largest share is 1; difficulty ``c`` keeps
    ``⌊share_c · n + ½⌋`` of the ``n`` personas it has in each split
    (:meth:`core.testbed.config.TestbedConfig.split_counts`), the first ones in row order.
    Returns split → difficulty → count.
    """
    top = max(mix)
    n_split = TestbedConfig(seeds=(0,), personas_per_difficulty=personas_per_difficulty
                            ).split_counts()
    return {s: {d: _round_half_up(share / top * n) for d, share in zip(DIFFICULTIES, mix,
                                                                       strict=True)}
            for s, n in n_split.items()}


def _noise_text(profile: str, eps: float | None) -> str:
    if profile == "uniform":
        return f"uniform:{eps!r}"
    return profile


@dataclass(frozen=True, kw_only=True)
class Cell:
    """One cell of a sweep: the parameters of one generate → fit → calibrate → score run.

    Small, frozen, hashable and picklable; it ships to a worker in place of any array.
    Every field is validated and brought to a canonical form (module docstring), so two
    cells that must give the same results are equal and share :attr:`cell_id`.

    Parameters
    ----------
    seed : the one generator seed (``TestbedConfig.seeds = (seed,)``).
    personas_per_difficulty, bias_scale, dropout_scale : the testbed knobs
        (:class:`core.testbed.config.TestbedConfig`; seed 000 §12 / spec §2.13).
    fit_bias_scale, fit_dropout_scale : fit and calibrate on this variant, test on the cell's
        (cross-bias transfer, seed 000 §12.4); ``None`` = the cell's own (refit).
    difficulty_mix : relative shares of (stable, temporal_shift, stated_vs_revealed);
        stored scaled so that the largest is 1 (:func:`kept_counts`).
    train_size : stratified train personas (``None`` = all); ``train_draw`` picks the draw.
    noise : ``none``, ``uniform:EPS``, ``paper``, ``gemini`` or ``paraphrase``: the test atoms
        pass through :func:`core.prose.noise.apply_noise` (fits stay clean; seed 000 §12.5).
    noise_seed : the noise stream is ``default_rng([noise_seed, seed])``.
    methods : resolver names, in the order the results list them.
    bootstrap, bootstrap_seed : B of the persona-clustered percentile interval of forced
        accuracy (0 = no interval) and its generator seed (:func:`core.evaluation.metrics.
        cluster_bootstrap`).
    """

    seed: int
    personas_per_difficulty: int = 160
    bias_scale: float = 1.0
    dropout_scale: float = 1.0
    fit_bias_scale: float | None = None
    fit_dropout_scale: float | None = None
    difficulty_mix: tuple[float, float, float] = (1.0, 1.0, 1.0)
    train_size: int | None = None
    train_draw: int = 0
    noise: str = "none"
    noise_seed: int = OPTIONS["noise_seed"]
    methods: tuple[str, ...] = field(default=ALL_METHODS)
    bootstrap: int = 0
    bootstrap_seed: int = OPTIONS["bootstrap_seed"]

    def __post_init__(self) -> None:
        put = object.__setattr__
        put(self, "seed", _int_in("seed", self.seed, 0, MAX_SEED))
        put(self, "personas_per_difficulty",
            _int_in("personas_per_difficulty", self.personas_per_difficulty, MIN_PERSONAS,
                    MAX_PERSONAS))
        for name in ("bias_scale", "dropout_scale"):
            put(self, name, _float_in(name, getattr(self, name), 0.0, MAX_SCALE))
        for name, own in (("fit_bias_scale", self.bias_scale),
                          ("fit_dropout_scale", self.dropout_scale)):
            v = getattr(self, name)
            if v is not None:
                v = _float_in(name, v, 0.0, MAX_SCALE)
                put(self, name, None if v == own else v)
        mix = self.difficulty_mix
        if (not isinstance(mix, tuple | list) or len(mix) != 3
                or not all(_is_number(s) and s >= 0 for s in mix) or max(mix) <= 0):
            raise ValueError("difficulty_mix must be three shares >= 0 (stable, temporal_shift, "
                             f"stated_vs_revealed), not all 0, got {mix!r}")
        top = float(max(mix))
        put(self, "difficulty_mix", tuple(float(s) / top for s in mix))
        if self.train_size is not None:
            n = _int_in("train_size", self.train_size, 1, 3 * MAX_PERSONAS)
            train = kept_counts(self.personas_per_difficulty, self.difficulty_mix)["train"]
            present = [k for k in train.values() if k > 0]
            per = n // len(present) + (n % len(present) > 0)
            if n > sum(present) or per > min(present):
                raise ValueError(f"train_size {n} needs {per} train personas of each kept "
                                 f"difficulty; {self.personas_per_difficulty} per difficulty "
                                 f"and this mix keep {sorted(train.values())}")
            put(self, "train_size", n)
            put(self, "train_draw", _int_in("train_draw", self.train_draw, 0, MAX_TRAIN_DRAW))
        else:
            _int_in("train_draw", self.train_draw, 0, MAX_TRAIN_DRAW)
            put(self, "train_draw", 0)
        kind, _, arg = str(self.noise).partition(":")
        if kind not in NOISE_PROFILES or (kind != "uniform" and arg):
            raise ValueError(f"noise must be one of none, uniform:EPS, paper, gemini, "
                             f"paraphrase, got {self.noise!r}")
        if kind == "uniform":
            try:
                eps = float(arg)
            except ValueError:
                eps = math.nan
            put(self, "noise", _noise_text("uniform", _float_in("noise_eps", eps, 0.0, 1.0)))
        put(self, "noise_seed", _int_in("noise_seed", self.noise_seed, 0, MAX_SEED))
        methods = self.methods
        if isinstance(methods, str) or not isinstance(methods, tuple | list) or not methods:
            raise ValueError(f"methods must be a non-empty list of resolver names, got "
                             f"{methods!r}")
        unknown = [m for m in methods if m not in ALL_METHODS]
        if unknown:
            raise ValueError(f"unknown method {unknown[0]!r} (expected: "
                             f"{', '.join(ALL_METHODS)})")
        if len(set(methods)) != len(methods):
            raise ValueError(f"methods must be distinct, got {list(methods)}")
        put(self, "methods", tuple(str(m) for m in methods))
        b = self.bootstrap
        if not _is_int(b) or not (b == 0 or MIN_BOOTSTRAP <= b <= MAX_BOOTSTRAP):
            raise ValueError(f"bootstrap must be 0 (no interval) or an integer in "
                             f"[{MIN_BOOTSTRAP}, {MAX_BOOTSTRAP}], got {b!r}")
        put(self, "bootstrap_seed", _int_in("bootstrap_seed", self.bootstrap_seed, 0,
                                            MAX_SEED))

    def to_dict(self) -> dict:
        """Plain-JSON parameters (tuples as lists)."""
        d = asdict(self)
        d["difficulty_mix"] = list(self.difficulty_mix)
        d["methods"] = list(self.methods)
        return d

    @functools.cached_property
    def cell_id(self) -> str:
        """Stable 16-hex-digit hash of the parameters and :data:`CELL_VERSION` (computed
        once per object)."""
        blob = json.dumps({"version": CELL_VERSION, **self.to_dict()}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def mix_text(self) -> str:
        """The difficulty mix as ``stable:temporal_shift:stated_vs_revealed`` (``1:1:1``)."""
        return ":".join(f"{s:g}" for s in self.difficulty_mix)

    def config(self, *, fit: bool = False) -> TestbedConfig:
        """The one-seed :class:`TestbedConfig` of the test data (or, ``fit=True``, the fit's)."""
        b = self.fit_bias_scale if fit and self.fit_bias_scale is not None else self.bias_scale
        d = (self.fit_dropout_scale if fit and self.fit_dropout_scale is not None
             else self.dropout_scale)
        return TestbedConfig(seeds=(self.seed,), personas_per_difficulty=(
            self.personas_per_difficulty), bias_scale=b, dropout_scale=d)


def _axis_values(key: str, raw: Any) -> tuple:
    """The values of one ``[axes]`` entry: a scalar is one value, a list an axis."""
    if key == "seed" and isinstance(raw, dict):
        extra = set(raw) - {"start", "count"}
        if extra or set(raw) != {"start", "count"}:
            raise ValueError("seed = { start = S, count = N } needs exactly start and count")
        start = _int_in("seed start", raw["start"], 0, MAX_SEED)
        count = _int_in("seed count", raw["count"], 1, MAX_CELLS)
        if start + count - 1 > MAX_SEED:
            raise ValueError(f"seeds {start} + {count} run past {MAX_SEED}")
        return tuple(range(start, start + count))
    nested = key in ("methods", "difficulty_mix")
    if isinstance(raw, list):
        if not raw:
            raise ValueError(f"axis {key!r} is empty")
        if nested and not isinstance(raw[0], list):
            return (tuple(raw),)  # one list-valued value
        values = tuple(tuple(v) if isinstance(v, list) else v for v in raw)
    else:
        values = (raw,)
    if nested and any(not isinstance(v, tuple) for v in values):
        raise ValueError(f"{key} takes a list, or a list of lists for an axis, got {raw!r}")
    if not nested and any(isinstance(v, tuple | dict) for v in values):
        raise ValueError(f"axis {key!r} takes scalars, got {raw!r}")
    if len(set(values)) != len(values):
        raise ValueError(f"axis {key!r} repeats a value: {list(raw)}")
    return values


def _scale_or_same(name: str, v: Any) -> float | None:
    if v == "same" or v is None:
        return None
    return _float_in(name, v, 0.0, MAX_SCALE)


@dataclass(frozen=True)
class Grid:
    """A sweep definition: its name, the values of every knob, and the fixed options.

    Build it with :func:`parse_grid` or :func:`load_grid`; :meth:`cells` expands it.

    Attributes
    ----------
    name, description : the sweep's name (part of :attr:`sweep_id`) and a free text.
    axes : ``(knob, values)`` pairs in :data:`KNOBS` order (one value for a fixed knob).
    options : ``(key, value)`` pairs of :data:`OPTIONS`.
    """

    name: str
    description: str
    axes: tuple[tuple[str, tuple], ...]
    options: tuple[tuple[str, int], ...]

    def to_dict(self) -> dict:
        """Plain-JSON form (what the ``sweeps`` table stores)."""
        def plain(v):
            return list(v) if isinstance(v, tuple) else v
        return {"name": self.name, "description": self.description,
                "axes": {k: [plain(v) for v in vs] for k, vs in self.axes},
                "options": dict(self.options)}

    @property
    def sweep_id(self) -> str:
        """Stable 16-hex-digit hash of the name, axes and options (not the description)."""
        d = self.to_dict()
        d.pop("description")
        blob = json.dumps({"version": CELL_VERSION, **d}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def cells(self) -> tuple[Cell, ...]:
        """Every distinct cell, in expansion order (the last knob varies fastest; expanded
        once per object)."""
        return self._cells

    @functools.cached_property
    def _cells(self) -> tuple[Cell, ...]:
        axes = dict(self.axes)
        opts = dict(self.options)
        out: dict[str, Cell] = {}
        for combo in itertools.product(*(axes[k] for k in KNOBS)):
            v = dict(zip(KNOBS, combo, strict=True))
            profile, eps = v["noise_profile"], v["noise_eps"]
            cell = Cell(
                seed=v["seed"], personas_per_difficulty=v["personas_per_difficulty"],
                bias_scale=v["bias_scale"], dropout_scale=v["dropout_scale"],
                fit_bias_scale=_scale_or_same("fit_bias_scale", v["fit_bias_scale"]),
                fit_dropout_scale=_scale_or_same("fit_dropout_scale", v["fit_dropout_scale"]),
                difficulty_mix=v["difficulty_mix"],
                train_size=None if v["train_size"] == "all" else v["train_size"],
                train_draw=v["train_draw"],
                noise=_noise_text(profile, eps), noise_seed=opts["noise_seed"],
                methods=v["methods"], bootstrap=v["bootstrap"],
                bootstrap_seed=opts["bootstrap_seed"])
            out.setdefault(cell.cell_id, cell)
        return tuple(out.values())


def parse_grid(data: dict, *, name: str = "sweep") -> Grid:
    """A :class:`Grid` from the parsed TOML ``data`` (module docstring for the keys).

    ``name`` is used when the file sets none. Raises ``ValueError`` with a one-line reason:
    an unknown key, an empty axis, a repeated value, a value out of range, an ε without the
    uniform profile, or more than :data:`MAX_CELLS` cells.
    """
    if not isinstance(data, dict):
        raise ValueError("a grid file is a TOML table")
    for key in data:
        if key not in _TOP:
            raise ValueError(f"unknown key {key!r} (expected: {', '.join(_TOP)})")
    gname = data.get("name", name)
    desc = data.get("description", "")
    if not isinstance(gname, str) or not gname.strip() or len(gname) > 200:
        raise ValueError(f"name must be a non-empty text of at most 200 characters, got "
                         f"{gname!r}")
    if not isinstance(desc, str):
        raise ValueError(f"description must be a text, got {desc!r}")
    raw_axes = data.get("axes", {})
    raw_opts = data.get("options", {})
    for what, table, allowed in (("axes", raw_axes, KNOBS), ("options", raw_opts, OPTIONS)):
        if not isinstance(table, dict):
            raise ValueError(f"[{what}] must be a table")
        for key in table:
            if key not in allowed:
                raise ValueError(f"unknown key {key!r} in [{what}] (expected: "
                                 f"{', '.join(allowed)})")
    options = {k: _int_in(k, raw_opts.get(k, d), 0, MAX_SEED) for k, d in OPTIONS.items()}
    axes: dict[str, tuple] = {}
    for key, default in KNOBS.items():
        axes[key] = _axis_values(key, raw_axes[key]) if key in raw_axes else (default,)
    profiles = axes["noise_profile"]
    for p in profiles:
        if p not in NOISE_PROFILES:
            raise ValueError(f"noise_profile must be one of {', '.join(NOISE_PROFILES)}, "
                             f"got {p!r}")
    if "noise_eps" in raw_axes:
        if "uniform" not in profiles:
            raise ValueError("noise_eps applies only to noise_profile 'uniform'")
        axes["noise_eps"] = tuple(_float_in("noise_eps", e, 0.0, 1.0)
                                  for e in axes["noise_eps"])
    elif "uniform" in profiles:
        raise ValueError("noise_profile 'uniform' needs noise_eps (a rate in [0, 1])")
    for key in ("fit_bias_scale", "fit_dropout_scale"):
        for v in axes[key]:
            _scale_or_same(key, v)
    for v in axes["train_size"]:
        if v != "all" and not _is_int(v):
            raise ValueError(f"train_size must be 'all' or an integer, got {v!r}")
    n = math.prod(len(vs) for vs in axes.values())
    if n > MAX_CELLS:
        raise ValueError(f"the grid has {n:,} cells; at most {MAX_CELLS:,} per sweep")
    grid = Grid(gname.strip(), desc, tuple(axes.items()), tuple(options.items()))
    grid.cells()  # validate every cell now, before any work
    return grid


def load_grid(path: str | Path) -> Grid:
    """:func:`parse_grid` of a TOML file (its stem is the default name).

    Raises ``ValueError`` with a one-line reason for a file that is not valid TOML or not a
    valid grid, and ``OSError`` when it cannot be read.
    """
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ValueError(f"{p.name} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{p.name} is not valid TOML: {str(exc).splitlines()[0]}") from None
    return parse_grid(data, name=p.stem)
