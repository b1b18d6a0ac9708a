"""Averaged copies of a model (SWA, EMA), registered in MODELS under MMEngine's names."""

from .base import BaseAveragedModel
from .ema import ExponentialMovingAverage, MomentumAnnealingEMA
from .swa import StochasticWeightAverage

__all__ = [
    "BaseAveragedModel",
    "ExponentialMovingAverage",
    "MomentumAnnealingEMA",
    "StochasticWeightAverage",
]
