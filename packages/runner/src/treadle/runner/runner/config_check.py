"""``treadle train --check CONFIG``: build everything a run needs, train nothing, and report
every problem at once, each naming its config key and, for a config file, the file and line.

A section that fails is replaced by a stand-in (a placeholder model, a one-sample loader, the
default visualizer...) so that the sections after it are still checked: one run of ``--check``
finds the misspelt optimizer *and* the scheduler with a bad milestone *and* the hook type that
does not exist. The runner is built in a temporary work directory, so that checking writes
nothing into the real one.
"""

from __future__ import annotations

import ast
import os
import tempfile
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from torch import nn
from torch.utils.data import DataLoader

from treadle import fileio
from treadle.config import Config

from ..model import BaseModel
from ..registry import HOOKS
from .dataloader import build_dataloader
from .runner import Runner, runner_arguments

# The top-level keys the Runner reads, in the order it reads them (messages are matched to the
# first one they name when an error carries no key of its own).
SECTIONS = (
    "model",
    "data_preprocessor",
    "train_dataloader",
    "val_dataloader",
    "test_dataloader",
    "train_cfg",
    "val_cfg",
    "test_cfg",
    "optim_wrapper",
    "param_scheduler",
    "auto_scale_lr",
    "val_evaluator",
    "test_evaluator",
    "default_hooks",
    "custom_hooks",
    "load_from",
    "resume",
    "launcher",
    "env_cfg",
    "log_processor",
    "log_level",
    "visualizer",
    "default_scope",
    "randomness",
    "elastic",
    "experiment_name",
    "model_wrapper_cfg",
    "work_dir",
)


@dataclass
class Problem:
    """One problem: the config key, the error, and where the key was written.

    Example:
        >>> str(Problem('optim_wrapper', KeyError('SDG is not registered'), 'cfg.py', 12))
        'cfg.py:12: optim_wrapper: KeyError: SDG is not registered'
    """

    key: str
    error: BaseException
    filename: str | None = None
    lineno: int | None = None

    @property
    def message(self) -> str:
        error = self.error
        text = error.args[0] if isinstance(error, KeyError) and error.args else str(error)
        return f"{type(error).__name__}: {text}"

    def __str__(self) -> str:
        where = ""
        if self.filename:
            where = f"{self.filename}:{self.lineno}: " if self.lineno else f"{self.filename}: "
        return f"{where}{self.key}: {self.message}"


@dataclass
class CheckReport:
    """What :func:`check_config` found; ``problems`` is empty when the config is fine.

    Example:
        >>> report = check_config(Config.fromfile('examples/digits/config.py'))  # doctest: +SKIP
        >>> report.ok, str(report)  # doctest: +SKIP
        (True, 'no problems found: ...')
    """

    problems: list[Problem] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        if self.ok:
            return f"no problems found: built {', '.join(self.checked)}"
        lines = [f"{len(self.problems)} problem(s) found:"]
        lines += [f"  {problem}" for problem in self.problems]
        return "\n".join(lines)


# -- where a key was written -------------------------------------------------------------------


class _Locator:
    """File and line of a dotted key in a config file or the files of its ``_base_``."""

    def __init__(self, filename: str | None) -> None:
        self.files: list[tuple[str, dict]] = []
        if filename and os.path.isfile(filename):
            self._add(os.path.abspath(filename), set())

    def _add(self, filename: str, seen: set) -> None:
        if filename in seen or len(seen) > 32:
            return
        seen.add(filename)
        try:
            with open(filename, encoding="utf-8") as file:
                text = file.read()
        except OSError:
            return
        bases: list[str] = []
        if filename.endswith(".py"):
            from treadle.config.python_source import key_lines

            try:
                tree = ast.parse(text, filename)
            except SyntaxError:
                return
            lines = key_lines(tree)
            for node in tree.body:
                if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "_base_":
                    try:
                        value = ast.literal_eval(node.value)
                    except ValueError:
                        continue
                    bases = [value] if isinstance(value, str) else list(value)
        else:
            from treadle.config.formats import key_lines

            lines = key_lines(text)
        self.files.append((filename, lines))
        for base in bases:
            if isinstance(base, str) and "::" not in base:
                self._add(os.path.normpath(os.path.join(os.path.dirname(filename), base)), seen)

    def __call__(self, key: str) -> tuple[str | None, int | None]:
        if not self.files:
            return None, None
        path = tuple(part for part in key.replace("[", ".").replace("]", "").split(".") if part)
        path = tuple(int(p) if p.isdigit() else p for p in path)
        for end in range(len(path), 0, -1):
            for filename, lines in self.files:
                for candidate in (path[:end], tuple(str(p) for p in path[:end])):
                    if candidate in lines:
                        return filename, lines[candidate]
        return self.files[0][0], None


# -- stand-ins for what failed -------------------------------------------------------------------


class _PlaceholderModel(BaseModel):
    """Stands in for a model that could not be built, so the optimizer and hooks are checked."""

    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Linear(1, 1)

    def forward(self, inputs: Any = None, data_samples: Any = None, mode: str = "tensor") -> Any:
        return {}


def _placeholder_loader() -> DataLoader:
    return DataLoader([0], batch_size=1)


# Functions the Runner calls with one section each: an error raised inside names that section.
_SECTION_OF_FUNCTION = {
    "setup_env": ("env_cfg", "launcher"),
    "set_randomness": ("randomness",),
    "build_logger": ("log_level",),
    "check_train_cfg": ("train_cfg",),
    "check_scheduler_cfg": ("param_scheduler",),
}


def _guess_key(error: BaseException, cfg: Mapping) -> str:
    traceback = error.__traceback__
    section = None
    while traceback is not None:  # outermost first: the Runner's own step wins
        name = traceback.tb_frame.f_code.co_name
        if section is None and name in _SECTION_OF_FUNCTION:
            section = _SECTION_OF_FUNCTION[name]
        traceback = traceback.tb_next
    text = str(error)
    if section is not None:
        # The section the message names first, among those the function reads.
        named = [(text.find(key), key) for key in section if key in text]
        return min(named)[1] if named else section[0]
    named = [key for key in SECTIONS if key in text]
    present = [key for key in named if key in cfg]
    return (present or named or ["(runner)"])[0]


class _CheckingRunner(Runner):
    """A Runner whose builders record their errors and go on with a stand-in."""

    def __init__(self, *args: Any, problems: list[tuple[str, BaseException]], **kwargs: Any):
        self._problems = problems
        super().__init__(*args, **kwargs)

    def _record(self, key: str, error: BaseException) -> None:
        self._problems.append((key, error))

    def set_randomness(self, *args: Any, **kwargs: Any) -> None:
        try:
            super().set_randomness(*args, **kwargs)
        except Exception as error:
            self._record("randomness", error)
            super().set_randomness(seed=None)

    def build_log_processor(self, log_processor: Any) -> Any:
        try:
            return super().build_log_processor(log_processor)
        except Exception as error:
            self._record("log_processor", error)
            return super().build_log_processor(dict())

    def build_visualizer(self, visualizer: Any = None) -> Any:
        try:
            return super().build_visualizer(visualizer)
        except Exception as error:
            self._record("visualizer", error)
            return super().build_visualizer(dict(type="Visualizer", name=uuid.uuid4().hex))

    def build_model(self, model: Any) -> nn.Module:
        try:
            return super().build_model(model)
        except Exception as error:
            self._record("model", error)
            return _PlaceholderModel()

    def register_hooks(self, default_hooks: Any = None, custom_hooks: Any = None) -> None:
        if isinstance(default_hooks, Mapping):
            good: dict[str, Any] = {}
            for name, hook in default_hooks.items():
                if isinstance(hook, Mapping):
                    try:  # alone first, so that one bad hook does not hide the others
                        HOOKS.build({k: v for k, v in hook.items() if k != "priority"})
                    except Exception as error:
                        self._record(f"default_hooks.{name}", error)
                        continue
                good[name] = hook
            default_hooks = good
        try:
            self.register_default_hooks(default_hooks)
        except Exception as error:
            self._record("default_hooks", error)
        if custom_hooks is None:
            return
        if not isinstance(custom_hooks, (list, tuple)):
            try:
                self.register_custom_hooks(custom_hooks)  # refuses it, in the Runner's words
            except Exception as error:
                self._record("custom_hooks", error)
            return
        for index, hook in enumerate(custom_hooks):
            try:
                self.register_custom_hooks([hook])
            except Exception as error:
                self._record(f"custom_hooks.{index}", error)


def _dataloaders(cfg: Mapping, problems: list, checked: list) -> dict[str, Any]:
    built = {}
    randomness = cfg.get("randomness")
    seed = randomness.get("seed") if isinstance(randomness, Mapping) else None
    for key in ("train_dataloader", "val_dataloader", "test_dataloader"):
        value = cfg.get(key)
        if value is None:
            built[key] = None
            continue
        try:
            built[key] = build_dataloader(value, seed=seed, where=key)
            checked.append(key)
        except Exception as error:
            problems.append((key, error))
            built[key] = _placeholder_loader()
    return built


def _exists(path: str) -> bool:
    try:
        return fileio.exists(path)
    except Exception:  # a backend that cannot be reached: not decided here
        return True


def check_config(cfg: Config | Mapping, filename: str | None = None) -> CheckReport:
    """Build every part of the runner ``cfg`` describes without training; return the problems.

    Example:
        >>> report = check_config(Config.fromfile('configs/resnet.py'))  # doctest: +SKIP
        >>> print(report)  # doctest: +SKIP
        2 problem(s) found:
          configs/resnet.py:31: optim_wrapper: KeyError: SDG is not in the treadle::optimizer ...
          configs/resnet.py:40: param_scheduler: ValueError: ...
    """
    if not isinstance(cfg, (Config, Mapping)):
        raise TypeError(f"check_config needs a Config or a dict, got {type(cfg).__name__}")
    if filename is None:
        filename = getattr(cfg, "filename", None)
    locate = _Locator(filename)
    raw: list[tuple[str, BaseException]] = []
    checked: list[str] = []
    report = CheckReport(checked=checked)
    for key in ("model", "work_dir"):
        if key not in cfg:
            message = f"the config has no {key!r}: a runner needs model and work_dir"
            raw.append((key, KeyError(message)))

    loaders = _dataloaders(cfg, raw, checked)
    runner = None
    with tempfile.TemporaryDirectory(prefix="treadle-check-") as work_dir:
        try:
            arguments = runner_arguments(cfg)
            arguments.update(
                model=cfg.get("model") if cfg.get("model") is not None else _PlaceholderModel(),
                work_dir=work_dir,
                train_dataloader=loaders["train_dataloader"],
                val_dataloader=loaders["val_dataloader"],
                test_dataloader=loaders["test_dataloader"],
                load_from=None,
                log_level="ERROR",  # the report is the output; the build logs are noise
                experiment_name=f"check_{uuid.uuid4().hex[:12]}",
            )
            runner = _CheckingRunner(**arguments, cfg=cfg, problems=raw)
            checked.extend(["model", "hooks", "visualizer", "log_processor", "randomness"])
        except Exception as error:
            raw.append((_guess_key(error, cfg), error))
        if runner is not None:
            _check_built(runner, cfg, raw, checked)
    for key, path_key in (("load_from", "load_from"), ("resume", "resume")):
        path = cfg.get(key)
        if isinstance(path, str) and path and not _exists(path):
            raw.append((path_key, FileNotFoundError(f"{key}={path!r}: no such checkpoint")))
    for key, error in raw:
        where_file, line = locate(_refine(key, error, cfg))
        report.problems.append(Problem(key, error, where_file, line))
    return report


def _leaves(value: Any, path: str) -> list[tuple[str, str, Any]]:
    """(dotted path, last key, value) of everything under ``value``."""
    found = []
    items = (
        value.items()
        if isinstance(value, Mapping)
        else (enumerate(value) if isinstance(value, (list, tuple)) else [])
    )
    for name, item in items:
        here = f"{path}.{name}"
        found.append((here, str(name), item))
        found.extend(_leaves(item, here))
    return found


def _refine(key: str, error: BaseException, cfg: Mapping) -> str:
    """The deepest key under ``key`` the message points at: a value it quotes (the type name of
    a registry error, a bad string), else a key name it mentions; ``key`` itself otherwise."""
    top = key.split(".")[0]
    section: Any = cfg.get(top) if hasattr(cfg, "get") else None
    for part in key.split(".")[1:]:
        if isinstance(section, Mapping) and part in section:
            section = section[part]
        elif isinstance(section, (list, tuple)) and part.isdigit() and int(part) < len(section):
            section = section[int(part)]
        else:
            return key
    text = str(error)
    leaves = _leaves(section, key)
    for path, name, value in leaves:
        if isinstance(value, str) and len(value) > 1 and repr(value) in text:
            # A type name belongs to the dict holding it: point at that dict's key.
            return (
                path.rsplit(".", 1)[0]
                if name == "type" and path.count(".") > key.count(".") + 1
                else path
            )
    for path, name, _ in leaves:
        if len(name) > 3 and not name.isdigit() and name in text:
            return path
    return key


def _step(raw: list, checked: list, key: str, action: Any) -> Any:
    try:
        result = action()
        checked.append(key)
        return result
    except Exception as error:
        raw.append((key, error))
        return None


def _check_built(runner: Any, cfg: Mapping, raw: list, checked: list) -> None:
    """The parts a Runner builds when training starts: loops, optimizer, schedulers,
    evaluators."""
    if runner._train_loop is not None:
        loop = _step(raw, checked, "train_cfg", lambda: runner.build_train_loop(runner._train_loop))
        if loop is not None:
            runner._train_loop = loop
        if runner.optim_wrapper is not None:
            wrapper = _step(
                raw,
                checked,
                "optim_wrapper",
                lambda: runner.build_optim_wrapper(runner.optim_wrapper),
            )
            if wrapper is not None:
                runner.optim_wrapper = wrapper
                if runner.auto_scale_lr is not None:
                    _step(
                        raw,
                        checked,
                        "auto_scale_lr",
                        lambda: runner.scale_lr(wrapper, runner.auto_scale_lr),
                    )
                if runner.param_schedulers is not None and loop is not None:
                    _step(
                        raw,
                        checked,
                        "param_scheduler",
                        lambda: runner.build_param_scheduler(runner.param_schedulers),
                    )
    for mode in ("val", "test"):
        if getattr(runner, f"_{mode}_loop") is None:
            continue
        build = getattr(runner, f"build_{mode}_loop")
        evaluator = cfg.get(f"{mode}_evaluator")
        try:
            runner.build_evaluator(evaluator)
        except Exception:
            # Reported as the loop's build says it (the words `treadle train` shows), under
            # the evaluator's key.
            try:
                build(getattr(runner, f"_{mode}_loop"))
            except Exception as loop_error:
                error = loop_error
            raw.append((f"{mode}_evaluator", error))
            continue
        checked.append(f"{mode}_evaluator")
        _step(raw, checked, f"{mode}_cfg", lambda b=build, m=mode: b(getattr(runner, f"_{m}_loop")))
