"""Data preprocessors: the first module of a model, turning what the data loader gives into
what ``forward`` takes, on the model's device."""

from __future__ import annotations

from .base import BaseDataPreprocessor
from .image import ImgDataPreprocessor

__all__ = ["BaseDataPreprocessor", "ImgDataPreprocessor"]
