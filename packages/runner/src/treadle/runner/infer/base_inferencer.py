"""BaseInferencer: the preprocess → forward → visualize → postprocess path of a task's
inferencer, with the model built from a config, a package's metafile or a checkpoint."""

from __future__ import annotations

import functools
import itertools
import warnings
from abc import abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn

from treadle.config import Config, ConfigDict
from treadle.logging import print_log
from treadle.registry import DefaultScope
from treadle.registry.suggestions import missing_type_message
from treadle.runner.checkpoint import _load_checkpoint, _load_checkpoint_to_model
from treadle.runner.dataset import pseudo_collate
from treadle.runner.device import resolve_device
from treadle.runner.hub.metafile import find_index_root, iter_models, match_names
from treadle.runner.registry import FUNCTIONS, MODELS

from .kwargs import dispatch_kwargs
from .meta import InferencerMeta
from .model_source import config_text_of, resolve_model

ConfigType = Config | ConfigDict
InputType = str | np.ndarray | torch.Tensor
InputsType = InputType | Sequence[InputType]


class BaseInferencer(metaclass=InferencerMeta):
    """The inference path of a task: subclasses give ``_init_pipeline``, ``visualize`` and
    ``postprocess``; calling the inferencer runs them in order over batches.

    ``model`` is a config file, a Config or dict, ``'package::path/to/config.py'``, a model
    name or alias from a package's metafile (``'package::name'``, or ``'name'`` with
    ``scope='package'``), or None when ``weights`` is a Runner checkpoint (it holds its
    config). ``weights`` is any path CheckpointLoader reads; by default the metafile's. The
    keywords of ``__call__`` go to the stage whose ``*_kwargs`` set names them.

    Example:
        >>> class Doubler(BaseInferencer):
        ...     def _init_pipeline(self, cfg):
        ...         return lambda x: dict(inputs=torch.as_tensor(x, dtype=torch.float32))
        ...     def visualize(self, inputs, preds, show=False):
        ...         return None
        ...     def postprocess(self, preds, visualization, return_datasamples=False):
        ...         return dict(predictions=preds, visualization=visualization)
        >>> inferencer = Doubler('configs/doubler.py', weights='work_dirs/epoch_2.pth')
        >>> inferencer([[1.0, 2.0], [3.0, 4.0]], batch_size=2)['predictions']
    """

    preprocess_kwargs: ClassVar[set[str]] = set()
    forward_kwargs: ClassVar[set[str]] = set()
    visualize_kwargs: ClassVar[set[str]] = set()
    postprocess_kwargs: ClassVar[set[str]] = set()

    def __init__(
        self,
        model: ConfigType | dict | str | None = None,
        weights: str | None = None,
        device: str | torch.device | None = None,
        scope: str | None = None,
        show_progress: bool = True,
    ) -> None:
        current = DefaultScope.get_current_instance()
        default_scope = current.scope_name if current is not None else None
        cfg, weights, self.scope = resolve_model(model, weights, scope, default_scope)
        self.model = self._init_model(cfg, weights, device)
        self.pipeline = self._init_pipeline(cfg)
        self.collate_fn = self._init_collate(cfg)
        self.visualizer = self._init_visualizer(cfg)
        self.cfg = cfg
        self.show_progress = show_progress

    # -- the four stages ----------------------------------------------------------------------

    def __call__(
        self,
        inputs: InputsType,
        return_datasamples: bool = False,
        batch_size: int = 1,
        **kwargs: Any,
    ) -> dict:
        """Run the inputs through preprocess, forward (by batches of ``batch_size``),
        visualize and postprocess; ``kwargs`` go to the stage that declares them."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
        preprocess_kwargs, forward_kwargs, visualize_kwargs, postprocess_kwargs = (
            self._dispatch_kwargs(**kwargs)
        )
        ori_inputs = self._inputs_to_list(inputs)
        batches = self.preprocess(ori_inputs, batch_size=batch_size, **preprocess_kwargs)
        if self.show_progress:
            from rich.progress import track

            batches = track(batches, description="Inference")
        preds: list = []
        for data in batches:
            preds.extend(self.forward(data, **forward_kwargs))
        visualization = self.visualize(ori_inputs, preds, **visualize_kwargs)
        return self.postprocess(preds, visualization, return_datasamples, **postprocess_kwargs)

    def _inputs_to_list(self, inputs: InputsType) -> list:
        """A list of inputs: a folder (any treadle.fileio backend that lists) gives its files,
        sorted; a list or tuple is kept; anything else is one input."""
        if isinstance(inputs, str):
            from treadle import fileio

            try:
                backend = fileio.get_file_backend(inputs)
            except fileio.UnknownBackendError:
                # Not a path treadle.fileio reads (a prompt, an id...): one input as it is.
                return [inputs]
            if hasattr(backend, "isdir") and backend.isdir(inputs):
                names = sorted(backend.list_dir_or_file(inputs, list_dir=False))
                return [backend.join_path(inputs, name) for name in names]
        if isinstance(inputs, (list, tuple)):
            return list(inputs)
        return [inputs]

    def preprocess(self, inputs: InputsType, batch_size: int = 1, **kwargs: Any) -> Iterator:
        """Batches for ``forward``: each input through the pipeline, ``batch_size`` of them
        through ``collate_fn``."""
        chunks = self._get_chunk_data(map(self.pipeline, inputs), batch_size)
        yield from map(self.collate_fn, chunks)

    @torch.no_grad()
    def forward(self, inputs: dict | tuple, **kwargs: Any) -> Any:
        """The model's predictions for one batch (``model.test_step``)."""
        return self.model.test_step(inputs)

    @abstractmethod
    def visualize(self, inputs: list, preds: Any, show: bool = False, **kwargs: Any) -> Any:
        """Draw the predictions (for example, images as arrays); may return None."""

    @abstractmethod
    def postprocess(
        self, preds: Any, visualization: Any, return_datasample: bool = False, **kwargs: Any
    ) -> dict:
        """The result of ``__call__``: usually ``dict(predictions=..., visualization=...)``,
        predictions as plain data unless ``return_datasample``."""

    # -- building -----------------------------------------------------------------------------

    def _init_model(
        self, cfg: ConfigType, weights: str | None, device: str | torch.device | None = "cpu"
    ) -> nn.Module:
        """The model of ``cfg`` (filled from the checkpoint's config when empty), with the
        weights loaded, on ``device`` (None: the first accelerator, else the CPU), in eval
        mode."""
        checkpoint = None
        if weights is not None:
            checkpoint = _load_checkpoint(weights, map_location="cpu")
        if not cfg:
            cfg.update(Config.fromstring(config_text_of(checkpoint, weights), ".py").to_dict())
            # A Runner config names its scope: the model is built there.
            if self.scope is None:
                self.scope = cfg.get("default_scope")
        if "model" not in cfg:
            raise KeyError("the inferencer's config has no 'model' key: there is nothing to build")
        # The checkpoint holds the trained weights: downloading pretrained ones is wasted work.
        if isinstance(cfg.model, Mapping) and cfg.model.get("pretrained") is not None:
            del cfg.model["pretrained"]
        with DefaultScope.overwrite_default_scope(self.scope):
            model = MODELS.build(cfg.model)
        model.cfg = cfg
        self._load_weights_to_model(model, checkpoint, cfg)
        model.to(resolve_device(device))
        model.eval()
        return model

    def _load_weights_to_model(
        self, model: nn.Module, checkpoint: dict | None, cfg: ConfigType | None
    ) -> None:
        """Load ``checkpoint`` into ``model``; subclasses also take meta information here."""
        if checkpoint is None:
            warnings.warn(
                "no weights were given (nor listed in a metafile): the inferencer predicts with "
                "a randomly initialized model",
                UserWarning,
                stacklevel=3,
            )
            return
        _load_checkpoint_to_model(model, checkpoint)

    @abstractmethod
    def _init_pipeline(self, cfg: ConfigType) -> Callable:
        """The function that turns one input into what ``collate_fn`` takes."""

    def _init_collate(self, cfg: ConfigType) -> Callable:
        """``cfg.test_dataloader.collate_fn`` (a name or ``dict(type=..., **kwargs)`` in the
        FUNCTIONS registry of the inferencer's scope), else ``pseudo_collate``."""
        # Config is not a Mapping; both it and ConfigDict have get().
        loader = cfg.get("test_dataloader")
        value = loader.get("collate_fn") if isinstance(loader, Mapping) else None
        if value is None:
            return pseudo_collate
        if callable(value):
            return value
        args = dict(value) if isinstance(value, Mapping) else {"type": value}
        name = args.pop("type", None)
        if not isinstance(name, str):
            if callable(name):
                return _bound(name, args)
            raise TypeError(
                "test_dataloader.collate_fn must be a registered name, a dict with a 'type' or "
                f"a function, got {value!r}"
            )
        with FUNCTIONS.switch_scope_and_registry(self.scope) as registry:
            function = registry.get(name)
            if function is None:
                raise KeyError(
                    f"test_dataloader.collate_fn: {missing_type_message(registry, name)}"
                )
        return _bound(function, args)

    def _init_visualizer(self, cfg: ConfigType) -> Any:
        """The visualizer ``cfg.visualizer`` describes (under a name no other visualizer has),
        or None."""
        if cfg.get("visualizer") is None:
            return None
        from treadle.visual import VISUALIZERS, Visualizer

        stamp = str(datetime.now().timestamp())
        name = cfg.visualizer.get("name", stamp)
        if Visualizer.check_instance_created(name):
            name = f"{name}-{stamp}"
        cfg.visualizer["name"] = name
        # Built in the current default scope, as MMEngine does: a package without a visualizer
        # registry of its own would only get a warning from a scoped build.
        return VISUALIZERS.build(cfg.visualizer)

    # -- helpers ------------------------------------------------------------------------------

    def _get_chunk_data(self, inputs: Iterable, chunk_size: int) -> Iterator[list]:
        """Lists of ``chunk_size`` items of ``inputs`` (the last one shorter)."""
        if chunk_size < 1:
            raise ValueError(f"chunk_size (the batch size) must be >= 1, got {chunk_size!r}")
        iterator = iter(inputs)
        while chunk := list(itertools.islice(iterator, chunk_size)):
            yield chunk

    def _dispatch_kwargs(self, **kwargs: Any) -> tuple[dict, dict, dict, dict]:
        """``kwargs`` split by stage: preprocess, forward, visualize, postprocess."""
        return dispatch_kwargs(type(self), kwargs)

    # -- models listed in packages' metafiles ---------------------------------------------------

    def _load_model_from_metafile(self, model: str) -> tuple[Config, str | None]:
        """The config and weights of the metafile model ``model`` in this inferencer's scope."""
        from .model_source import model_from_metafile

        if self.scope is None:
            raise ValueError(
                f"cannot look up the model {model!r} in a metafile without a scope: pass scope="
            )
        return model_from_metafile(self.scope, model)

    @staticmethod
    def _get_repo_or_mim_dir(scope: str) -> str:
        """The folder of ``scope``'s ``model-index.yml`` (a checkout, or the ``.mim`` folder
        of an installed package)."""
        return find_index_root(scope)

    @staticmethod
    def _get_models_from_metafile(dir: str) -> Iterator[dict]:
        """The model entries of the metafiles ``dir/model-index.yml`` imports."""
        yield from iter_models(dir)

    @staticmethod
    def list_models(scope: str | None = None, patterns: str = r".*") -> list[str]:
        """The names and aliases of ``scope``'s models (by default the current default scope's)
        that match the regular expression ``patterns``; they are logged too.

        Example:
            >>> BaseInferencer.list_models('treadle_toy_zoo', patterns='toy-mlp')
            ['toy-mlp_4xb3_2e', 'toy-mlp']
        """
        if scope is None:
            current = DefaultScope.get_current_instance()
            if current is None:
                raise ValueError("list_models: pass scope='<package>' (there is no default scope)")
            scope = current.scope_name
        names = match_names(find_index_root(scope), patterns)
        print_log("".join(f"model_name: {name}\n" for name in names), logger="current")
        return names


def _bound(function: Callable, args: dict) -> Callable:
    return function if not args else functools.partial(function, **args)
