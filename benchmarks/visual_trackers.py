"""What each tracker backend of treadle.visual adds to the tracker library's own logging call.

One logging step hands a backend ~10 numbers. For each tracker that is installed, this times
``backend.add_scalars(scalars, step)`` and, as the baseline, the same numbers logged with the
library's own call on an already open run or writer, in the same process, offline, into a
temporary folder that also holds HOME: ``SummaryWriter.add_scalar`` per key (TensorBoard),
``Run.track`` per key (Aim), ``mlflow.log_metrics`` (MLflow), ``run.log`` with the same ``step``
key (W&B), ``Logger.report_scalar`` per key (ClearML), ``run[key].append`` per key (Neptune),
``Live.log_metric`` per key (DVCLive). treadle's extra cost is checking the values
(``scalar_dict``) and the main-process check; the ratio should stay close to 1.

    python benchmarks/visual_trackers.py [--steps 1000] [--repeats 3] [--only wandb,aim]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import tempfile
from collections.abc import Callable

from timing import per_call
from visual_local_scalars import scalars_of_a_logging_step

# What a runner's logger hook hands the visualizer at one logging step.
SCALARS = scalars_of_a_logging_step()


class Steps:
    """A step counter shared by a timed function and its baseline."""

    def __init__(self) -> None:
        self.value = 0

    def next(self) -> int:
        self.value += 1
        return self.value


def tensorboard_pair(directory: str) -> tuple[Callable, Callable, Callable]:
    from torch.utils.tensorboard import SummaryWriter

    from treadle.visual.backends.tensorboard_backend import TensorboardVisBackend

    writer = SummaryWriter(os.path.join(directory, "plain"))
    backend = TensorboardVisBackend(os.path.join(directory, "treadle"))
    steps = Steps()

    def plain() -> None:
        step = steps.next()
        for name, value in SCALARS.items():
            writer.add_scalar(name, value, step)

    def treadle() -> None:
        backend.add_scalars(SCALARS, step=steps.next())

    def close() -> None:
        writer.close()
        backend.close()

    return plain, treadle, close


def aim_pair(directory: str) -> tuple[Callable, Callable, Callable]:
    from aim import Run

    from treadle.visual.backends.aim_backend import AimVisBackend

    quiet = {"repo": directory, "system_tracking_interval": None, "capture_terminal_logs": False}
    run = Run(experiment="plain", **quiet)
    backend = AimVisBackend(init_kwargs={"experiment": "treadle", **quiet})
    steps = Steps()

    def plain() -> None:
        step = steps.next()
        for name, value in SCALARS.items():
            run.track(value, name=name, step=step)

    def treadle() -> None:
        backend.add_scalars(SCALARS, step=steps.next())

    def close() -> None:
        run.close()
        backend.close()

    return plain, treadle, close


def mlflow_pair(directory: str) -> tuple[Callable, Callable, Callable]:
    import mlflow

    from treadle.visual.backends.mlflow_backend import MLflowVisBackend

    backend = MLflowVisBackend(directory, exp_name="bench")
    backend.add_scalars(SCALARS, step=0)  # opens the store and the run the baseline logs to too
    steps = Steps()

    def plain() -> None:
        mlflow.log_metrics(SCALARS, step=steps.next())

    def treadle() -> None:
        backend.add_scalars(SCALARS, step=steps.next())

    return plain, treadle, backend.close


def wandb_pair(directory: str) -> tuple[Callable, Callable, Callable]:
    import wandb

    from treadle.visual.backends.wandb_backend import WandbVisBackend

    settings = {"reinit": "create_new", "settings": wandb.Settings(x_disable_stats=True)}
    run = wandb.init(dir=os.path.join(directory, "plain"), **settings)
    backend = WandbVisBackend(os.path.join(directory, "treadle"), init_kwargs=settings)
    steps = Steps()

    def plain() -> None:
        run.log({**SCALARS, "step": steps.next()})

    def treadle() -> None:
        backend.add_scalars(SCALARS, step=steps.next())

    def close() -> None:
        backend.close()
        run.finish()
        wandb.teardown()

    return plain, treadle, close


def clearml_pair(directory: str) -> tuple[Callable, Callable, Callable]:
    from clearml import Task

    from treadle.visual.backends.clearml_backend import ClearMLVisBackend

    Task.set_offline(True)
    quiet = dict(
        project_name="bench",
        task_name="overhead",
        reuse_last_task_id=False,
        auto_connect_frameworks=False,
        auto_connect_streams=False,
        auto_connect_arg_parser=False,
        auto_resource_monitoring=False,
    )
    backend = ClearMLVisBackend(init_kwargs=quiet)
    backend.add_scalars(SCALARS, step=0)  # opens the task the baseline reports to as well
    logger = Task.current_task().get_logger()
    steps = Steps()

    def plain() -> None:
        step = steps.next()
        for name, value in SCALARS.items():
            logger.report_scalar(title=name, series=name, value=value, iteration=step)

    def treadle() -> None:
        backend.add_scalars(SCALARS, step=steps.next())

    return plain, treadle, backend.close


def neptune_pair(directory: str) -> tuple[Callable, Callable, Callable]:
    import neptune

    from treadle.visual.backends.neptune_backend import NeptuneVisBackend

    quiet = dict(
        mode="offline",
        capture_stdout=False,
        capture_stderr=False,
        capture_hardware_metrics=False,
        source_files=[],
        git_ref=False,
    )
    run = neptune.init_run(**quiet)
    backend = NeptuneVisBackend(init_kwargs=quiet)
    steps = Steps()

    def plain() -> None:
        step = steps.next()
        for name, value in SCALARS.items():
            run[name].append(value, step=step)

    def treadle() -> None:
        backend.add_scalars(SCALARS, step=steps.next())

    def close() -> None:
        run.stop()
        backend.close()

    return plain, treadle, close


def dvclive_pair(directory: str) -> tuple[Callable, Callable, Callable]:
    from dvclive import Live

    from treadle.visual.backends.dvclive_backend import DVCLiveVisBackend

    plain_dir = os.path.join(directory, "plain")
    live = Live(plain_dir, save_dvc_exp=False, dvcyaml=os.path.join(plain_dir, "dvc.yaml"))
    backend = DVCLiveVisBackend(os.path.join(directory, "treadle"))
    steps = Steps()

    def plain() -> None:
        live.step = steps.next()
        for name, value in SCALARS.items():
            live.log_metric(name, value)

    def treadle() -> None:
        backend.add_scalars(SCALARS, step=steps.next())

    def close() -> None:
        live.end()
        backend.close()

    return plain, treadle, close


PAIRS = {
    # tracker: (module, make_pair, share of --steps)
    "tensorboard": ("tensorboard", tensorboard_pair, 1.0),
    "aim": ("aim", aim_pair, 1.0),
    # An MLflow file store writes every metric to its own file: far slower per call.
    "mlflow": ("mlflow", mlflow_pair, 0.05),
    "wandb": ("wandb", wandb_pair, 1.0),
    "clearml": ("clearml", clearml_pair, 1.0),
    "neptune": ("neptune", neptune_pair, 1.0),
    "dvclive": ("dvclive", dvclive_pair, 1.0),
}


def offline_environment(directory: str) -> None:
    """Offline modes, and every tracker file (HOME included) under ``directory``."""
    config = os.path.join(directory, "clearml.conf")
    with open(config, "w") as file:  # in-process reporting: no 11 s wait at close
        file.write("sdk { development { report_use_subprocess: false } }\n")
    os.environ.update(
        HOME=os.path.join(directory, "home"),
        WANDB_MODE="offline",
        WANDB_SILENT="true",
        WANDB_CACHE_DIR=os.path.join(directory, "wandb_cache"),
        WANDB_CONFIG_DIR=os.path.join(directory, "wandb_config"),
        WANDB_DATA_DIR=os.path.join(directory, "wandb_data"),
        CLEARML_OFFLINE_MODE="1",
        CLEARML_CONFIG_FILE=config,
        CLEARML_CACHE_DIR=os.path.join(directory, "clearml_cache"),
        NEPTUNE_DATA_DIRECTORY=os.path.join(directory, "neptune"),
        DVC_NO_ANALYTICS="1",
        DVC_SITE_CACHE_DIR=os.path.join(directory, "dvc_site_cache"),
        MLFLOW_DISABLE_TELEMETRY="true",
        AIM_UI_TELEMETRY_ENABLED="0",
    )
    os.chdir(directory)  # dvclive looks for a repository from the cwd


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000, help="steps per repeat (MLflow: 5%%)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated trackers (default: all)")
    args = parser.parse_args()
    chosen = [name for name in args.only.split(",") if name] or list(PAIRS)

    print(f"{'tracker':<12} {'library (us/step)':>18} {'treadle (us/step)':>18} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as root:
        offline_environment(root)
        for tracker in chosen:
            module, make_pair, share = PAIRS[tracker]
            if importlib.util.find_spec(module) is None:
                print(f"{tracker:<12} not installed")
                continue
            directory = os.path.join(root, tracker)
            os.makedirs(directory)
            steps = max(10, int(args.steps * share))
            plain, treadle, close = make_pair(directory)
            plain(), treadle()  # first calls open files and import what they need
            library_s = treadle_s = float("inf")
            for _ in range(args.repeats):  # alternated: both see the same growing run
                library_s = min(library_s, per_call(plain, steps, 1))
                treadle_s = min(treadle_s, per_call(treadle, steps, 1))
            close()
            # Aim's storage objects flush when collected: collect them before the folder goes.
            del plain, treadle, close
            gc.collect()
            print(
                f"{tracker:<12} {library_s * 1e6:>18.1f} {treadle_s * 1e6:>18.1f} "
                f"{treadle_s / library_s:>6.2f}"
            )
        os.chdir(os.path.dirname(root))


if __name__ == "__main__":
    main()
