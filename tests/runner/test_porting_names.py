"""MMEngine's names for porting users: treadle.runner.mmengine_names (a drop-in for
``import mmengine``), the mmengine.utils names of treadle.runner.utils, and
treadle.runner.utils.dl_utils."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch import nn

import treadle.runner.mmengine_names as mmengine
from treadle.runner import utils
from treadle.runner.porting import MODULE_MAP, NAME_MOVES
from treadle.runner.utils import dl_utils

# MMEngine 0.10.7's top-level names (dir(mmengine), public, minus FileClient, which MMEngine
# deprecates and treadle does not provide).
MMENGINE_TOP_LEVEL = [
    "BaseFileHandler",
    "BaseStorageBackend",
    "Config",
    "ConfigDict",
    "DATASETS",
    "DATA_SAMPLERS",
    "DefaultScope",
    "DictAction",
    "EVALUATOR",
    "FUNCTIONS",
    "HOOKS",
    "HTTPBackend",
    "HardDiskBackend",
    "HistoryBuffer",
    "INFERENCERS",
    "JsonHandler",
    "LOG_PROCESSORS",
    "LOOPS",
    "LmdbBackend",
    "LocalBackend",
    "METRICS",
    "MMLogger",
    "MODELS",
    "MODEL_WRAPPERS",
    "ManagerMeta",
    "ManagerMixin",
    "MemcachedBackend",
    "MessageHub",
    "OPTIMIZERS",
    "OPTIM_WRAPPERS",
    "OPTIM_WRAPPER_CONSTRUCTORS",
    "PARAM_SCHEDULERS",
    "PetrelBackend",
    "PickleHandler",
    "ProgressBar",
    "RUNNERS",
    "RUNNER_CONSTRUCTORS",
    "Registry",
    "STRATEGIES",
    "TASK_UTILS",
    "TRANSFORMS",
    "Timer",
    "TimerError",
    "VISBACKENDS",
    "VISUALIZERS",
    "WEIGHT_INITIALIZERS",
    "YamlHandler",
    "analysis",
    "apply_to",
    "build_from_cfg",
    "build_model_from_cfg",
    "build_runner_from_cfg",
    "build_scheduler_from_cfg",
    "call_command",
    "check_file_exist",
    "check_prerequisites",
    "check_time",
    "concat_list",
    "config",
    "copy_if_symlink_fails",
    "copyfile",
    "copyfile_from_local",
    "copyfile_to_local",
    "copytree",
    "copytree_from_local",
    "copytree_to_local",
    "count_registered_modules",
    "dataset",
    "deprecated_api_warning",
    "deprecated_function",
    "device",
    "dict_from_file",
    "digit_version",
    "dist",
    "dump",
    "evaluator",
    "exists",
    "fileio",
    "fopen",
    "generate_presigned_url",
    "get",
    "get_file_backend",
    "get_git_hash",
    "get_installed_path",
    "get_local_path",
    "get_object_from_string",
    "get_text",
    "has_method",
    "hooks",
    "hub",
    "import_modules_from_strings",
    "infer",
    "init_default_scope",
    "install_package",
    "is_abs",
    "is_filepath",
    "is_installed",
    "is_list_of",
    "is_method_overridden",
    "is_seq_of",
    "is_str",
    "is_tuple_of",
    "isdir",
    "isfile",
    "iter_cast",
    "join_path",
    "list_cast",
    "list_dir_or_file",
    "list_from_file",
    "load",
    "logging",
    "mkdir_or_exist",
    "model",
    "optim",
    "print_log",
    "put",
    "put_text",
    "read_base",
    "register_backend",
    "register_handler",
    "registry",
    "remove",
    "requires_executable",
    "requires_package",
    "rmtree",
    "runner",
    "scandir",
    "slice_list",
    "structures",
    "symlink",
    "testing",
    "to_1tuple",
    "to_2tuple",
    "to_3tuple",
    "to_4tuple",
    "to_ntuple",
    "track_iter_progress",
    "track_parallel_progress",
    "track_progress",
    "track_progress_rich",
    "traverse_registry_tree",
    "tuple_cast",
    "utils",
    "version",
    "version_info",
    "visualization",
]


@pytest.mark.parametrize("name", MMENGINE_TOP_LEVEL)
def test_every_top_level_name_of_mmengine_resolves(name):
    assert getattr(mmengine, name) is not None


def test_names_are_treadle_objects():
    import treadle.config
    import treadle.dist
    import treadle.fileio
    import treadle.visual
    from treadle.runner import registry

    assert mmengine.Config is treadle.config.Config
    assert mmengine.MODELS is registry.MODELS
    assert mmengine.get is treadle.fileio.get
    assert mmengine.dist is treadle.dist
    assert mmengine.visualization is treadle.visual
    assert mmengine.fileio is treadle.fileio
    assert mmengine.version is mmengine
    from treadle.runner.mmengine_names import fileio, runner

    assert fileio is treadle.fileio and runner.__name__ == "treadle.runner"


def test_version_is_the_mmengine_api_level():
    assert mmengine.__version__ == "0.10.7" and mmengine.version_info == (0, 10, 7)
    assert mmengine.version.__version__ == "0.10.7"
    assert mmengine.digit_version(mmengine.__version__) >= mmengine.digit_version("0.7.1")
    assert mmengine.treadle_version == importlib.import_module("treadle.runner").__version__


def test_all_and_dir_list_the_names():
    assert set(MMENGINE_TOP_LEVEL) <= set(mmengine.__all__)
    assert set(MMENGINE_TOP_LEVEL) <= set(dir(mmengine))


def test_unknown_name_says_where_names_come_from():
    with pytest.raises(AttributeError) as info:
        mmengine.NoSuchName  # noqa: B018
    message = str(info.value)
    assert message.startswith("treadle.runner.mmengine_names has no 'NoSuchName': MMEngine's")
    assert "treadle.config, treadle.fileio, treadle.logging" in message
    assert "visualization" in message
    with pytest.raises(ImportError, match="cannot import name 'NoSuchName'"):
        exec("from treadle.runner.mmengine_names import NoSuchName", {})


def test_import_loads_no_torch_and_no_submodule():
    code = (
        "import sys, treadle.runner.mmengine_names; "
        "print(sorted({'torch', 'treadle.visual', 'treadle.dist'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_submodules_agree_with_the_porting_map():
    from_map = {
        name.split(".", 1)[1]: target
        for name, target in MODULE_MAP.items()
        if name.count(".") == 1 and not name.startswith("mmengine._")
    }
    assert {**from_map, "version": mmengine.__name__} == mmengine.SUBMODULES


def test_every_module_map_target_imports():
    for target in {*MODULE_MAP.values(), *NAME_MOVES.values()}:
        importlib.import_module(target)
    for (_, name), home in NAME_MOVES.items():
        assert hasattr(importlib.import_module(home), name)


# -- mmengine.utils names in treadle.runner.utils ------------------------------------------


def test_manager_classes_resolve_from_utils():
    from treadle.logging import ManagerMeta, ManagerMixin

    assert utils.ManagerMixin is ManagerMixin and utils.ManagerMeta is ManagerMeta
    from treadle.runner.utils import digit_version, is_installed  # noqa: F401


def test_call_command_runs_and_fails_with_the_command(tmp_path):
    marker = tmp_path / "ran"
    utils.call_command([sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"])
    assert marker.exists()
    with pytest.raises(subprocess.CalledProcessError) as info:
        utils.call_command([sys.executable, "-c", "raise SystemExit(3)"])
    assert info.value.returncode == 3 and "returned non-zero exit status 3" in str(info.value)
    with pytest.raises(
        TypeError, match=r"call_command takes a list of arguments, got str: 'ls -l'"
    ):
        utils.call_command("ls -l")


def test_install_package_skips_what_is_installed(monkeypatch):
    calls = []
    monkeypatch.setattr("treadle.runner.utils.package_install.call_command", calls.append)
    utils.install_package("pip")
    assert calls == []
    utils.install_package("surely-not-installed-pkg")
    assert calls == [[sys.executable, "-m", "pip", "install", "surely-not-installed-pkg"]]
    with pytest.raises(TypeError, match="install_package takes a package name, got ''"):
        utils.install_package("")


# -- dl_utils ------------------------------------------------------------------------------


def test_norm_layers():
    assert dl_utils.is_norm(nn.BatchNorm2d(2)) and dl_utils.is_norm(nn.GroupNorm(1, 2))
    assert dl_utils.is_norm(nn.LayerNorm(2)) and dl_utils.is_norm(nn.InstanceNorm2d(2))
    assert not dl_utils.is_norm(nn.Conv2d(2, 2, 1))
    assert not dl_utils.is_norm(nn.BatchNorm2d(2), exclude=nn.BatchNorm2d)
    assert not dl_utils.is_norm(nn.LayerNorm(2), exclude=(nn.GroupNorm, nn.LayerNorm))
    with pytest.raises(TypeError, match="exclude must be a class or a tuple of classes, got"):
        dl_utils.is_norm(nn.LayerNorm(2), exclude="LayerNorm")
    assert dl_utils.has_batch_norm(nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)))
    assert not dl_utils.has_batch_norm(nn.Sequential(nn.Linear(2, 2), nn.LayerNorm(2)))


def test_small_torch_helpers():
    assert torch.__version__ == dl_utils.TORCH_VERSION
    assert dl_utils.is_jit_tracing() is False
    xs, ys = dl_utils.torch_meshgrid(torch.arange(2), torch.arange(3))
    assert xs.shape == (2, 3) and xs[1, 0] == 1 and ys[0, 2] == 2
    assert dl_utils.mmcv_full_available() in (True, False)


def test_tensor2imgs_undoes_normalization():
    images = torch.arange(2 * 3 * 2 * 2, dtype=torch.float32).reshape(2, 3, 2, 2)
    out = dl_utils.tensor2imgs(images, mean=(1, 2, 3), std=(2, 2, 2))
    assert len(out) == 2 and out[0].shape == (2, 2, 3) and out[0].dtype == np.float32
    # BGR: the last channel of the output is the first of the input.
    assert out[0][0, 0, 2] == images[0, 0, 0, 0] * 2 + 1
    assert out[0][0, 0, 0] == images[0, 2, 0, 0] * 2 + 3
    rgb = dl_utils.tensor2imgs(images, to_bgr=False)
    assert rgb[1][1, 1, 0] == images[1, 0, 1, 1]
    gray = dl_utils.tensor2imgs(torch.ones(1, 1, 2, 2), to_bgr=False)
    assert gray[0].shape == (2, 2, 1)


def test_tensor2imgs_errors():
    with pytest.raises(ValueError, match=r"tensor2imgs takes a tensor of shape \(N, C, H, W\)"):
        dl_utils.tensor2imgs(torch.ones(3, 2, 2))
    with pytest.raises(ValueError, match=r"got Tensor of shape \(1, 2, 2, 2\)"):
        dl_utils.tensor2imgs(torch.ones(1, 2, 2, 2))
    with pytest.raises(ValueError, match=r"mean and std need one value per channel \(3\)"):
        dl_utils.tensor2imgs(torch.ones(1, 3, 2, 2), mean=(0, 0))
    with pytest.raises(ValueError, match="to_bgr=True needs 3 channels"):
        dl_utils.tensor2imgs(torch.ones(1, 1, 2, 2))


def test_time_counter_logs_the_mean_as_mmengine_counts(monkeypatch):
    messages = []
    monkeypatch.setattr(dl_utils, "print_log", lambda msg, logger=None: messages.append(msg))
    monkeypatch.setattr(dl_utils.TimeCounter, "instance_dict", {})

    @dl_utils.TimeCounter(log_interval=2, warmup_interval=2, with_sync=False)
    def work(x):
        return x + 1

    assert [work(i) for i in range(5)] == [1, 2, 3, 4, 5]
    # MMEngine's arithmetic: runs from the second on are counted; lines at runs 2 and 4 name
    # the runs so far. A function is named by its __name__.
    assert len(messages) == 2
    assert messages[0].startswith("[work]-time per run averaged in the past 2 runs: ")
    assert "past 4 runs" in messages[1] and messages[1].endswith(" ms")
    with dl_utils.TimeCounter(tag="block"):  # warmup_interval=1: the first run counts
        pass
    assert messages[-1].startswith("[block]-time per run averaged in the past 1 runs: ")


def test_time_counters_are_shared_by_tag(monkeypatch):
    messages = []
    monkeypatch.setattr(dl_utils, "print_log", lambda msg, logger=None: messages.append(msg))
    monkeypatch.setattr(dl_utils.TimeCounter, "instance_dict", {})
    for _ in range(4):
        # A new call in a loop is the same counter: its runs add up, as in MMEngine.
        with dl_utils.TimeCounter(log_interval=2, with_sync=False, tag="loop"):
            pass
    assert [m.split(":")[0] for m in messages] == [
        "[loop]-time per run averaged in the past 2 runs",
        "[loop]-time per run averaged in the past 4 runs",
    ]
    assert dl_utils.TimeCounter(tag="loop").count == 4


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"log_interval": 0},
            "TimeCounter's log_interval must be greater than 0 (an int >= 1), got 0",
        ),
        (
            {"warmup_interval": 0},
            "TimeCounter's warmup_interval must be greater than 0 (an int >= 1), got 0",
        ),
        (
            {"log_interval": 1.5},
            "TimeCounter's log_interval must be greater than 0 (an int >= 1), got 1.5",
        ),
    ],
)
def test_time_counter_arguments(kwargs, message):
    # ValueErrors that are also the AssertionError MMEngine raises.
    with pytest.raises(AssertionError, match=re.escape(message)):
        dl_utils.TimeCounter(**kwargs)
    with pytest.raises(ValueError):
        dl_utils.TimeCounter(**kwargs)


def test_a_time_counter_block_needs_a_tag(monkeypatch):
    monkeypatch.setattr(dl_utils.TimeCounter, "instance_dict", {})
    counter = dl_utils.TimeCounter()
    with pytest.raises(AssertionError, match="please specify the tag parameter, TimeCounter"):
        counter.__enter__()


def test_load_url_reads_a_file_url(tmp_path):
    path = tmp_path / "weights-0123abcd.pth"
    torch.save({"w": torch.ones(2)}, path)
    state = dl_utils.load_url(path.as_uri(), model_dir=str(tmp_path / "cache"))
    assert torch.equal(state["w"], torch.ones(2))
