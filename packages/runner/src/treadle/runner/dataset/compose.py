"""``Compose``: a pipeline of transforms applied one after another."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from treadle.runner.registry import TRANSFORMS


# Not registered in TRANSFORMS, as in MMEngine: toolboxes register their own ``Compose`` in the
# root registry (mmcv's mmcv.transforms.wrappers does), which would clash with a treadle one.
class Compose:
    """Apply ``transforms`` in order; a transform that returns None stops the pipeline and
    the whole call returns None (the dataset then draws another sample in training).

    Each transform is a callable, or a config dict built from ``TRANSFORMS``.

    Example:
        >>> pipeline = Compose([lambda d: {**d, 'x': d['x'] * 2}, lambda d: {**d, 'y': 1}])
        >>> pipeline({'x': 3})
        {'x': 6, 'y': 1}
    """

    def __init__(self, transforms: Sequence[Mapping | Callable] | None) -> None:
        self.transforms: list[Callable] = []
        for position, transform in enumerate(transforms or []):
            if isinstance(transform, Mapping):
                built = TRANSFORMS.build(transform)
                if not callable(built):
                    raise TypeError(
                        f"transform {position} of the pipeline, built from {dict(transform)!r}, "
                        f"is a {type(built).__name__}, which is not callable"
                    )
                transform = built
            elif not callable(transform):
                raise TypeError(
                    f"transform {position} of the pipeline must be a callable or a config dict, "
                    f"got {type(transform).__name__}: {transform!r}"
                )
            self.transforms.append(transform)

    def __call__(self, data: Any) -> Any:
        for transform in self.transforms:
            data = transform(data)
            if data is None:
                return None
        return data

    def __repr__(self) -> str:
        lines = "".join(f"\n    {transform}" for transform in self.transforms)
        return f"{type(self).__name__}({lines}\n)"
