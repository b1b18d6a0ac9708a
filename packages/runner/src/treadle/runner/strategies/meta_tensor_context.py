"""``MetaTensorContext``: every tensor created inside it lands on the meta device (MMEngine's
``mmengine._strategy.utils.MetaTensorContext``)."""

from __future__ import annotations

from typing import Any

from torch._subclasses.fake_tensor import _is_tensor_constructor
from torch.utils._python_dispatch import TorchDispatchMode


class MetaTensorContext(TorchDispatchMode):
    """A dispatch mode that sends each tensor constructor (``empty``, ``zeros``, ``arange``,
    ...) to the meta device, whatever device the caller asked for: a model built inside it has
    shapes and dtypes but no storage, to be sharded and materialized later.

    Unlike ``with torch.device('meta')``, it also overrides an explicit ``device=`` argument
    (code that builds buffers with ``device='cuda'``). Operations on existing tensors run
    unchanged.

    Example:
        >>> import torch
        >>> with MetaTensorContext():
        ...     layer = torch.nn.Linear(4, 4)
        ...     t = torch.zeros(2, device='cpu')
        >>> layer.weight.is_meta, t.is_meta
        (True, True)
    """

    def __torch_dispatch__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = dict(kwargs or {})
        if _is_tensor_constructor(func):
            names = [argument.name for argument in func._schema.arguments]
            position = names.index("device")
            # The device may come positionally (aten's schemas list it after the sizes).
            if len(args) > position:
                args = (*args[:position], "meta", *args[position + 1 :])
            else:
                kwargs["device"] = "meta"
        return func(*args, **kwargs)
