"""One rank of a test process group: initialize with treadle.dist.init_dist, then run every
``scenario_*`` function of a scenario file and record what each returned or raised.

    python gloo_rank_runner.py SCENARIOS.py OUT_DIR LAUNCHER [INIT_KWARGS_JSON]

INIT_KWARGS_JSON: init_dist's keyword arguments; backend defaults to gloo.

Results go to OUT_DIR/rank<RANK>.pkl, rewritten after each scenario, so a group that hangs
still reports the scenarios it finished: {name: ("ok", value) | ("error", traceback)}. The
launcher's environment variables are set by whoever started the process (the tests, torchrun,
or a stand-in for srun/mpirun).
"""

import importlib.util
import inspect
import json
import os
import pickle
import sys
import traceback

import treadle.dist as dist


def load_scenarios(path):
    # Scenario files import helpers that sit next to them (tests/dist/workers/parity_common.py).
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location("scenarios", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    functions = [
        value
        for name, value in vars(module).items()
        if name.startswith("scenario_") and inspect.isfunction(value)
    ]
    return sorted(functions, key=lambda function: function.__code__.co_firstlineno)


def main():
    scenarios_path, out_dir, launcher = sys.argv[1:4]
    init_kwargs = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
    backend = init_kwargs.pop("backend", "gloo")
    results = {}
    try:
        dist.init_dist(launcher, backend=backend, timeout=60, **init_kwargs)
    except Exception:
        results["init_dist"] = ("error", traceback.format_exc())
        launcher_ranks = ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK")
        out_name = next((os.environ[name] for name in launcher_ranks if name in os.environ), "")
        with open(os.path.join(out_dir, f"rank{out_name}.pkl"), "wb") as file:
            pickle.dump(results, file)
        raise
    rank = dist.get_rank()
    context = {"rank": rank, "world_size": dist.get_world_size(), "out_dir": out_dir}
    results["init_dist"] = ("ok", None)
    for scenario in load_scenarios(scenarios_path):
        try:
            results[scenario.__name__] = ("ok", scenario(context))
        except Exception:
            results[scenario.__name__] = ("error", traceback.format_exc())
        with open(os.path.join(out_dir, f"rank{rank}.pkl"), "wb") as file:
            pickle.dump(results, file)
    dist.barrier()
    import torch.distributed

    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
