"""Finding a torchmetrics metric class from what a config says: a name, a dotted path or the
class. torchmetrics is imported here, on first use, never when treadle.runner.evaluator is."""

from __future__ import annotations

import importlib
import inspect
from types import ModuleType
from typing import Any

INSTALL_HINT = "Install it with: pip install treadle-runner[torchmetrics]"
# Where torchmetrics keeps its metric classes (MulticlassAccuracy is not at the top level); the
# domains that need extra packages come last, and one that fails to import is skipped.
DOMAINS = (
    "classification",
    "regression",
    "aggregation",
    "retrieval",
    "nominal",
    "clustering",
    "segmentation",
    "wrappers",
    "image",
    "text",
    "audio",
    "detection",
    "multimodal",
    "shape",
    "video",
)


def import_torchmetrics() -> ModuleType:
    try:
        return importlib.import_module("torchmetrics")
    except ImportError as error:
        raise ImportError(
            f"TorchMetric needs the torchmetrics package, which could not be imported "
            f"({error}). {INSTALL_HINT}"
        ) from error


def metric_class(metric: str | type) -> type:
    """The torchmetrics ``Metric`` subclass ``metric`` names: a class name such as
    ``'MulticlassAccuracy'``, a dotted path such as ``'torchmetrics.regression.MeanSquaredError'``,
    or the class itself."""
    torchmetrics = import_torchmetrics()
    if isinstance(metric, str):
        found = _by_path(metric) if "." in metric else _by_name(torchmetrics, metric)
    elif inspect.isclass(metric):
        found = metric
    else:
        raise TypeError(
            f"TorchMetric's metric must be a torchmetrics class name, a dotted path or a class, "
            f"got {type(metric).__name__}: {metric!r}"
        )
    if not (inspect.isclass(found) and issubclass(found, torchmetrics.Metric)):
        raise TypeError(f"TorchMetric's metric={metric!r} is not a torchmetrics.Metric subclass")
    return found


def _by_path(path: str) -> Any:
    module_name, _, attribute = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ImportError(
            f"TorchMetric's metric={path!r}: cannot import {module_name!r} ({error})"
        ) from error
    if not hasattr(module, attribute):
        raise AttributeError(f"TorchMetric's metric={path!r}: {module_name} has no {attribute!r}")
    return getattr(module, attribute)


def _by_name(torchmetrics: ModuleType, name: str) -> type:
    if inspect.isclass(getattr(torchmetrics, name, None)):
        return getattr(torchmetrics, name)
    modules = [torchmetrics]
    for domain in DOMAINS:
        module = _domain(torchmetrics, domain)
        if module is None:
            continue
        if inspect.isclass(getattr(module, name, None)):
            return getattr(module, name)
        modules.append(module)
    raise ValueError(_unknown_name_message(torchmetrics, name, modules))


def _domain(torchmetrics: ModuleType, domain: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"torchmetrics.{domain}")
    except Exception:  # a domain whose own optional dependencies are missing
        return None


def _unknown_name_message(torchmetrics: ModuleType, name: str, modules: list[ModuleType]) -> str:
    import difflib

    known = {
        attribute
        for module in modules
        for attribute, value in vars(module).items()
        if inspect.isclass(value) and issubclass(value, torchmetrics.Metric)
    }
    # Case-insensitive matching: 'multiclassaccuracy' should still find MulticlassAccuracy.
    by_lower = {attribute.lower(): attribute for attribute in known}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=5, cutoff=0.6)
    hint = f" Did you mean {', '.join(by_lower[match] for match in close)}?" if close else ""
    return f"torchmetrics has no metric named {name!r}.{hint}"
