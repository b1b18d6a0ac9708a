"""treadle.runner.infer.BaseInferencer end to end with ToyZooInferencer (tests/support/
treadle_toy_zoo): models from config files, a package's metafile and Runner checkpoints."""

import copy
from typing import ClassVar

import pytest
import torch
from runner_toy_model import unique_name
from treadle_toy_zoo.inferencer import ToyZooInferencer
from treadle_toy_zoo.weights import zoo_state_dict

from treadle.config import Config
from treadle.registry import init_default_scope
from treadle.runner.checkpoint import save_checkpoint
from treadle.runner.hub import get_config
from treadle.runner.hub.metafile import find_index_root
from treadle.runner.infer import BaseInferencer
from treadle.runner.runner import Runner
from treadle.runner.structures import BaseDataElement
from treadle.visual import Visualizer

LINEAR = "treadle_toy_zoo::toy/toy-linear_4xb3_2e.py"
SAMPLES = [[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]]


def _quiet(*args, **kwargs):
    return ToyZooInferencer(*args, show_progress=False, **kwargs)


def _expected(state, samples=SAMPLES, hidden=False):
    inputs = torch.tensor(samples)
    if hidden:
        hidden_out = torch.relu(inputs @ state["head.0.weight"].T + state["head.0.bias"])
        scores = hidden_out @ state["head.2.weight"].T + state["head.2.bias"]
    else:
        scores = inputs @ state["head.weight"].T + state["head.bias"]
    return scores.softmax(1)


def _scores(result):
    return torch.tensor([p["pred_score"] for p in result["predictions"]])


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A Runner run of the toy zoo's linear config: its checkpoint and its trained weights."""
    work_dir = tmp_path_factory.mktemp("infer_run")
    cfg = get_config(LINEAR)
    # Only the inferencer reads it; the Runner wants a whole test stage or none.
    del cfg["test_dataloader"]
    cfg.work_dir = str(work_dir)
    cfg.experiment_name = unique_name("infer")
    runner = Runner.from_cfg(cfg)
    runner.train()
    state = {k: v.detach().clone() for k, v in runner.model.state_dict().items()}
    return str(work_dir / "epoch_2.pth"), state


def test_model_from_a_runner_checkpoint_alone(trained):
    checkpoint, state = trained
    inferencer = _quiet(weights=checkpoint)
    assert inferencer.scope == "treadle_toy_zoo"  # from the config's default_scope
    assert inferencer.cfg.model.type == "ToyZooClassifier"
    assert not inferencer.model.training
    torch.testing.assert_close(_scores(inferencer(SAMPLES)), _expected(state))


def test_model_from_a_config_file_and_a_checkpoint(trained):
    checkpoint, state = trained
    path = find_index_root("treadle_toy_zoo") + "/configs/toy/toy-linear_4xb3_2e.py"
    inferencer = _quiet(path, weights=checkpoint, scope="treadle_toy_zoo", device="cpu")
    torch.testing.assert_close(_scores(inferencer(SAMPLES, batch_size=2)), _expected(state))
    # A Config or a dict works the same.
    inferencer = _quiet(Config.fromfile(path), weights=checkpoint, scope="treadle_toy_zoo")
    torch.testing.assert_close(_scores(inferencer(SAMPLES)), _expected(state))
    inferencer = _quiet(
        Config.fromfile(path).to_dict(), weights=checkpoint, scope="treadle_toy_zoo"
    )
    torch.testing.assert_close(_scores(inferencer(SAMPLES)), _expected(state))


def test_checkpoint_with_the_config_in_the_message_hub(tmp_path):
    # MMEngine's runners keep the config text in message_hub.runtime_info.cfg.
    cfg_text = get_config(LINEAR).pretty_text
    state = zoo_state_dict("toy-linear")
    path = tmp_path / "mmengine_style.pth"
    save_checkpoint(
        {"state_dict": state, "meta": {}, "message_hub": {"runtime_info": {"cfg": cfg_text}}},
        str(path),
    )
    inferencer = _quiet(weights=str(path))
    torch.testing.assert_close(_scores(inferencer(SAMPLES)), _expected(state))


def test_checkpoint_without_config_is_refused(tmp_path):
    path = tmp_path / "bare.pth"
    save_checkpoint({"state_dict": zoo_state_dict("toy-linear")}, str(path))
    with pytest.raises(ValueError, match=r"holds no config .*pass the config as model="):
        _quiet(weights=str(path))


@pytest.mark.parametrize(
    "model", ["treadle_toy_zoo::toy-linear", "treadle_toy_zoo::TOY-LINEAR_4xb3_2e", LINEAR]
)
def test_model_from_the_package_metafile_with_its_weights(model):
    inferencer = _quiet(model)
    assert inferencer.scope == "treadle_toy_zoo"
    torch.testing.assert_close(
        _scores(inferencer(SAMPLES)), _expected(zoo_state_dict("toy-linear"))
    )


def test_model_name_in_the_default_scope_and_given_scope():
    inferencer = _quiet("toy-mlp", scope="treadle_toy_zoo")
    expected = _expected(zoo_state_dict("toy-mlp"), hidden=True)
    torch.testing.assert_close(_scores(inferencer(SAMPLES)), expected)
    assert "pretrained" not in inferencer.cfg.model  # never loaded: the weights are given
    init_default_scope("treadle_toy_zoo")
    torch.testing.assert_close(_scores(_quiet("toy-mlp")(SAMPLES)), expected)


def test_scope_is_the_given_one_else_the_package_else_the_default():
    init_default_scope("treadle")
    assert _quiet("treadle_toy_zoo::toy-linear").scope == "treadle_toy_zoo"
    given = _quiet("treadle_toy_zoo::toy-linear", scope="treadle_toy_zoo")
    assert given.scope == "treadle_toy_zoo"
    cfg = get_config(LINEAR)
    cfg.model.type = "treadle_toy_zoo.ToyZooClassifier"  # found from the scope 'treadle'
    del cfg["test_dataloader"]
    assert _quiet(cfg, weights="toyzoo://toy-linear").scope == "treadle"


def test_given_weights_win_over_the_metafile(tmp_path):
    state = {k: v + 1 for k, v in zoo_state_dict("toy-linear").items()}
    path = tmp_path / "mine.pth"
    save_checkpoint({"state_dict": state}, str(path))
    inferencer = _quiet("treadle_toy_zoo::toy-linear", weights=str(path))
    torch.testing.assert_close(_scores(inferencer(SAMPLES)), _expected(state))


def test_no_weights_warns_about_a_random_model():
    with pytest.warns(UserWarning, match="randomly initialized model"):
        _quiet("treadle_toy_zoo::toy-linear-noweights")


def test_batches_and_their_sizes():
    inferencer = _quiet("treadle_toy_zoo::toy-linear")
    sizes = []
    original = inferencer.forward

    def forward(data, **kwargs):
        sizes.append(len(data["inputs"]))
        return original(data, **kwargs)

    inferencer.forward = forward
    samples = SAMPLES + SAMPLES[:2]
    result = inferencer(samples, batch_size=2)
    assert sizes == [2, 2, 1]
    torch.testing.assert_close(_scores(result), _expected(zoo_state_dict("toy-linear"), samples))


@pytest.mark.parametrize("batch_size", [0, -1, 1.5, True])
def test_batch_size_must_be_a_positive_int(batch_size):
    inferencer = _quiet("treadle_toy_zoo::toy-linear")
    with pytest.raises(ValueError, match="batch_size must be an int >= 1"):
        inferencer(SAMPLES, batch_size=batch_size)


def test_keywords_go_to_their_stage():
    inferencer = _quiet("treadle_toy_zoo::toy-linear")
    state = zoo_state_dict("toy-linear")
    result = inferencer(SAMPLES, scale=2.0, draw_scores=True, with_scores=False)
    doubled = _expected(state, [[2 * x for x in s] for s in SAMPLES])
    assert [p["pred_label"] for p in result["predictions"]] == doubled.argmax(1).tolist()
    assert "pred_score" not in result["predictions"][0]
    assert [v.shape for v in result["visualization"]] == [(1, 3)] * 3
    assert inferencer._dispatch_kwargs(scale=1, show=True, with_scores=False) == (
        {"scale": 1},
        {},
        {"show": True},
        {"with_scores": False},
    )


def test_unknown_keyword_names_the_known_ones():
    inferencer = _quiet("treadle_toy_zoo::toy-linear")
    with pytest.raises(ValueError, match=r"unknown argument 'sacle' \(did you mean 'scale'\?\)"):
        inferencer(SAMPLES, sacle=2.0)
    with pytest.raises(ValueError, match="'draw_scores', 'scale', 'show', 'with_scores'"):
        inferencer(SAMPLES, bogus=1)


def test_return_datasamples_and_the_collate_from_the_config():
    inferencer = _quiet(LINEAR)
    # One tensor is one input (a list would be a list of inputs).
    result = inferencer(torch.tensor(SAMPLES[0]), return_datasamples=True)
    (pred,) = result["predictions"]
    assert isinstance(pred, BaseDataElement)
    # toy_zoo_collate (registered in the package's FUNCTIONS) with the config's tag.
    assert pred.tag == "from-config"


def test_inputs_from_a_folder_sorted(tmp_path):
    for name, values in (("b.txt", SAMPLES[1]), ("a.txt", SAMPLES[0]), ("c.txt", SAMPLES[2])):
        (tmp_path / name).write_text(",".join(map(str, values)))
    inferencer = _quiet("treadle_toy_zoo::toy-linear")
    assert inferencer._inputs_to_list(str(tmp_path)) == [
        str(tmp_path / n) for n in ("a.txt", "b.txt", "c.txt")
    ]
    torch.testing.assert_close(
        _scores(inferencer(str(tmp_path))), _expected(zoo_state_dict("toy-linear"))
    )
    assert inferencer._inputs_to_list(str(tmp_path / "a.txt")) == [str(tmp_path / "a.txt")]
    assert inferencer._inputs_to_list((1, 2)) == [1, 2]
    assert inferencer._inputs_to_list("zzz://not-a-backend") == ["zzz://not-a-backend"]


@pytest.mark.parametrize(
    ("collate_fn", "expected"),
    [
        ("toy_zoo_collate", "toy"),
        (dict(type="toy_zoo_collate", tag="x"), "x"),
        (dict(type="pseudo_collate"), None),
    ],
)
def test_collate_fn_names_in_the_scope(collate_fn, expected):
    cfg = get_config(LINEAR)
    cfg.test_dataloader = dict(collate_fn=collate_fn)
    inferencer = _quiet(cfg, weights="toyzoo://toy-linear", scope="treadle_toy_zoo")
    (pred,) = inferencer(SAMPLES[:1], return_datasamples=True)["predictions"]
    assert pred.get("tag") == expected


def test_unknown_collate_fn_names_the_key():
    cfg = get_config(LINEAR)
    cfg.test_dataloader = dict(collate_fn="toy_zoo_colate")
    weights = "toyzoo://toy-linear"
    with pytest.raises(KeyError, match=r"test_dataloader\.collate_fn: toy_zoo_colate is not in"):
        _quiet(cfg, weights=weights, scope="treadle_toy_zoo")
    cfg.test_dataloader = dict(collate_fn=dict(size=3))
    with pytest.raises(TypeError, match=r"test_dataloader\.collate_fn must be"):
        _quiet(cfg, weights=weights, scope="treadle_toy_zoo")


def test_visualizer_from_the_config_gets_a_fresh_name():
    first = _quiet("treadle_toy_zoo::toy-mlp")
    second = _quiet("treadle_toy_zoo::toy-mlp")
    assert isinstance(first.visualizer, Visualizer)
    # The config's name, or with a time stamp when a visualizer has it already.
    assert first.visualizer.instance_name.startswith("toy-zoo-vis")
    assert second.visualizer.instance_name.startswith("toy-zoo-vis-")
    assert second.visualizer is not first.visualizer
    assert Visualizer.check_instance_created(second.cfg.visualizer.name)
    assert _quiet("treadle_toy_zoo::toy-linear").visualizer is None


def test_progress_bar_runs(capsys):
    inferencer = ToyZooInferencer("treadle_toy_zoo::toy-linear")
    assert inferencer.show_progress
    assert len(inferencer(SAMPLES)["predictions"]) == 3


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (dict(), ValueError, "model=None: then weights must be given"),
        (dict(model=3), TypeError, "model must be a config file path.*got int"),
        (dict(model="toy-linear"), ValueError, "pass scope='<package>'.*'<package>::toy-linear'"),
        (
            dict(model="configs/missing.py"),
            FileNotFoundError,
            "'configs/missing.py' does not exist",
        ),
        (
            dict(model="toy-liner", scope="treadle_toy_zoo"),
            ValueError,
            "no model called 'toy-liner' in the metafiles of 'treadle_toy_zoo'.*'toy-linear'",
        ),
        (
            dict(model="no_such_zoo_pkg::m"),
            ModuleNotFoundError,
            "'no_such_zoo_pkg' is not installed",
        ),
        (
            dict(model="treadle_toy_zoo::toy-linear", device="gpu"),
            ValueError,
            "unknown device 'gpu'",
        ),
    ],
)
def test_errors_name_what_was_written(kwargs, error, message):
    with pytest.raises(error, match=message):
        _quiet(**kwargs)


def test_config_without_model_is_refused():
    with pytest.raises(KeyError, match="has no 'model' key"):
        _quiet(dict(train_cfg=dict()), weights=None)


def test_list_models():
    assert ToyZooInferencer.list_models("treadle_toy_zoo") == [
        "toy-linear_4xb3_2e",
        "toy-linear",
        "toy-mlp_4xb3_2e",
        "toy-mlp",
        "toy-linear-noweights",
    ]
    assert BaseInferencer.list_models("treadle_toy_zoo", patterns="toy-mlp") == [
        "toy-mlp_4xb3_2e",
        "toy-mlp",
    ]
    with pytest.raises(ValueError, match="there is no default scope"):
        BaseInferencer.list_models()
    init_default_scope("treadle_toy_zoo")
    assert BaseInferencer.list_models(patterns=r".*noweights") == ["toy-linear-noweights"]


def test_metafile_helpers_keep_mmengines_names():
    root = BaseInferencer._get_repo_or_mim_dir("treadle_toy_zoo")
    assert root.endswith(".mim")
    names = [m["Name"] for m in BaseInferencer._get_models_from_metafile(root)]
    assert names == ["toy-linear_4xb3_2e", "toy-mlp_4xb3_2e", "toy-linear-noweights"]
    inferencer = _quiet("treadle_toy_zoo::toy-linear")
    cfg, weights = inferencer._load_model_from_metafile("toy-mlp")
    assert (cfg.model.hidden, weights) == (8, "toyzoo://toy-mlp")
    assert [list(c) for c in inferencer._get_chunk_data(range(5), 2)] == [[0, 1], [2, 3], [4]]


def test_inferencer_meta_checks_the_keyword_sets():
    with pytest.raises(TypeError, match="the keyword 'show' is in both forward_kwargs and "):

        class Twice(ToyZooInferencer):
            forward_kwargs: ClassVar[set[str]] = {"show"}

    with pytest.raises(TypeError, match=r"Listed\.preprocess_kwargs must be a set"):

        class Listed(ToyZooInferencer):
            preprocess_kwargs: ClassVar = ["scale"]

    class Fine(ToyZooInferencer):
        forward_kwargs = frozenset({"extra"})

    assert Fine.forward_kwargs == {"extra"}


def test_abstract_stages_must_be_given():
    class Half(BaseInferencer):
        def _init_pipeline(self, cfg):
            return lambda x: x

    with pytest.raises(TypeError, match="abstract"):
        Half(copy.deepcopy(get_config(LINEAR)))
