"""VISUALIZERS and VISBACKENDS: every backend is found by name, built lazily, and a wrong name
gets the registry's error with the closest names."""

from __future__ import annotations

import subprocess
import sys

import pytest

from treadle.visual import VISBACKENDS, VISUALIZERS, BaseVisBackend, Visualizer

BACKENDS = [
    "LocalVisBackend",
    "TensorboardVisBackend",
    "AimVisBackend",
    "MLflowVisBackend",
    "WandbVisBackend",
    "ClearMLVisBackend",
    "NeptuneVisBackend",
    "DVCLiveVisBackend",
]


@pytest.mark.parametrize("name", BACKENDS)
def test_every_backend_is_registered_and_built_lazily(name, tmp_path):
    backend = VISBACKENDS.build(dict(type=name, save_dir=str(tmp_path / "vis")))
    assert isinstance(backend, BaseVisBackend) and type(backend).__name__ == name
    assert not (tmp_path / "vis").exists()  # nothing is written before the first add_*


def test_building_every_backend_imports_no_tracker():
    trackers = ["tensorboard", "aim", "mlflow", "wandb", "clearml", "neptune", "dvclive"]
    code = (
        "import sys\n"
        "from treadle.visual import VISBACKENDS\n"
        f"for name in {BACKENDS!r}:\n"
        "    VISBACKENDS.build(dict(type=name, save_dir='unused'))\n"
        f"print([m for m in {trackers!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_mmengine_spelling_of_mlflow_is_registered_too():
    assert VISBACKENDS.get("MlflowVisBackend") is VISBACKENDS.get("MLflowVisBackend")


def test_unknown_backend_type_names_the_registry_and_the_closest():
    with pytest.raises(
        KeyError, match=r"WandBVisBackend is not in the treadle::vis_backend registry"
    ):
        VISBACKENDS.build(dict(type="WandBVisBackend", save_dir="x"))
    with pytest.raises(KeyError, match=r"Did you mean .WandbVisBackend."):
        VISBACKENDS.build(dict(type="WandBVisBackend", save_dir="x"))


def test_visualizer_is_built_from_its_registry_with_backends(tmp_path):
    vis = VISUALIZERS.build(
        dict(
            type="Visualizer",
            name="from_cfg",
            vis_backends=[dict(type="LocalVisBackend"), dict(type="TensorboardVisBackend")],
            save_dir=str(tmp_path),
        )
    )
    assert isinstance(vis, Visualizer)
    assert Visualizer.get_current_instance() is vis  # built through get_instance (ManagerMixin)
    assert type(vis.get_backend("TensorboardVisBackend")).__name__ == "TensorboardVisBackend"
    vis.close()
