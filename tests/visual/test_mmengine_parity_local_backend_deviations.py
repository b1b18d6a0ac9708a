"""LocalVisBackend where treadle deliberately differs (non-str scalar names refused, one-element
arrays and tensors logged as numbers, buffered scalar lines, dict configs, subfolders and
float images), and where it now writes what MMEngine writes (non-numeric scalars).

See tests/support/visual_parity.py for how the two libraries are compared. Skipped without
MMEngine: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mmengine")

import torch
from visual_parity import (  # in tests/support, on pytest's sys.path
    LIBRARIES,
    RGB,
    files_under,
    json_lines,
    local_backend_run,
    mm_visual,
    outcome,
    read_png,
    tr_visual,
)

from treadle.visual.strict_checks import SuspiciousInputWarning

# Values MMEngine writes into scalars.json as JSON (lists, strings, null), and treadle too,
# with a SuspiciousInputWarning: id -> (call, the JSON line of both).
NON_NUMERIC_SCALARS = {
    "add_scalar-list": (lambda b: b.add_scalar("l", [1, 2]), {"l": [1, 2], "step": 0}),
    "add_scalar-str": (lambda b: b.add_scalar("s", "abc"), {"s": "abc", "step": 0}),
    "add_scalar-array-of-two": (
        lambda b: b.add_scalar("a", np.array([1.0, 2.0])),
        {"a": [1.0, 2.0], "step": 0},
    ),
    "add_scalars-list": (
        lambda b: b.add_scalars({"l": [1, 2, 3], "acc": 0.8}),
        {"l": [1, 2, 3], "acc": 0.8, "step": 0},
    ),
    "add_scalars-str": (lambda b: b.add_scalars({"s": "abc"}), {"s": "abc", "step": 0}),
    "add_scalars-None": (lambda b: b.add_scalars({"s": None}), {"s": None, "step": 0}),
}


@pytest.mark.parametrize(
    ("call", "line"), NON_NUMERIC_SCALARS.values(), ids=NON_NUMERIC_SCALARS.keys()
)
def test_non_numeric_scalars_are_written_alike_with_a_warning(tmp_path, call, line):
    # Issue 41 (treadle/visual/backends/local_backend.py _loggable): what MMEngine writes,
    # treadle writes; it also warns, since a plot or a tracker skips such values.
    local_backend_run(mm_visual, tmp_path / "mm", [call])
    assert json_lines(tmp_path / "mm" / "scalars.json") == [line]
    with pytest.warns(SuspiciousInputWarning, match=r"is not a number"):
        local_backend_run(tr_visual, tmp_path / "tr", [call])
    assert json_lines(tmp_path / "tr" / "scalars.json") == [line]


def test_deviation_non_str_scalar_names_raise(tmp_path):
    # Deviation (treadle/visual/backends/local_backend.py): a scalar name must be a str;
    # MMEngine's JSON dumper turns an int key into a string.
    call = lambda b: b.add_scalars({1: 0.5})  # noqa: E731
    local_backend_run(mm_visual, tmp_path / "mm", [call])
    assert json_lines(tmp_path / "mm" / "scalars.json") == [{"1": 0.5, "step": 0}]
    with pytest.raises(TypeError, match=r"scalar names must be str, got 1"):
        local_backend_run(tr_visual, tmp_path / "tr", [call])


@pytest.mark.parametrize(
    "call",
    [
        lambda b: b.add_scalar("a", 1.0, step=np.int64(3)),
        lambda b: b.add_scalars({"a": 1.0}, step=np.int64(3)),
    ],
    ids=["add_scalar", "add_scalars"],
)
def test_numpy_integer_step_is_written(tmp_path, call):
    for name, visual in LIBRARIES.items():
        local_backend_run(visual, tmp_path / name, [call])
        assert json_lines(tmp_path / name / "scalars.json") == [{"a": 1.0, "step": 3}], name


def test_deviation_one_element_arrays_are_numbers(tmp_path):
    # Deviation (treadle/visual/scalars.py scalar_value): any one-element array or tensor is
    # logged as its number. MMEngine's add_scalars writes a (1,) array as a JSON list [1.0]
    # (0-d arrays and add_scalar of a tensor are numbers in both).
    call = lambda b: b.add_scalars({"a": np.array([1.0]), "b": np.array(2.0)})  # noqa: E731
    for name, visual in LIBRARIES.items():
        local_backend_run(visual, tmp_path / name, [call])
    assert json_lines(tmp_path / "mmengine" / "scalars.json") == [{"a": [1.0], "b": 2.0, "step": 0}]
    assert json_lines(tmp_path / "treadle" / "scalars.json") == [{"a": 1.0, "b": 2.0, "step": 0}]


def test_deviation_an_integer_tensor_step_is_a_step(tmp_path):
    # Deviation (treadle/visual/scalars.py step_value): a step is anything usable as an index
    # (int, numpy integer, 0-d integer tensor). MMEngine's JSON dumper raises TypeError on a
    # tensor step.
    results = {}
    for name, visual in LIBRARIES.items():
        call = lambda b: b.add_scalars({"a": 1.0}, step=torch.tensor(3))  # noqa: E731
        results[name] = outcome(lambda: local_backend_run(visual, tmp_path / name, [call]))  # noqa: B023
    assert results["mmengine"].raised is TypeError
    assert results["treadle"].raised is None
    assert json_lines(tmp_path / "treadle" / "scalars.json") == [{"a": 1.0, "step": 3}]


def test_deviation_tensor_values_in_add_scalars(tmp_path):
    # Deviation (treadle/visual/scalars.py): a one-element tensor in add_scalars is logged as
    # its number, as add_scalar already does in both. MMEngine raises TypeError from its JSON
    # dumper, after writing half a line ('{"t": ') that breaks every later read of the file.
    call = lambda b: b.add_scalars({"t": torch.tensor(0.5)}, step=1)  # noqa: E731
    with pytest.raises(TypeError):
        local_backend_run(mm_visual, tmp_path / "mm", [call])
    assert (tmp_path / "mm" / "scalars.json").read_text() == '{"t": '
    local_backend_run(tr_visual, tmp_path / "tr", [call])
    assert json_lines(tmp_path / "tr" / "scalars.json") == [{"t": 0.5, "step": 1}]


def test_deviation_scalars_are_buffered_until_flush_or_close(tmp_path):
    # Deviation (treadle/visual/backends/scalar_writer.py; the 50 us per call): treadle
    # keeps scalar lines in memory for up to flush_interval seconds (2 by default), and writes
    # them at flush(), close(), garbage collection and exit. MMEngine opens and appends to the
    # file on every call. After close() both files are the same (test above).
    mm_backend = mm_visual.LocalVisBackend(save_dir=str(tmp_path / "mm"))
    tr_backend = tr_visual.LocalVisBackend(save_dir=str(tmp_path / "tr"), flush_interval=3600)
    for backend in (mm_backend, tr_backend):
        backend.add_scalars({"loss": 0.5}, step=1)
    assert json_lines(tmp_path / "mm" / "scalars.json") == [{"loss": 0.5, "step": 1}]
    assert (tmp_path / "tr" / "scalars.json").read_text() == ""
    tr_backend.flush()
    assert json_lines(tmp_path / "tr" / "scalars.json") == [{"loss": 0.5, "step": 1}]
    tr_backend.close()


def test_deviation_add_config_takes_a_dict(tmp_path):
    # Deviation (treadle/visual/config_view.py): treadle.visual may not import treadle.config,
    # so add_config reads any Config by duck typing (pretty_text) and also takes a plain dict,
    # written with pprint. MMEngine asserts an mmengine Config.
    with pytest.raises(AssertionError):
        local_backend_run(mm_visual, tmp_path / "mm", [lambda b: b.add_config(dict(lr=0.1))])
    local_backend_run(tr_visual, tmp_path / "tr", [lambda b: b.add_config(dict(lr=0.1))])
    assert (tmp_path / "tr" / "config.py").read_text() == "{'lr': 0.1}"


def test_deviation_file_path_in_a_subfolder(tmp_path):
    # Deviation (LocalVisBackend._writer): file_path may name a subfolder, which treadle
    # creates; MMEngine opens the file without creating it (FileNotFoundError).
    call = lambda b: b.add_scalars({"x": 1}, file_path="val/metrics.json")  # noqa: E731
    with pytest.raises(FileNotFoundError):
        local_backend_run(mm_visual, tmp_path / "mm", [call])
    local_backend_run(tr_visual, tmp_path / "tr", [call])
    assert json_lines(tmp_path / "tr" / "val" / "metrics.json") == [{"x": 1, "step": 0}]


def test_deviation_image_name_with_a_slash(tmp_path):
    # Deviation (LocalVisBackend.add_image): a name like 'val/pred' saves into a subfolder of
    # vis_image; MMEngine's cv2.imwrite fails silently there and no file appears.
    for name, visual in LIBRARIES.items():
        local_backend_run(visual, tmp_path / name, [lambda b: b.add_image("val/pred", RGB)])
    assert files_under(tmp_path / "mmengine") == []
    assert files_under(tmp_path / "treadle") == ["vis_image/val/pred_0.png"]


def test_deviation_float_images_are_saved(tmp_path):
    # Deviation (treadle/visual/image_check.py): add_image takes a float image in [0, 255]
    # (truncated to uint8, as set_image does in both); MMEngine's backend asserts uint8.
    truncated = np.minimum(RGB, 254)
    image = truncated.astype(np.float32) + 0.5
    with pytest.raises(AssertionError):
        local_backend_run(mm_visual, tmp_path / "mm", [lambda b: b.add_image("f", image)])
    local_backend_run(tr_visual, tmp_path / "tr", [lambda b: b.add_image("f", image)])
    assert np.array_equal(read_png(tmp_path / "tr" / "vis_image" / "f_0.png"), truncated)
