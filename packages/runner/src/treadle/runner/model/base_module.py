"""``BaseModule``: an ``nn.Module`` initialized by its ``init_cfg``; and ``Sequential``,
``ModuleList`` and ``ModuleDict`` that carry an ``init_cfg`` of their own."""

from __future__ import annotations

import copy
import logging
from abc import ABCMeta
from collections.abc import Iterable, Mapping
from typing import Any

from torch import nn

from treadle.logging import print_log

from .weight_init import PretrainedInit, initialize, update_init_info
from .weight_init.init_info import dump_init_info, end_init_record, start_init_record
from .wrapper_check import is_model_wrapper


def _initializable(child: nn.Module) -> nn.Module:
    """The module whose ``init_weights`` stands for ``child``: a model wrapper (DDP...) has
    none of its own, so the model it wraps."""
    # is_model_wrapper is looked up here at each call: tests patch it in this module.
    if not hasattr(child, "init_weights") and is_model_wrapper(child):
        return child.module
    return child


def _is_pretrained(cfg: Mapping[str, Any]) -> bool:
    kind = cfg.get("type")
    if isinstance(kind, str):
        # 'treadle.Pretrained' is the same initializer with its scope written out.
        return kind.rsplit(".", 1)[-1] == "Pretrained"
    return isinstance(kind, type) and issubclass(kind, PretrainedInit)


def _cfg_list(init_cfg: Any, owner: str) -> list[dict]:
    if not init_cfg:
        return []
    cfgs = [init_cfg] if isinstance(init_cfg, Mapping) else init_cfg
    if not isinstance(cfgs, list) or not all(isinstance(c, Mapping) for c in cfgs):
        raise TypeError(
            f"init_cfg of {owner} must be a dict or a list of dicts, got "
            f"{type(init_cfg).__name__} {init_cfg!r}"
        )
    for cfg in cfgs:
        if "type" not in cfg:
            raise KeyError(f"init_cfg of {owner} needs a 'type' key, got {dict(cfg)}")
    return cfgs


class BaseModule(nn.Module, metaclass=ABCMeta):
    """An ``nn.Module`` that knows how to initialize its weights.

    Its metaclass is ABCMeta, as in MMEngine, so ``@abstractmethod`` in a subclass is enforced.

    ``init_weights()`` runs the module's ``init_cfg`` (see ``initialize``), then the
    ``init_weights`` of each child that has one and has not run it yet, then any
    ``Pretrained`` entry of ``init_cfg`` last, so loaded weights win. The outermost call
    records, for every parameter, which initializer set it last (``_params_init_info``, shared
    by every submodule while it runs) and hands the record to ``_dump_init_info``, which logs
    each parameter's shape and initializer.

    Args:
        init_cfg: a dict or list of dicts naming initializers of WEIGHT_INITIALIZERS.

    Example:
        >>> class Head(BaseModule):
        ...     def __init__(self):
        ...         super().__init__(init_cfg=dict(type='Normal', std=0.01, layer='Linear'))
        ...         self.fc = nn.Linear(8, 2)
        >>> head = Head()
        >>> head.is_init
        False
        >>> head.init_weights()  # doctest: +SKIP
        2024/05/01 12:00:00 - treadle - INFO - Name of parameter - Initialization information
        <BLANKLINE>
        fc.weight - torch.Size([2, 8]):
        NormalInit: mean=0, std=0.01, bias=0
        ...
    """

    def __init__(self, init_cfg: dict | list[dict] | None = None) -> None:
        super().__init__()
        self._is_init = False
        # A copy: one config object is commonly shared by many blocks.
        self.init_cfg = copy.deepcopy(init_cfg)

    @property
    def is_init(self) -> bool:
        """Whether ``init_weights`` has run; a second call does nothing but warn."""
        return self._is_init

    @is_init.setter
    def is_init(self, value: bool) -> None:
        self._is_init = value

    def init_weights(self) -> None:
        """Initialize this module and its children (see the class docstring)."""
        top_level = not hasattr(self, "_params_init_info")
        if top_level and self._is_init:
            # A repeated call changes nothing: warn, without logging the whole table again.
            self._init_once()
            return
        if top_level:
            start_init_record(self)
        try:
            self._init_once()
            if top_level:
                self._dump_init_info()
        finally:
            if top_level:
                end_init_record(self)

    def _dump_init_info(self) -> None:
        """Log which initializer set each parameter last (MMEngine's name). ``init_weights``
        calls it at the outermost level while ``self._params_init_info`` holds the record (a
        dict by parameter, with its ``'init_info'``): a subclass or a test may replace it to
        read the record. Where the current logger writes a file, the table goes to the file
        only; only the main process logs it."""
        dump_init_info(self)

    def _init_once(self) -> None:
        name = type(self).__name__
        if self._is_init:
            print_log(
                f"init_weights of {name} has been called more than once.",
                logger="current",
                level=logging.WARNING,
            )
            return
        cfgs = _cfg_list(self.init_cfg, name)
        pretrained = [cfg for cfg in cfgs if _is_pretrained(cfg)]
        if cfgs:
            print_log(
                f"initialize {name} with init_cfg {self.init_cfg}",
                logger="current",
                level=logging.DEBUG,
            )
            initialize(self, [cfg for cfg in cfgs if not _is_pretrained(cfg)])
        for child in self.children():
            child = _initializable(child)
            if hasattr(child, "init_weights") and not getattr(child, "is_init", False):
                child.init_weights()
                # A child may define its own init_weights that records nothing.
                update_init_info(
                    child,
                    init_info=f"Initialized by user-defined `init_weights` in "
                    f"{type(child).__name__}",
                )
        if pretrained:
            initialize(self, pretrained)
        self._is_init = True

    def __repr__(self) -> str:
        text = super().__repr__()
        if self.init_cfg:
            text += f"\ninit_cfg={self.init_cfg}"
        return text


class Sequential(BaseModule, nn.Sequential):
    """``nn.Sequential`` with its own ``init_cfg``.

    Example:
        >>> block = Sequential(nn.Linear(4, 4), nn.ReLU(),
        ...                    init_cfg=dict(type='Constant', val=0, layer='Linear'))
        >>> block.init_weights()  # doctest: +SKIP
    """

    def __init__(self, *args: nn.Module, init_cfg: dict | list[dict] | None = None) -> None:
        BaseModule.__init__(self, init_cfg)
        nn.Sequential.__init__(self, *args)


class ModuleList(BaseModule, nn.ModuleList):
    """``nn.ModuleList`` with its own ``init_cfg``.

    Example:
        >>> layers = ModuleList([nn.Linear(4, 4) for _ in range(3)],
        ...                     init_cfg=dict(type='Xavier', layer='Linear'))
        >>> len(layers)
        3
    """

    def __init__(
        self, modules: Iterable[nn.Module] | None = None, init_cfg: dict | list[dict] | None = None
    ) -> None:
        BaseModule.__init__(self, init_cfg)
        nn.ModuleList.__init__(self, modules)


class ModuleDict(BaseModule, nn.ModuleDict):
    """``nn.ModuleDict`` with its own ``init_cfg``.

    Example:
        >>> heads = ModuleDict(dict(cls=nn.Linear(4, 2), reg=nn.Linear(4, 4)),
        ...                    init_cfg=dict(type='Normal', std=0.01, layer='Linear'))
        >>> sorted(heads)
        ['cls', 'reg']
    """

    def __init__(
        self,
        modules: Mapping[str, nn.Module] | Iterable[tuple[str, nn.Module]] | None = None,
        init_cfg: dict | list[dict] | None = None,
    ) -> None:
        BaseModule.__init__(self, init_cfg)
        nn.ModuleDict.__init__(self, modules)
