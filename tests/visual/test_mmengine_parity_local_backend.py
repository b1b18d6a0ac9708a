"""LocalVisBackend: the same files with the same content, and the same refusals.

See tests/support/visual_parity.py for how the two libraries are compared. Skipped without
MMEngine: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mmengine")

import torch
from mmengine.config import Config
from mmengine.registry import VISBACKENDS as MM_VISBACKENDS
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


def test_local_backend_writes_the_same_files(tmp_path):
    config = Config(dict(model=dict(type="ResNet", depth=50), lr=0.01, steps=[3, 6], name="run"))
    calls = [
        lambda b: b.add_scalars({"loss": 0.52, "lr": np.float32(0.1)}, step=3),
        lambda b: b.add_scalar("acc", 0.9, step=4),
        lambda b: b.add_scalar("tensor", torch.tensor(1.5)),
        lambda b: b.add_scalar("array", np.array(2.0), step=5),
        lambda b: b.add_scalars({"i": np.int64(3), "f": np.float64(0.25), "flag": True}),
        lambda b: b.add_scalars({"a": 1, "step": 7}, step=2),  # the dict's step wins, in both
        lambda b: b.add_scalars({"nan": float("nan"), "inf": float("inf")}, step=8),
        lambda b: b.add_scalars({"val": 0.5}, step=9, file_path="val.json"),
        lambda b: b.add_image("pred", RGB, step=2),
        lambda b: b.add_image("pred", RGB[::-1].copy()),  # step 0, a second file
        lambda b: b.add_config(config),
    ]
    dirs = {name: tmp_path / name for name in LIBRARIES}
    for name, visual in LIBRARIES.items():
        local_backend_run(visual, dirs[name], calls)
    files = files_under(dirs["mmengine"])
    assert files == files_under(dirs["treadle"])
    assert files == [
        "config.py",
        "scalars.json",
        "val.json",
        "vis_image/pred_0.png",
        "vis_image/pred_2.png",
    ]
    for name in ("scalars.json", "val.json"):
        # Parsed, and also byte for byte: the same json.dumps formatting.
        assert json_lines(dirs["mmengine"] / name) == json_lines(dirs["treadle"] / name)
        assert (dirs["mmengine"] / name).read_bytes() == (dirs["treadle"] / name).read_bytes()
    assert json_lines(dirs["treadle"] / "val.json") == [{"val": 0.5, "step": 9}]
    for png in ("vis_image/pred_0.png", "vis_image/pred_2.png"):
        assert np.array_equal(read_png(dirs["mmengine"] / png), read_png(dirs["treadle"] / png))
    assert np.array_equal(read_png(dirs["treadle"] / "vis_image/pred_2.png"), RGB)
    assert (dirs["mmengine"] / "config.py").read_text() == (
        dirs["treadle"] / "config.py"
    ).read_text()


def test_local_backend_appends_to_existing_files_and_after_close(tmp_path):
    for name, visual in LIBRARIES.items():
        local_backend_run(visual, tmp_path / name, [lambda b: b.add_scalar("a", 1, step=1)])
        backend = local_backend_run(
            visual, tmp_path / name, [lambda b: b.add_scalar("a", 2, step=2)]
        )
        backend.add_scalars({"a": 3}, step=3)  # after close: written again
        backend.close()
    expected = [{"a": 1, "step": 1}, {"a": 2, "step": 2}, {"a": 3, "step": 3}]
    for name in LIBRARIES:
        assert json_lines(tmp_path / name / "scalars.json") == expected


def test_local_backend_leaves_the_callers_dict_alone(tmp_path):
    for name, visual in LIBRARIES.items():
        scalars = {"loss": 0.5}
        local_backend_run(visual, tmp_path / name, [lambda b: b.add_scalars(scalars, step=4)])  # noqa: B023
        assert scalars == {"loss": 0.5}


@pytest.mark.parametrize(
    "image",
    [np.dstack([RGB, np.full(RGB.shape[:2], 128, np.uint8)]), RGB[..., 0].copy()],
    ids=["rgba-alpha-dropped", "grey"],
)
def test_local_backend_images_of_other_layouts(tmp_path, image):
    for name, visual in LIBRARIES.items():
        local_backend_run(visual, tmp_path / name, [lambda b: b.add_image("img", image)])
    mm_png, tr_png = (read_png(tmp_path / name / "vis_image/img_0.png") for name in LIBRARIES)
    assert np.array_equal(mm_png, tr_png)


def test_local_backend_experiment_is_the_backend(tmp_path):
    for name, visual in LIBRARIES.items():
        backend = visual.LocalVisBackend(save_dir=str(tmp_path / name))
        assert backend.experiment is backend
        assert (tmp_path / name).is_dir()  # the first use made the directory
    assert files_under(tmp_path) == []


def test_local_backend_built_from_its_registry(tmp_path):
    for registry, visual in ((MM_VISBACKENDS, mm_visual), (tr_visual.VISBACKENDS, tr_visual)):
        backend = registry.build(dict(type="LocalVisBackend", save_dir=str(tmp_path)))
        assert type(backend) is visual.LocalVisBackend


LOCAL_REFUSES = {
    "config_save_file-not-py": (
        dict(config_save_file="cfg.txt"),
        None,
        AssertionError,
        ValueError,
        "end",
    ),
    "scalar_save_file-not-json": (
        dict(scalar_save_file="s.txt"),
        None,
        AssertionError,
        ValueError,
        "end",
    ),
    "file_path-not-json": (
        {},
        lambda b: b.add_scalars({"x": 1}, file_path="val.txt"),
        AssertionError,
        ValueError,
        r"ending in '\.json'",
    ),
    "file_path-is-scalars.json": (
        {},
        lambda b: b.add_scalars({"x": 1}, file_path="scalars.json"),
        AssertionError,
        ValueError,
        "``file_path`` and ``scalar_save_file`` have the same name",
    ),
    "scalars-not-a-dict": (
        {},
        lambda b: b.add_scalars([("a", 1)]),
        AssertionError,
        TypeError,
        "dict",
    ),
    "save_dir-None": (
        {"save_dir": None},
        lambda b: b.add_scalar("a", 1),
        TypeError,
        ValueError,
        "needs a save_dir",
    ),
}


@pytest.mark.parametrize(
    ("kwargs", "call", "mm_raises", "tr_raises", "tr_message"),
    LOCAL_REFUSES.values(),
    ids=LOCAL_REFUSES.keys(),
)
def test_local_backend_both_refuse(tmp_path, kwargs, call, mm_raises, tr_raises, tr_message):
    results = {}
    for name, visual in LIBRARIES.items():
        settings = {"save_dir": str(tmp_path / name), **kwargs}

        def run(visual=visual, settings=settings):
            backend = visual.LocalVisBackend(**settings)
            if call is not None:
                call(backend)
            backend.close()

        results[name] = outcome(run)
    assert results["mmengine"].raised is mm_raises, results["mmengine"]
    raised = results["treadle"].raised
    assert raised is not None and issubclass(raised, tr_raises), results["treadle"]
    if mm_raises is AssertionError:  # treadle's error is also MMEngine's (issue 41)
        assert issubclass(raised, AssertionError), results["treadle"]
    with pytest.raises(tr_raises, match=tr_message):
        backend = tr_visual.LocalVisBackend(**{"save_dir": str(tmp_path / "again"), **kwargs})
        if call is not None:
            call(backend)
