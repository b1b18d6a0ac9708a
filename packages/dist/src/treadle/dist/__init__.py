"""treadle.dist: distributed primitives that work the same with one process or thousands.

The API follows MMEngine 0.10's ``mmengine.dist``: ``from mmengine import dist`` becomes
``from treadle import dist``. Without an initialized process group every function answers for a
single process (rank 0, world size 1, collectives return their input), so user code needs no
``if distributed:`` branches.
"""

from .coalesced import all_reduce_dict, all_reduce_params
from .collectives import all_gather, all_reduce, barrier, broadcast, gather, sync_random_seed
from .device import cast_data_device, get_comm_device, get_data_device
from .info import (
    get_backend,
    get_default_group,
    get_dist_info,
    get_rank,
    get_world_size,
    is_distributed,
    is_main_process,
)
from .launch import infer_launcher, init_dist
from .local_group import get_local_group, get_local_rank, get_local_size, init_local_group
from .object_collectives import all_gather_object, broadcast_object_list, gather_object
from .results import collect_results, collect_results_cpu, collect_results_gpu
from .utils import master_only

__version__ = "0.1.1"

__all__ = [
    "__version__",
    "all_gather",
    "all_gather_object",
    "all_reduce",
    "all_reduce_dict",
    "all_reduce_params",
    "barrier",
    "broadcast",
    "broadcast_object_list",
    "cast_data_device",
    "collect_results",
    "collect_results_cpu",
    "collect_results_gpu",
    "gather",
    "gather_object",
    "get_backend",
    "get_comm_device",
    "get_data_device",
    "get_default_group",
    "get_dist_info",
    "get_local_group",
    "get_local_rank",
    "get_local_size",
    "get_rank",
    "get_world_size",
    "infer_launcher",
    "init_dist",
    "init_local_group",
    "is_distributed",
    "is_main_process",
    "master_only",
    "sync_random_seed",
]
