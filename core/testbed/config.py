"""Configuration of a generated testbed; its stable hash keys every cache."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

__all__ = ["DEFAULT_SEEDS", "TestbedConfig"]

DEFAULT_SEEDS = (20260321, 20260322, 20260323, 20260324)


@dataclass(frozen=True, kw_only=True)
class TestbedConfig:
    """What to generate (the benchmark specification §2.1, §2.13).

    Parameters
    ----------
    seeds : generator seeds; the paper pools the four defaults.
    personas_per_difficulty : personas per difficulty class and seed (160 in the paper). Splits
        keep the released proportions 72/16/32/40 of 160 (see :func:`split_counts`).
    bias_scale : multiplies the five self-report and planner distortion knobs, each capped at 1.
    dropout_scale : multiplies device/objective dropout and noise rates, each capped at 0.5.
    """

    __test__ = False  # not a pytest class

    seeds: tuple[int, ...] = DEFAULT_SEEDS
    personas_per_difficulty: int = 160
    bias_scale: float = 1.0
    dropout_scale: float = 1.0

    def __post_init__(self) -> None:
        seeds = tuple(int(s) for s in self.seeds)
        object.__setattr__(self, "seeds", seeds)
        if not seeds:
            raise ValueError("seeds must not be empty")
        if len(set(seeds)) != len(seeds):
            raise ValueError(f"seeds must be distinct, got {seeds}")
        if any(s < 0 or s >= 2**32 for s in seeds):
            raise ValueError("seeds must lie in [0, 2**32)")
        n = int(self.personas_per_difficulty)
        if not 4 <= n <= 1000:
            raise ValueError(f"personas_per_difficulty must be in [4, 1000], got {n}")
        object.__setattr__(self, "personas_per_difficulty", n)
        for name in ("bias_scale", "dropout_scale"):
            v = float(getattr(self, name))
            if not 0.0 <= v <= 4.0 or v != v:
                raise ValueError(f"{name} must be in [0, 4], got {v}")
            object.__setattr__(self, name, v)

    def to_dict(self) -> dict:
        """Plain-JSON form (seeds as a list)."""
        d = asdict(self)
        d["seeds"] = list(self.seeds)
        return d

    @property
    def key(self) -> str:
        """Stable 16-hex-digit hash of the configuration (the cache key)."""
        blob = json.dumps(self.to_dict(), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def split_counts(self) -> dict[str, int]:
        """Per-class split sizes: 72/16/32/40 of 160, scaled and rounded, test takes the rest."""
        n = self.personas_per_difficulty
        train = round(n * 72 / 160)
        dev = round(n * 16 / 160)
        cal = round(n * 32 / 160)
        return {"train": train, "dev": dev, "calibration": cal, "test": n - train - dev - cal}
