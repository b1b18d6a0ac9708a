"""LocalVisBackend: MMEngine's file layout, checked by reading the files back."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

import treadle.dist
from treadle.visual.backends import LocalVisBackend
from treadle.visual.registry import VISBACKENDS
from treadle.visual.strict_checks import SuspiciousInputWarning


def read_lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def backend(tmp_path):
    backend = LocalVisBackend(save_dir=str(tmp_path / "vis_data"))
    yield backend
    backend.close()


def test_built_from_the_registry_by_name(tmp_path):
    backend = VISBACKENDS.build(dict(type="LocalVisBackend", save_dir=str(tmp_path)))
    assert isinstance(backend, LocalVisBackend)


def test_nothing_is_created_before_the_first_write(tmp_path):
    LocalVisBackend(save_dir=str(tmp_path / "vis_data"))
    assert not (tmp_path / "vis_data").exists()


def test_experiment_is_the_backend_and_creates_save_dir(backend, tmp_path):
    assert backend.experiment is backend
    assert (tmp_path / "vis_data").is_dir()


def test_scalars_are_json_lines_with_step(backend, tmp_path):
    backend.add_scalars({"loss": 0.5, "lr": np.float32(0.25), "acc": np.int64(3)}, step=10)
    backend.add_scalar("mAP", 0.75, step=11)
    backend.add_scalars({"loss": 0.4})
    backend.close()
    assert read_lines(tmp_path / "vis_data" / "scalars.json") == [
        {"loss": 0.5, "lr": 0.25, "acc": 3, "step": 10},
        {"mAP": 0.75, "step": 11},
        {"loss": 0.4, "step": 0},
    ]


def test_a_step_key_in_the_dict_wins_over_the_step_argument(backend, tmp_path):
    # MMEngine's setdefault semantics.
    scalars = {"loss": 1.0, "step": 7}
    backend.add_scalars(scalars, step=3)
    backend.close()
    assert read_lines(tmp_path / "vis_data" / "scalars.json") == [{"loss": 1.0, "step": 7}]
    assert scalars == {"loss": 1.0, "step": 7}  # the caller's dict is left as it was


def test_tensors_are_logged_as_numbers(backend, tmp_path):
    torch = pytest.importorskip("torch")
    backend.add_scalars({"loss": torch.tensor(1.5)}, step=1)
    backend.add_scalar("grad_norm", torch.tensor([2.0]), step=1)
    backend.close()
    lines = read_lines(tmp_path / "vis_data" / "scalars.json")
    assert lines == [{"loss": 1.5, "step": 1}, {"grad_norm": 2.0, "step": 1}]


def test_file_path_writes_the_line_to_an_extra_file_too(backend, tmp_path):
    backend.add_scalars({"loss": 0.5}, step=1)
    backend.add_scalars({"acc": 0.9}, step=1, file_path="val.json")
    backend.add_scalars({"acc": 0.8}, step=2, file_path="results/val.json")
    backend.close()
    save_dir = tmp_path / "vis_data"
    assert read_lines(save_dir / "val.json") == [{"acc": 0.9, "step": 1}]
    assert read_lines(save_dir / "results" / "val.json") == [{"acc": 0.8, "step": 2}]
    assert read_lines(save_dir / "scalars.json") == [
        {"loss": 0.5, "step": 1},
        {"acc": 0.9, "step": 1},
        {"acc": 0.8, "step": 2},
    ]


def test_file_path_must_be_a_json_file(backend):
    with pytest.raises(ValueError, match=r"file_path must be a file name ending in '\.json'"):
        backend.add_scalars({"acc": 0.9}, file_path="val.txt")


def test_file_path_must_not_be_the_scalars_file(backend):
    # Also MMEngine's AssertionError, with its words.
    with pytest.raises(
        AssertionError,
        match=r"``file_path`` and ``scalar_save_file`` have the same name \('scalars\.json'\)",
    ) as error:
        backend.add_scalars({"acc": 0.9}, file_path="scalars.json")
    assert isinstance(error.value, ValueError)


def test_custom_file_names(tmp_path):
    backend = LocalVisBackend(
        str(tmp_path), img_save_dir="images", config_save_file="run.py", scalar_save_file="s.json"
    )
    backend.add_scalars({"loss": 1.0})
    backend.add_config({"lr": 0.1})
    backend.add_image("img", np.zeros((2, 2, 3), dtype=np.uint8))
    backend.close()
    assert read_lines(tmp_path / "s.json") == [{"loss": 1.0, "step": 0}]
    assert (tmp_path / "run.py").read_text() == "{'lr': 0.1}"
    assert (tmp_path / "images" / "img_0.png").is_file()


@pytest.mark.parametrize(
    ("argument", "name", "suffix"),
    [("config_save_file", "config.yaml", "py"), ("scalar_save_file", "scalars.txt", "json")],
)
def test_file_names_need_their_suffix(tmp_path, argument, name, suffix):
    with pytest.raises(ValueError, match=rf"{argument} must be a file name ending in '\.{suffix}'"):
        LocalVisBackend(str(tmp_path), **{argument: name})


def test_flush_interval_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="flush_interval must be a positive number of seconds"):
        LocalVisBackend(str(tmp_path), flush_interval=0)


def test_non_numeric_scalars_are_written_as_json_with_a_warning_as_in_mmengine(backend, tmp_path):
    with pytest.warns(SuspiciousInputWarning, match=r"scalar 'loss' is not a number \(str\)"):
        backend.add_scalars({"lr": 0.1, "loss": "high"})
    with pytest.warns(SuspiciousInputWarning, match=r"scalar 'acc' is not a number \(list\)"):
        backend.add_scalar("acc", [0.5, 0.6])
    with pytest.warns(SuspiciousInputWarning) as record:  # once a name: not for 'loss'
        backend.add_scalars({"loss": "low", "sizes": np.array([1, 2]), "none": None})
    assert ["'sizes'" in str(w.message) or "'none'" in str(w.message) for w in record] == [
        True,
        True,
    ]
    backend.close()
    lines = (tmp_path / "vis_data" / "scalars.json").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [
        {"lr": 0.1, "loss": "high", "step": 0},
        {"acc": [0.5, 0.6], "step": 0},
        {"loss": "low", "sizes": [1, 2], "none": None, "step": 0},
    ]


def test_a_value_json_cannot_hold_is_refused_with_mmengines_words(backend):
    with pytest.raises(TypeError, match=r"scalar 'obj': <class 'object'> is unsupported for json"):
        backend.add_scalars({"obj": object()})


def test_strict_checks_refuse_non_numeric_scalars(backend, strict):
    with pytest.raises(TypeError, match="scalar 'loss' must be a number"):
        backend.add_scalars({"lr": 0.1, "loss": "high"})
    with pytest.raises(TypeError, match="scalar 'acc' must be a number"):
        backend.add_scalar("acc", [0.5, 0.6])


def test_without_save_dir_the_first_write_names_the_problem():
    backend = LocalVisBackend(save_dir=None)
    with pytest.raises(ValueError, match="LocalVisBackend needs a save_dir"):
        backend.add_scalars({"loss": 1.0})


def test_config_text_is_written_to_config_py(backend, tmp_path):
    class PrettyConfig:  # what treadle's and MMEngine's Config both offer
        pretty_text = "model = dict(type='ResNet', depth=50)\n"

    backend.add_config(PrettyConfig())
    assert (tmp_path / "vis_data" / "config.py").read_text() == PrettyConfig.pretty_text
    backend.add_config({"optimizer": {"lr": 0.01}})  # a plain dict; replaces the file
    assert (tmp_path / "vis_data" / "config.py").read_text() == "{'optimizer': {'lr': 0.01}}"


def test_images_are_rgb_pngs_named_after_name_and_step(backend, tmp_path):
    image = np.zeros((6, 9, 3), dtype=np.uint8)
    image[:2] = (255, 0, 0)  # red band on top, green in the middle, blue at the bottom
    image[2:4] = (0, 255, 0)
    image[4:] = (0, 0, 255)
    backend.add_image("pred", image, step=3)
    backend.add_image("val/pred", image, step=4)
    with Image.open(tmp_path / "vis_data" / "vis_image" / "pred_3.png") as saved:
        assert (saved.format, saved.mode, saved.size) == ("PNG", "RGB", (9, 6))
        np.testing.assert_array_equal(np.asarray(saved), image)
    assert (tmp_path / "vis_data" / "vis_image" / "val" / "pred_4.png").is_file()


def test_grey_images_are_saved_as_rgb(backend, tmp_path):
    backend.add_image("grey", np.full((3, 4), 128, dtype=np.uint8))
    with Image.open(tmp_path / "vis_data" / "vis_image" / "grey_0.png") as saved:
        assert saved.mode == "RGB"
        assert np.all(np.asarray(saved) == 128)


def test_a_bad_image_is_refused_with_its_name(backend):
    with pytest.raises(ValueError, match=r"image 'pred' .*looks channel-first"):
        backend.add_image("pred", np.zeros((3, 8, 8), dtype=np.uint8))


def test_only_the_main_process_writes(tmp_path, monkeypatch):
    monkeypatch.setattr(treadle.dist, "is_main_process", lambda: False)
    backend = LocalVisBackend(save_dir=str(tmp_path / "vis_data"))
    backend.add_scalars({"loss": 1.0})
    backend.add_image("img", np.zeros((2, 2, 3), dtype=np.uint8))
    backend.add_config({"lr": 0.1})
    assert backend.experiment is None
    backend.close()
    assert not (tmp_path / "vis_data").exists()


def test_writes_after_close_append_to_the_same_file(backend, tmp_path):
    backend.add_scalars({"loss": 1.0}, step=1)
    backend.close()
    backend.add_scalars({"loss": 0.5}, step=2)
    backend.close()
    lines = read_lines(tmp_path / "vis_data" / "scalars.json")
    assert lines == [{"loss": 1.0, "step": 1}, {"loss": 0.5, "step": 2}]
