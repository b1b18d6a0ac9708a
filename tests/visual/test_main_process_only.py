"""Only rank 0 writes: a real 2-process gloo group logs through a Visualizer and a backend."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap

from treadle.visual.main_process import is_main_process, master_only

WORKER = textwrap.dedent(
    """
    import sys
    import numpy as np
    import torch.distributed as torch_dist
    from treadle.visual import LocalVisBackend, Visualizer

    root = sys.argv[1]
    torch_dist.init_process_group("gloo")
    rank = torch_dist.get_rank()
    # Each rank names its own directory, so anything rank 1 wrote would be found.
    vis = Visualizer(
        name=f"vis{rank}", vis_backends=[dict(type="LocalVisBackend")], save_dir=f"{root}/r{rank}"
    )
    vis.add_scalars({"loss": 1.0 + rank}, step=1)
    vis.add_image("img", np.zeros((4, 4, 3), dtype=np.uint8), step=1)
    vis.add_config({"rank": rank})
    direct = LocalVisBackend(save_dir=f"{root}/direct{rank}")
    direct.add_scalar("acc", 0.5, step=2)
    direct.close()
    vis.close()
    torch_dist.barrier()
    torch_dist.destroy_process_group()
    """
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_process_without_torch_imported_is_the_main_one():
    assert is_main_process()
    assert master_only(lambda x: x + 1)(1) == 2


def test_only_rank_zero_writes_in_a_gloo_group(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    port = str(free_port())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "OMPI_"))}
    processes = [
        subprocess.Popen(
            [sys.executable, str(script), str(tmp_path / "out")],
            env={
                **env,
                "RANK": str(rank),
                "WORLD_SIZE": "2",
                "LOCAL_RANK": str(rank),
                "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": port,
            },
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for rank in range(2)
    ]
    outputs = [process.communicate(timeout=120)[0] for process in processes]
    assert [p.returncode for p in processes] == [0, 0], "\n".join(outputs)

    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["direct0", "r0"]
    lines = (out / "r0" / "vis_data" / "scalars.json").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [{"loss": 1.0, "step": 1}]
    assert (out / "r0" / "vis_data" / "vis_image" / "img_1.png").is_file()
    assert "'rank': 0" in (out / "r0" / "vis_data" / "config.py").read_text()
    direct = (out / "direct0" / "scalars.json").read_text()
    assert json.loads(direct) == {"acc": 0.5, "step": 2}
