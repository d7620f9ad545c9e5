"""Resolvers of seed 000 (and unsupervised Dawid–Skene): fit on train, calibrate, predict.

Every resolver has ``fit(train: Split, cal: Split) -> self`` and ``predict(atoms) ->
Prediction``; ``predict`` sees the ``(N, 18, 5)`` atom codes and nothing else.
"""

from ._common import KMAX, KQ, VALID, Prediction, Split, check_atoms
from .abf import ABF
from .baselines import SSB, MajorityClass, MajorityVote, RandomGuess, SSBGlobal, source_reachability
from .bcf import BCF
from .dawid_skene import DawidSkene
from .nbf import DSNBF, NBF

__all__ = [
    "ABF",
    "BCF",
    "DSNBF",
    "KMAX",
    "KQ",
    "NBF",
    "SSB",
    "VALID",
    "DawidSkene",
    "MajorityClass",
    "MajorityVote",
    "Prediction",
    "RandomGuess",
    "SSBGlobal",
    "Split",
    "check_atoms",
    "source_reachability",
]
