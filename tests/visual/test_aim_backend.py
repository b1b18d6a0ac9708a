"""AimVisBackend against the real Aim: a local repository read back with aim.Repo."""

from __future__ import annotations

import sys

import numpy as np
import pytest

aim = pytest.importorskip("aim")

from aim.sdk.index_manager import RepoIndexManager  # noqa: E402
from aim.storage.context import Context  # noqa: E402

from treadle.visual.backends.aim_backend import AimVisBackend  # noqa: E402

# No system-metrics thread and no capture of the terminal: nothing runs beside the test.
QUIET = {"system_tracking_interval": None, "capture_terminal_logs": False}


@pytest.fixture(autouse=True)
def _private_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("AIM_UI_TELEMETRY_ENABLED", "0")
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """One Aim repository for the module's runs: creating a repository takes over a second."""
    path = tmp_path_factory.mktemp("aim_repo")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(path / "home"))
        aim.Repo.from_path(str(path), init=True)
    return path


def read_run(repo_path, run_hash):
    """The finished run, as Aim's reader sees it once the repository is indexed.

    Aim reads runs through its meta index, which ``aim up`` updates in the background;
    indexing the run here does the same without starting a server.
    """
    repo = aim.Repo.from_path(str(repo_path))
    RepoIndexManager.get_index_manager(repo).index(run_hash)
    return repo.get_run(run_hash)


def metric_points(run, name):
    steps, (values, *_) = run.get_metric(name, Context({})).data.items_list()
    return list(zip(steps, [pytest.approx(value) for value in values], strict=True))


def test_scalars_hparams_and_image_are_read_back_by_aim(repo):
    import torch

    backend = AimVisBackend(init_kwargs={"repo": str(repo), "experiment": "resnet", **QUIET})
    backend.add_config({"lr": 0.01, "model": {"type": "ResNet", "depth": 18}})
    for step in (1, 2, 3):
        backend.add_scalars({"loss": 1.0 / step, "acc": np.float32(step / 10)}, step=step)
    backend.add_scalar("lr", torch.tensor(0.5), step=7)
    backend.add_image("pred", np.full((20, 30, 3), 200, dtype=np.uint8), step=5)
    run_hash = backend.experiment.hash
    backend.close()

    run = read_run(repo, run_hash)
    assert run.experiment == "resnet"
    assert run["hparams"] == {"lr": 0.01, "model": {"type": "ResNet", "depth": 18}}
    assert metric_points(run, "loss") == [(1, 1.0), (2, 0.5), (3, 1 / 3)]
    assert metric_points(run, "acc") == [(1, 0.1), (2, 0.2), (3, 0.3)]
    assert metric_points(run, "lr") == [(7, 0.5)]
    steps, (images, *_) = run.get_image_sequence("pred", Context({})).data.items_list()
    assert steps == [5]
    picture = images[0].to_pil_image()
    assert picture.size == (30, 20)
    assert picture.getpixel((0, 0)) == (200, 200, 200)


def test_duck_typed_config_is_recorded_through_to_dict(repo):
    class DuckConfig:
        pretty_text = "optim = dict(type='SGD')\n"

        def to_dict(self):
            return {"optim": {"type": "SGD", "betas": (0.9, 0.99)}}

    backend = AimVisBackend(init_kwargs={"repo": str(repo), **QUIET})
    backend.add_config(DuckConfig())
    run_hash = backend.experiment.hash
    backend.close()
    # Aim stores tuples as lists.
    assert read_run(repo, run_hash)["hparams"] == {"optim": {"type": "SGD", "betas": [0.9, 0.99]}}


def test_default_repo_is_in_the_working_directory_and_experiment_from_save_dir(tmp_path):
    backend = AimVisBackend(
        save_dir=str(tmp_path / "20240101_120000" / "vis_data"), init_kwargs=QUIET
    )
    assert not (tmp_path / ".aim").exists()
    backend.add_scalar("loss", 0.25, step=4)
    run_hash = backend.experiment.hash
    backend.close()
    assert (tmp_path / ".aim").is_dir()
    run = read_run(tmp_path, run_hash)
    assert run.experiment == "20240101_120000_vis_data"
    assert metric_points(run, "loss") == [(4, 0.25)]


def test_nothing_is_imported_or_written_before_the_first_add(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "aim", None)
    backend = AimVisBackend(init_kwargs={"repo": str(tmp_path / "repo"), **QUIET})
    with pytest.raises(
        ImportError,
        match=r"AimVisBackend needs the 'aim' library.*pip install treadle-visual\[aim\]",
    ):
        backend.add_scalars({"loss": 1.0})
    assert list(tmp_path.iterdir()) == []
    backend.close()  # never opened: nothing to do


def test_non_numeric_scalar_names_the_key_and_tracks_nothing_of_that_step(repo):
    backend = AimVisBackend(init_kwargs={"repo": str(repo), **QUIET})
    backend.add_scalars({"loss": 1.0}, step=1)
    with pytest.raises(TypeError, match=r"scalar 'acc' must be a number.*NoneType"):
        backend.add_scalars({"loss": 0.5, "acc": None}, step=2)
    with pytest.raises(TypeError, match=r"scalar 'lr' must be a number"):
        backend.add_scalar("lr", "0.1", step=2)
    run_hash = backend.experiment.hash
    backend.close()
    run = read_run(repo, run_hash)
    assert metric_points(run, "loss") == [(1, 1.0)]
    assert run.get_metric("acc", Context({})) is None


def test_bad_image_is_refused_with_its_name(repo):
    backend = AimVisBackend(init_kwargs={"repo": str(repo), **QUIET})
    with pytest.raises(TypeError, match=r"image 'pred' must be a numpy array"):
        backend.add_image("pred", [[0, 0, 0]])
    backend.close()


def test_close_finishes_the_run_and_is_idempotent(repo):
    backend = AimVisBackend(init_kwargs={"repo": str(repo), **QUIET})
    backend.close()  # never opened
    backend.add_scalar("loss", 2.0, step=1)
    first = backend.experiment.hash
    backend.close()
    backend.close()
    assert metric_points(read_run(repo, first), "loss") == [(1, 2.0)]
    assert read_run(repo, first).end_time is not None  # close finished the run


def test_numpy_and_tensor_steps_are_steps(repo):
    # A runner's counters are often numpy or torch integers; aim.Run.track refuses them.
    torch = pytest.importorskip("torch")
    backend = AimVisBackend(init_kwargs={"repo": str(repo), **QUIET})
    backend.add_scalars({"loss": 0.5}, step=np.int64(4))
    backend.add_scalar("loss", 0.25, step=torch.tensor(5))
    backend.add_image("pred", np.zeros((4, 4, 3), dtype=np.uint8), step=np.int32(6))
    with pytest.raises(TypeError, match=r"step must be an integer, got float: 2\.5"):
        backend.add_scalar("loss", 0.125, step=2.5)
    run_hash = backend.experiment.hash
    backend.close()

    run = read_run(repo, run_hash)
    assert metric_points(run, "loss") == [(4, 0.5), (5, 0.25)]
    steps, _ = run.get_image_sequence("pred", Context({})).data.items_list()
    assert steps == [6]
