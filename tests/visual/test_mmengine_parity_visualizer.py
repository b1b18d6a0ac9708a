"""The Visualizer: the vis_data layout it writes, its backends, instances, registry and the
add_* calls it forwards, alike in both libraries.

See tests/support/visual_parity.py for how the two libraries are compared. Skipped without
MMEngine: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mmengine")

import torch
from mmengine.config import Config
from mmengine.registry import VISUALIZERS as MM_VISUALIZERS
from visual_parity import (  # in tests/support, on pytest's sys.path
    BACKGROUND,
    BOXES,
    LIBRARIES,
    RGB,
    drawn,
    files_under,
    json_lines,
    mm_visual,
    new_visualizer,
    read_png,
    tr_visual,
    unique_name,
)


def test_visualizer_writes_the_same_vis_data_layout(tmp_path):
    config = Config(dict(optimizer=dict(type="SGD", lr=0.02), max_epochs=12))
    image = drawn(tr_visual, lambda v: v.draw_bboxes(BOXES, edge_colors="r"))
    for name, visual in LIBRARIES.items():
        visualizer = new_visualizer(
            visual, vis_backends=[dict(type="LocalVisBackend")], save_dir=str(tmp_path / name)
        )
        visualizer.add_config(config)
        visualizer.add_scalars({"loss": 1.25, "lr": 0.02}, step=10)
        visualizer.add_scalar("acc", 0.75, step=12)
        visualizer.add_scalars({"mAP": 0.4}, step=1, file_path="val.json")
        visualizer.add_image("pred", image, step=12)
        visualizer.close()
    layout = files_under(tmp_path / "mmengine")
    assert layout == files_under(tmp_path / "treadle")
    assert layout == [
        "vis_data/config.py",
        "vis_data/scalars.json",
        "vis_data/val.json",
        "vis_data/vis_image/pred_12.png",
    ]
    for file in ("vis_data/scalars.json", "vis_data/val.json"):
        assert json_lines(tmp_path / "mmengine" / file) == json_lines(tmp_path / "treadle" / file)
    png = "vis_data/vis_image/pred_12.png"
    assert np.array_equal(
        read_png(tmp_path / "mmengine" / png), read_png(tmp_path / "treadle" / png)
    )
    assert (tmp_path / "mmengine" / "vis_data/config.py").read_text() == (
        tmp_path / "treadle" / "vis_data/config.py"
    ).read_text()


def test_backend_given_its_own_save_dir_keeps_it(tmp_path):
    for name, visual in LIBRARIES.items():
        own = tmp_path / name / "own"
        visualizer = new_visualizer(
            visual,
            vis_backends=[dict(type="LocalVisBackend", save_dir=str(own))],
            save_dir=str(tmp_path / name / "run"),
        )
        visualizer.add_scalar("a", 1)
        visualizer.close()
        assert files_under(tmp_path / name) == ["own/scalars.json"]


BACKEND_FORMS = {
    "None": (lambda visual: None, []),
    "one-dict": (lambda visual: dict(type="LocalVisBackend"), ["LocalVisBackend"]),
    "list-of-dicts-named": (
        lambda visual: [dict(type="LocalVisBackend"), dict(type="LocalVisBackend", name="val")],
        ["LocalVisBackend", "val"],
    ),
    "instance": (lambda visual: visual.LocalVisBackend(save_dir="unused"), ["LocalVisBackend"]),
    "mixed-list": (
        lambda visual: [
            visual.LocalVisBackend(save_dir="unused"),
            dict(type="LocalVisBackend", name="b"),
        ],
        ["LocalVisBackend", "b"],
    ),
}


@pytest.mark.parametrize(("make", "names"), BACKEND_FORMS.values(), ids=BACKEND_FORMS.keys())
def test_vis_backends_forms_and_get_backend(tmp_path, make, names):
    for name, visual in LIBRARIES.items():
        visualizer = new_visualizer(
            visual, vis_backends=make(visual), save_dir=str(tmp_path / name)
        )
        for backend_name in names:
            assert isinstance(visualizer.get_backend(backend_name), visual.LocalVisBackend)
        assert visualizer.get_backend("NoSuchName") is None
        if names:
            assert visualizer.get_backend(names[0]) is visualizer.get_backend(names[0])


def test_backend_without_save_dir_is_left_out_with_a_warning_in_both():
    for visual in LIBRARIES.values():
        with pytest.warns(UserWarning, match="save_dir"):
            visualizer = new_visualizer(visual, vis_backends=[dict(type="LocalVisBackend")])
        assert visualizer.get_backend("LocalVisBackend") is None


def test_deviation_the_callers_backend_config_is_left_alone(tmp_path):
    # Deviation (visualizer._build_backends): treadle builds from a copy; MMEngine pops 'name'
    # from the caller's dict and sets its save_dir, so a config reused for a second Visualizer
    # silently loses its name.
    configs = {}
    for name, visual in LIBRARIES.items():
        configs[name] = dict(type="LocalVisBackend", name="local")
        new_visualizer(visual, vis_backends=[configs[name]], save_dir=str(tmp_path))
    assert configs["treadle"] == dict(type="LocalVisBackend", name="local")
    assert configs["mmengine"] == dict(type="LocalVisBackend", save_dir=str(tmp_path / "vis_data"))


def test_dataset_meta_in_both():
    meta = dict(classes=("cat", "dog"), palette=[(255, 0, 0), (0, 0, 255)])
    for visual in LIBRARIES.values():
        visualizer = new_visualizer(visual)
        assert visualizer.dataset_meta is None
        visualizer.dataset_meta = meta
        assert visualizer.dataset_meta is meta


def test_fig_cfgs_are_kept_in_both():
    for visual in LIBRARIES.values():
        visualizer = new_visualizer(
            visual, fig_save_cfg=dict(frameon=False, dpi=72), fig_show_cfg=dict(frameon=True)
        )
        assert visualizer.fig_save_cfg == dict(frameon=False, dpi=72)
        assert visualizer.fig_show_cfg == dict(frameon=True)
        assert visualizer.dpi == 72
        assert new_visualizer(visual).dpi == 100  # matplotlib's default figure dpi


def _subclass(visual):
    class DetLocalVisualizer(visual.Visualizer):
        pass

    return DetLocalVisualizer


def test_get_instance_and_get_current_instance_in_both():
    for visual in LIBRARIES.values():
        subclass = _subclass(visual)
        name = unique_name("instance")
        instance = subclass.get_instance(name, image=BACKGROUND)
        assert isinstance(instance, subclass) and instance.instance_name == name
        assert subclass.get_instance(name) is instance
        # The latest instance of any subclass is the Visualizer's current instance too.
        assert visual.Visualizer.get_current_instance() is instance
        assert subclass.get_current_instance() is instance
        assert visual.Visualizer.check_instance_created(name)
        assert not visual.Visualizer.check_instance_created(unique_name("never"))
        plain = visual.Visualizer.get_instance(unique_name("plain"))
        assert visual.Visualizer.get_current_instance() is plain
        with pytest.warns(UserWarning):  # kwargs for an existing instance are ignored
            assert subclass.get_instance(name, image=BACKGROUND) is instance


def test_built_from_the_visualizers_registry_in_both(tmp_path):
    for registry, visual in ((MM_VISUALIZERS, mm_visual), (tr_visual.VISUALIZERS, tr_visual)):
        name = unique_name("built")
        visualizer = registry.build(
            dict(
                type="Visualizer",
                name=name,
                vis_backends=[dict(type="LocalVisBackend")],
                save_dir=str(tmp_path),
            )
        )
        assert type(visualizer) is visual.Visualizer and visualizer.instance_name == name
        assert isinstance(visualizer.get_backend("LocalVisBackend"), visual.LocalVisBackend)


def _recording_backend(visual):
    class Recording(visual.BaseVisBackend):
        def __init__(self):
            super().__init__(save_dir=None)
            self.calls = []

        @property
        def experiment(self):
            return self

        def _init_env(self):
            pass

        def add_config(self, config, **kwargs):
            self.calls.append(("add_config", config.to_dict(), kwargs))

        def add_graph(self, model, data_batch, **kwargs):
            self.calls.append(("add_graph", type(model).__name__, data_batch, kwargs))

        def add_image(self, name, image, step=0, **kwargs):
            self.calls.append(("add_image", name, image.tolist(), step, kwargs))

        def add_scalar(self, name, value, step=0, **kwargs):
            self.calls.append(("add_scalar", name, value, step, kwargs))

        def add_scalars(self, scalar_dict, step=0, file_path=None, **kwargs):
            self.calls.append(("add_scalars", scalar_dict, step, file_path, kwargs))

        def close(self):
            self.calls.append(("close",))

    return Recording


def test_every_add_call_is_forwarded_alike():
    config = Config(dict(lr=0.1))
    recorded = {}
    for name, visual in LIBRARIES.items():
        backend = _recording_backend(visual)()
        visualizer = new_visualizer(visual, vis_backends=backend)
        visualizer.add_config(config, note="cfg")
        visualizer.add_graph(torch.nn.Linear(2, 2), [dict(inputs=1)], verbose=False)
        visualizer.add_image("pred", RGB, step=3)
        visualizer.add_scalar("loss", 0.5, step=2, tag="train")
        visualizer.add_scalars({"acc": 0.9}, step=4, file_path="val.json", tag="val")
        visualizer.add_scalars({"lr": 0.1})
        assert visualizer.add_datasample("sample", RGB) is None  # the extension point
        visualizer.close()
        recorded[name] = backend.calls
    assert recorded["mmengine"] == recorded["treadle"]
    assert [call[0] for call in recorded["treadle"]] == [
        "add_config",
        "add_graph",
        "add_image",
        "add_scalar",
        "add_scalars",
        "add_scalars",
        "close",
    ]
