"""TensorboardVisBackend against the real TensorBoard: event files read back with its reader."""

from __future__ import annotations

import sys

import numpy as np
import pytest

pytest.importorskip("tensorboard")
pytest.importorskip("torch.utils.tensorboard")
event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")

from treadle.visual.backends.tensorboard_backend import TensorboardVisBackend  # noqa: E402


@pytest.fixture(autouse=True)
def _private_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)


def read_events(log_dir):
    reader = event_accumulator.EventAccumulator(
        str(log_dir), size_guidance={"scalars": 0, "images": 0, "tensors": 0}
    )
    reader.Reload()
    return reader


def scalar_points(reader, tag):
    return [(event.step, pytest.approx(event.value)) for event in reader.Scalars(tag)]


class DuckConfig:
    """What add_config reads from a treadle or MMEngine Config: pretty_text and to_dict."""

    pretty_text = "lr = 0.01\nmodel = dict(type='ResNet', depth=18)\n"

    def to_dict(self):
        return {"lr": 0.01, "model": {"type": "ResNet", "depth": 18}}


def test_scalars_config_and_image_are_read_back_by_tensorboard(tmp_path):
    import torch

    backend = TensorboardVisBackend(save_dir=str(tmp_path / "vis_data"))
    for step in (1, 2, 3):
        backend.add_scalars({"loss": 1.0 / step, "acc": np.float32(step / 10)}, step=step)
    backend.add_scalar("lr", torch.tensor(0.5), step=7)
    backend.add_config(DuckConfig())
    image = np.zeros((20, 30, 3), dtype=np.uint8)
    image[:, :, 0] = 255
    backend.add_image("pred", image, step=5)
    backend.close()

    reader = read_events(tmp_path / "vis_data")
    assert scalar_points(reader, "loss") == [(1, 1.0), (2, 0.5), (3, 1 / 3)]
    assert scalar_points(reader, "acc") == [(1, 0.1), (2, 0.2), (3, 0.3)]
    assert scalar_points(reader, "lr") == [(7, 0.5)]
    (text,) = reader.Tensors("config/text_summary")
    assert text.tensor_proto.string_val[0].decode() == DuckConfig.pretty_text
    (picture,) = reader.Images("pred")
    assert (picture.step, picture.width, picture.height) == (5, 30, 20)


def test_a_plain_dict_config_is_recorded_as_text(tmp_path):
    backend = TensorboardVisBackend(save_dir=str(tmp_path))
    backend.add_config({"lr": 0.1, "optim": {"type": "SGD"}})
    backend.close()
    (text,) = read_events(tmp_path).Tensors("config/text_summary")
    assert text.tensor_proto.string_val[0].decode() == "{'lr': 0.1, 'optim': {'type': 'SGD'}}"


def test_nothing_is_imported_or_written_before_the_first_add(tmp_path, monkeypatch):
    # With tensorboard unimportable, building the backend still works: it imports nothing.
    # torch.utils.tensorboard fails to import exactly when the tensorboard package is missing.
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    monkeypatch.delitem(sys.modules, "torch.utils.tensorboard", raising=False)
    backend = TensorboardVisBackend(save_dir=str(tmp_path / "vis_data"))
    assert not (tmp_path / "vis_data").exists()
    with pytest.raises(
        ImportError,
        match=r"TensorboardVisBackend needs the 'tensorboard' library.*"
        r"pip install treadle-visual\[tensorboard\]",
    ):
        backend.add_scalar("loss", 1.0)
    assert not (tmp_path / "vis_data").exists()
    backend.close()  # never opened: nothing to do


def test_torch_writer_missing_also_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)
    backend = TensorboardVisBackend(save_dir=str(tmp_path))
    with pytest.raises(ImportError, match=r"pip install treadle-visual\[tensorboard\]"):
        backend.add_image("pred", np.zeros((2, 2, 3), dtype=np.uint8))


def test_first_add_creates_the_directory_and_experiment_is_the_writer(tmp_path):
    from torch.utils.tensorboard import SummaryWriter

    backend = TensorboardVisBackend(save_dir=str(tmp_path / "a" / "b"))
    assert isinstance(backend.experiment, SummaryWriter)
    assert (tmp_path / "a" / "b").is_dir()
    backend.close()


def test_non_numeric_scalar_is_skipped_with_a_warning_naming_the_key(tmp_path):
    # As MMEngine: a value that is not a number is skipped with a warning, the others written.
    backend = TensorboardVisBackend(save_dir=str(tmp_path))
    backend.add_scalars({"loss": 1.0}, step=1)
    with pytest.warns(
        UserWarning,
        match=r"scalar 'acc' must be a number.*str: 'high'.*: numpy array, torch tensor, int or "
        r"float are expected, skip it \(nothing is written for it at step 2\)",
    ):
        backend.add_scalars({"loss": 0.5, "acc": "high"}, step=2)
    with pytest.warns(UserWarning, match=r"scalar 'lr' must be a number.*skip it"):
        backend.add_scalar("lr", [0.1, 0.2], step=2)
    backend.close()
    reader = read_events(tmp_path)
    assert scalar_points(reader, "loss") == [(1, 1.0), (2, 0.5)]
    assert reader.Tags()["scalars"] == ["loss"]


def test_a_step_key_is_a_scalar_alone_and_refused_under_mmengine_checks(tmp_path, monkeypatch):
    from treadle.visual.mmengine_checks import MMEngineChecks

    backend = TensorboardVisBackend(save_dir=str(tmp_path))
    backend.add_scalars({"loss": 1.0, "step": 5}, step=1)
    monkeypatch.setattr(MMEngineChecks, "enabled", True)
    with pytest.raises(
        AssertionError, match=r"'step' key: Please set it directly through the step parameter"
    ) as error:
        backend.add_scalars({"loss": 1.0, "step": 5}, step=2)
    assert isinstance(error.value, ValueError)
    backend.close()
    assert scalar_points(read_events(tmp_path), "step") == [(1, 5.0)]


def test_bad_image_is_refused_with_its_name(tmp_path):
    backend = TensorboardVisBackend(save_dir=str(tmp_path))
    with pytest.raises(
        ValueError, match=r"image 'pred' must have shape \(H, W, 3\).*channel-first"
    ):
        backend.add_image("pred", np.zeros((3, 16, 16), dtype=np.uint8))
    backend.close()


def test_close_flushes_is_idempotent_and_a_later_add_reopens(tmp_path):
    backend = TensorboardVisBackend(save_dir=str(tmp_path))
    backend.close()  # never opened
    backend.add_scalar("loss", 2.0, step=1)
    backend.close()
    assert scalar_points(read_events(tmp_path), "loss") == [(1, 2.0)]
    backend.close()  # second close: nothing left to do
    backend.add_scalar("loss", 1.0, step=2)  # a new event file in the same directory
    backend.close()
    assert scalar_points(read_events(tmp_path), "loss") == [(1, 2.0), (2, 1.0)]


def test_save_dir_is_required():
    with pytest.raises(ValueError, match="TensorboardVisBackend needs a save_dir"):
        TensorboardVisBackend(save_dir=None)


def test_numpy_and_tensor_steps_are_steps(tmp_path):
    torch = pytest.importorskip("torch")
    backend = TensorboardVisBackend(str(tmp_path / "tb"))
    backend.add_scalars({"loss": 0.5}, step=np.int64(4))
    backend.add_scalar("loss", 0.25, step=torch.tensor(5))
    with pytest.raises(TypeError, match=r"step must be an integer, got float: 2\.5"):
        backend.add_scalar("loss", 0.125, step=2.5)
    backend.close()
    assert scalar_points(read_events(tmp_path / "tb"), "loss") == [(4, 0.5), (5, 0.25)]
