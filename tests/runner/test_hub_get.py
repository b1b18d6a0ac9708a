"""treadle.runner.hub: get_config and get_model on the toy package tests/support/treadle_toy_zoo
(its metafile's weights come from the toyzoo:// scheme, never downloaded)."""

import pytest
import torch
from treadle_toy_zoo.models import ToyZooClassifier
from treadle_toy_zoo.utils import REGISTERED
from treadle_toy_zoo.weights import zoo_state_dict

from treadle.config import ConfigFileNotFoundError
from treadle.registry import DefaultScope
from treadle.runner.checkpoint import save_checkpoint
from treadle.runner.hub import get_config, get_model
from treadle.runner.hub.metafile import find_index_root, split_package_path

LINEAR = "treadle_toy_zoo::toy/toy-linear_4xb3_2e.py"
MLP = "treadle_toy_zoo::toy/toy-mlp_4xb3_2e.py"


def test_get_config_reads_the_metafile_config():
    cfg = get_config(LINEAR)
    assert cfg.model == dict(type="ToyZooClassifier", in_features=4, num_classes=3)
    assert cfg.test_dataloader.collate_fn.tag == "from-config"
    assert "model_path" not in cfg


def test_get_config_pretrained_sets_model_path_first_of_a_list():
    assert get_config(LINEAR, pretrained=True).model_path == "toyzoo://toy-linear"
    assert get_config(MLP, pretrained=True).model_path == "toyzoo://toy-mlp"


def test_get_config_of_a_base_config_without_metafile_entry():
    cfg = get_config("treadle_toy_zoo::_base_/toy_model.py")
    assert cfg.model.type == "ToyZooClassifier"


def test_get_config_pretrained_without_weights_says_so():
    with pytest.raises(ValueError, match=r"no metafile entry .* lists weights"):
        get_config("treadle_toy_zoo::toy/toy-linear-noweights.py", pretrained=True)
    with pytest.raises(ValueError, match="lists weights"):
        get_config("treadle_toy_zoo::_base_/toy_model.py", pretrained=True)


def test_get_model_builds_in_the_package_scope_with_pretrained_weights():
    model = get_model(MLP, pretrained=True)
    assert isinstance(model, ToyZooClassifier)
    expected = zoo_state_dict("toy-mlp")
    for key, value in model.state_dict().items():
        assert torch.equal(value, expected[key]), key
    assert model.is_init  # a Runner will not re-initialize the loaded weights
    # register_all_modules was called without making the scope process-wide.
    assert REGISTERED[-1] is False
    assert DefaultScope.get_current_instance() is None
    # The config's top-level data_preprocessor went into the model.
    assert type(model.data_preprocessor).__name__ == "BaseDataPreprocessor"


def test_get_model_without_pretrained_passes_default_args():
    model = get_model(LINEAR, num_classes=5)
    assert model.head.out_features == 3  # the config's value wins over a default argument
    model = get_model("treadle_toy_zoo::_base_/toy_model.py", hidden=6)
    assert model.head[0].out_features == 6
    assert not model.is_init


def test_get_model_loads_weights_from_a_local_checkpoint(tmp_path, monkeypatch):
    # A metafile may list a local file: it goes through CheckpointLoader like any path.
    weights = {"head.weight": torch.full((3, 4), 0.5), "head.bias": torch.zeros(3)}
    path = tmp_path / "local.pth"
    save_checkpoint({"state_dict": weights}, str(path))
    import treadle.runner.hub.hub as hub

    original = hub.config_and_weights
    monkeypatch.setattr(hub, "config_and_weights", lambda p: (original(p)[0], str(path)))
    model = get_model(LINEAR, pretrained=True)
    assert torch.equal(model.head.weight, weights["head.weight"])


@pytest.mark.parametrize("path", ["treadle_toy_zoo", "::toy/x.py", "treadle_toy_zoo::", "a::b::c"])
def test_malformed_package_paths_are_named(path):
    with pytest.raises(ValueError, match="is not a package path"):
        split_package_path(path)
    with pytest.raises(ValueError, match="is not a package path"):
        get_config(path)


def test_missing_package_and_missing_config_are_named():
    with pytest.raises(ModuleNotFoundError, match=r"'no_such_zoo_pkg' is not installed.*never"):
        get_config("no_such_zoo_pkg::a/b.py")
    with pytest.raises(ConfigFileNotFoundError, match="no such config in package"):
        get_config("treadle_toy_zoo::toy/missing.py")


def test_a_module_is_not_a_package():
    with pytest.raises(ValueError, match="'runner_toys' is a module, not a package"):
        find_index_root("runner_toys")


def _package(tmp_path, monkeypatch, name, files):
    for relative, text in files.items():
        path = tmp_path / name / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path / name


def test_a_package_without_model_index_still_serves_its_configs(tmp_path, monkeypatch):
    folder = _package(
        tmp_path,
        monkeypatch,
        "hub_plain_pkg",
        {
            "__init__.py": "",
            "configs/a/b.py": "model = dict(type='torch.nn.Linear', in_features=1, "
            "out_features=2)\n",
        },
    )
    assert get_config("hub_plain_pkg::a/b.py").model.out_features == 2
    with pytest.raises(
        FileNotFoundError, match=r"'hub_plain_pkg' has no model-index.yml \(looked in"
    ):
        find_index_root("hub_plain_pkg")
    assert find_index_root("hub_plain_pkg", required=False) is None
    assert folder.is_dir()
    assert get_model("hub_plain_pkg::a/b.py").out_features == 2


def test_a_source_checkout_keeps_its_index_and_configs_beside_the_package(tmp_path, monkeypatch):
    checkout = _package(
        tmp_path,
        monkeypatch,
        "checkout",
        {
            "hub_checkout_pkg/__init__.py": "",
            "model-index.yml": "Import: [configs/a/metafile.yml]\n",
            "configs/a/metafile.yml": "Models:\n  - Name: b\n    Config: configs/a/b.py\n"
            "    Weights: /weights/b.pth\n",
            "configs/a/b.py": "_base_ = ['../_base_/m.py']\n",
            "configs/_base_/m.py": "model = dict(type='torch.nn.Linear', in_features=1, "
            "out_features=3)\n",
        },
    )
    monkeypatch.syspath_prepend(str(checkout))
    assert find_index_root("hub_checkout_pkg") == str(checkout)
    cfg = get_config("hub_checkout_pkg::a/b.py", pretrained=True)
    assert (cfg.model.out_features, cfg.model_path) == (3, "/weights/b.pth")
    assert get_config("hub_checkout_pkg::_base_/m.py").model.out_features == 3


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"model-index.yml": "Models: []\n"}, "expected an 'Import' list"),
        (
            {"model-index.yml": "Import: [configs/meta.yml]\n"},
            "imports 'configs/meta.yml', which does not exist",
        ),
        (
            {
                "model-index.yml": "Import: [configs/meta.yml]\n",
                "configs/meta.yml": "Models:\n  - Config: configs/a.py\n",
            },
            "every entry of 'Models' needs a 'Name'",
        ),
    ],
)
def test_broken_metafiles_are_named(tmp_path, monkeypatch, files, message):
    name = f"hub_broken_{abs(hash(message)) % 10_000}"
    _package(
        tmp_path,
        monkeypatch,
        name,
        {
            "__init__.py": "",
            **{f".mim/{k}": v for k, v in files.items()},
            ".mim/configs/a.py": "model = dict(type='Linear')\n",
        },
    )
    with pytest.raises((ValueError, FileNotFoundError), match=message):
        get_config(f"{name}::a.py")


def test_a_config_without_model_cannot_be_built():
    with pytest.raises(KeyError, match="has no 'model' key"):
        get_model("treadle_toy_zoo::_base_/toy_schedule.py")
