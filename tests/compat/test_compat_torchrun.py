"""``torchrun --nproc-per-node 2 -m treadle.compat SCRIPT``: each worker runs the script under
the launcher, and mmengine.dist is treadle.dist on a real gloo group."""

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import sys
    import torch
    from mmengine.dist import all_reduce, get_rank, get_world_size, init_dist
    import treadle.dist

    init_dist("pytorch", backend="gloo")
    value = torch.tensor([get_rank() + 1.0])
    all_reduce(value)
    print(f"rank {get_rank()} of {get_world_size()} sum {value.item()} argv {sys.argv[1:]} "
          f"shared {get_rank is treadle.dist.get_rank}")
    # Leaving with the group alive can abort a worker in gloo's teardown (PyTorch, not treadle).
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()
    """
)


def test_two_workers_under_torchrun(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",  # a free port of its own
        "--nproc-per-node",
        "2",
        "-m",
        "treadle.compat",
        "train.py",
        "--launcher",
        "pytorch",
    ]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    for rank in (0, 1):
        assert (
            f"rank {rank} of 2 sum 3.0 argv ['--launcher', 'pytorch'] shared True" in result.stdout
        )
