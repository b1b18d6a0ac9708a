"""Config.fromfile over whole config trees shaped like a toolbox's, MMEngine 0.10.7 beside treadle.

Three generated trees, each a few hundred configs over shared bases four levels deep
(``_base_/models|datasets|schedules`` and a runtime base, then a first config per algorithm, its
variants and their variants):

- ``classic``: ``.py`` configs with ``_base_ = [...]``, ``_delete_``, ``{{_base_.x}}``,
  ``_base_.x`` expressions, lists of dicts, ``{{fileBasenameNoExtension}}`` and an env variable;
- ``pure``: pure-Python configs, ``with read_base():`` chains and lazily imported names from a
  small generated package (and real stdlib imports);
- ``data``: ``.yaml`` and ``.json`` configs over ``.yaml`` bases.

For each tree and library a fresh subprocess loads every non-base config once,
``Config.fromfile(path).to_dict()`` (cold: the first pass of a process), and then again (warm:
the second pass in the same process); ``to_dict()`` is part of it because treadle makes a loaded
config's ``ConfigDict`` only when it is first needed. The figures are the times of the loading
loops only (the library's own import excluded, the modules it imports
on first use included), as wall-clock time and as the process's CPU time (``*_cpu``: on a
shared machine the wall clock of a sub-second pass swings with the other processes, CPU time
much less). Before timing, every config is loaded by both libraries here and their
``cfg.to_dict()`` (and env variables) compared.

    hatch run mmengine:python benchmarks/config_trees.py [--repeats 3] [--tree pure]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

ENV_VAR = "TREADLE_BENCH_DATA_ROOT"
ALGORITHMS = 20
VARIANTS = 6  # second-level configs per algorithm
SUB_VARIANTS = 8  # third-level configs per algorithm (each over one variant)
MODELS, DATASETS, SCHEDULES = 8, 4, 4


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


# -- classic (.py with _base_) -------------------------------------------------------------------


def _model_py(m: int, lazy: bool) -> str:
    t = (lambda name: name) if lazy else (lambda name: repr(name))
    imports = (
        "from benchpkg.models import FPN, ResNet, RetinaHead, RetinaNet\n"
        "from benchpkg.losses import FocalLoss, L1Loss\n\n"
        if lazy
        else ""
    )
    return imports + (
        f"model = dict(\n"
        f"    type={t('RetinaNet')},\n"
        f"    data_preprocessor=dict(type='DetDataPreprocessor', mean=[123.675, 116.28, 103.53],\n"
        f"        std=[58.395, 57.12, 57.375], bgr_to_rgb=True, pad_size_divisor=32),\n"
        f"    backbone=dict(type={t('ResNet')}, depth=50, num_stages=4, out_indices=(0, 1, 2, 3),\n"
        f"        frozen_stages={m % 3}, norm_cfg=dict(type='BN', requires_grad=True),\n"
        f"        norm_eval=True, style='pytorch',\n"
        f"        init_cfg=dict(type='Pretrained', checkpoint='torchvision://resnet50')),\n"
        f"    neck=dict(type={t('FPN')}, in_channels=[256, 512, 1024, 2048], out_channels=256,\n"
        f"        start_level=1, add_extra_convs='on_input', num_outs=5),\n"
        f"    bbox_head=dict(type={t('RetinaHead')}, num_classes=80, in_channels=256,\n"
        f"        stacked_convs={4 + m % 2}, feat_channels=256,\n"
        f"        anchor_generator=dict(type='AnchorGenerator', octave_base_scale=4,\n"
        f"            scales_per_octave=3, ratios=[0.5, 1.0, 2.0], strides=[8, 16, 32, 64, 128]),\n"
        f"        bbox_coder=dict(type='DeltaXYWHBBoxCoder', target_means=[.0, .0, .0, .0],\n"
        f"            target_stds=[1.0, 1.0, 1.0, 1.0]),\n"
        f"        loss_cls=dict(type={t('FocalLoss')}, use_sigmoid=True, gamma=2.0, alpha=0.25,\n"
        f"            loss_weight=1.0),\n"
        f"        loss_bbox=dict(type={t('L1Loss')}, loss_weight=1.0)),\n"
        f"    train_cfg=dict(assigner=dict(type='MaxIoUAssigner', pos_iou_thr=0.5,\n"
        f"            neg_iou_thr=0.4, min_pos_iou=0, ignore_iof_thr=-1),\n"
        f"        sampler=dict(type='PseudoSampler'), allowed_border=-1, pos_weight=-1,\n"
        f"        debug=False),\n"
        f"    test_cfg=dict(nms_pre=1000, min_bbox_size=0, score_thr=0.05,\n"
        f"        nms=dict(type='nms', iou_threshold=0.{5 + m % 2}), max_per_img=100))\n"
    )


def _dataset_py(d: int, lazy: bool) -> str:
    t = (lambda name: name) if lazy else (lambda name: repr(name))
    imports = (
        "from benchpkg.datasets import CocoDataset, CocoMetric, DefaultSampler\n"
        "from benchpkg.transforms import LoadAnnotations, LoadImageFromFile, PackDetInputs, "
        "RandomFlip, Resize\n\n"
        if lazy
        else ""
    )
    root = "'data/coco/'"
    return imports + (
        f"dataset_type = {t('CocoDataset')}\n"
        f"data_root = {root}\n"
        "backend_args = None\n"
        f"train_pipeline = [\n"
        f"    dict(type={t('LoadImageFromFile')}, backend_args=backend_args),\n"
        f"    dict(type={t('LoadAnnotations')}, with_bbox=True),\n"
        f"    dict(type={t('Resize')}, scale=(1333, {800 - d * 32}), keep_ratio=True),\n"
        f"    dict(type={t('RandomFlip')}, prob=0.5),\n"
        f"    dict(type={t('PackDetInputs')}),\n"
        "]\n"
        f"test_pipeline = [\n"
        f"    dict(type={t('LoadImageFromFile')}, backend_args=backend_args),\n"
        f"    dict(type={t('Resize')}, scale=(1333, 800), keep_ratio=True),\n"
        f"    dict(type={t('LoadAnnotations')}, with_bbox=True),\n"
        f"    dict(type={t('PackDetInputs')}, meta_keys=('img_id', 'img_path', 'ori_shape',\n"
        "        'img_shape', 'scale_factor')),\n"
        "]\n"
        f"train_dataloader = dict(batch_size=2, num_workers=2, persistent_workers=True,\n"
        f"    sampler=dict(type={t('DefaultSampler')}, shuffle=True),\n"
        "    batch_sampler=dict(type='AspectRatioBatchSampler'),\n"
        "    dataset=dict(type=dataset_type, data_root=data_root,\n"
        f"        ann_file='annotations/instances_train{d}.json', data_prefix=dict(img='train/'),\n"
        "        filter_cfg=dict(filter_empty_gt=True, min_size=32), pipeline=train_pipeline,\n"
        "        backend_args=backend_args))\n"
        f"val_dataloader = dict(batch_size=1, num_workers=2, persistent_workers=True,\n"
        f"    drop_last=False, sampler=dict(type={t('DefaultSampler')}, shuffle=False),\n"
        "    dataset=dict(type=dataset_type, data_root=data_root,\n"
        f"        ann_file='annotations/instances_val{d}.json', data_prefix=dict(img='val/'),\n"
        "        test_mode=True, pipeline=test_pipeline, backend_args=backend_args))\n"
        "test_dataloader = val_dataloader\n"
        f"val_evaluator = dict(type={t('CocoMetric')},\n"
        f"    ann_file=data_root + 'annotations/instances_val{d}.json', metric='bbox',\n"
        "    format_only=False, backend_args=backend_args)\n"
        "test_evaluator = val_evaluator\n"
    )


def _schedule_py(s: int, lazy: bool) -> str:
    imports = "from benchpkg.optim import SGD\n\n" if lazy else ""
    sgd = "SGD" if lazy else "'SGD'"
    epochs = 12 * (s + 1)
    return imports + (
        f"train_cfg = dict(type='EpochBasedTrainLoop', max_epochs={epochs}, val_interval=1)\n"
        "val_cfg = dict(type='ValLoop')\n"
        "test_cfg = dict(type='TestLoop')\n"
        "param_scheduler = [\n"
        "    dict(type='LinearLR', start_factor=0.001, by_epoch=False, begin=0, end=500),\n"
        f"    dict(type='MultiStepLR', begin=0, end={epochs}, by_epoch=True,\n"
        f"        milestones=[{epochs * 2 // 3}, {epochs * 11 // 12}], gamma=0.1),\n"
        "]\n"
        f"optim_wrapper = dict(type='OptimWrapper',\n"
        f"    optimizer=dict(type={sgd}, lr=0.02, momentum=0.9, weight_decay=0.0001))\n"
        "auto_scale_lr = dict(enable=False, base_batch_size=16)\n"
    )


RUNTIME_PY = """default_scope = 'mmdet'
default_hooks = dict(
    timer=dict(type='IterTimerHook'),
    logger=dict(type='LoggerHook', interval=50),
    param_scheduler=dict(type='ParamSchedulerHook'),
    checkpoint=dict(type='CheckpointHook', interval=1),
    sampler_seed=dict(type='DistSamplerSeedHook'),
    visualization=dict(type='DetVisualizationHook'))
env_cfg = dict(cudnn_benchmark=False, mp_cfg=dict(mp_start_method='fork', opencv_num_threads=0),
    dist_cfg=dict(backend='nccl'))
vis_backends = [dict(type='LocalVisBackend')]
visualizer = dict(type='DetLocalVisualizer', vis_backends=vis_backends, name='visualizer')
log_processor = dict(type='LogProcessor', window_size=50, by_epoch=True)
log_level = 'INFO'
load_from = None
resume = False
"""


def _bases_list(a: int) -> str:
    return (
        f"['../_base_/models/model{a % MODELS}.py', '../_base_/datasets/coco{a % DATASETS}.py',\n"
        f"    '../_base_/schedules/schedule{a % SCHEDULES}.py', '../_base_/default_runtime.py']"
    )


def write_classic(root: str) -> None:
    base = os.path.join(root, "_base_")
    for m in range(MODELS):
        _write(f"{base}/models/model{m}.py", _model_py(m, lazy=False))
    for d in range(DATASETS):
        _write(f"{base}/datasets/coco{d}.py", _dataset_py(d, lazy=False))
    for s in range(SCHEDULES):
        _write(f"{base}/schedules/schedule{s}.py", _schedule_py(s, lazy=False))
    _write(f"{base}/default_runtime.py", RUNTIME_PY)
    for a in range(ALGORITHMS):
        folder = os.path.join(root, f"algo{a}")
        first = f"algo{a}_r50_fpn_1x_coco"
        _write(
            f"{folder}/{first}.py",
            f"_base_ = {_bases_list(a)}\n"
            "optim_wrapper = dict(optimizer=dict(lr=0.01))\n"
            f"model = dict(bbox_head=dict(num_classes={20 + a}))\n"
            "work_dir = './work_dirs/{{ fileBasenameNoExtension }}'\n"
            # MMEngine logs each use of an env variable: one algorithm's configs, not all.
            + (f"data_root = '{{{{${ENV_VAR}:data/coco/}}}}'\n" if a == 0 else ""),
        )
        for v in range(VARIANTS):
            _write(
                f"{folder}/algo{a}_v{v}.py",
                f"_base_ = './{first}.py'\n"
                f"model = dict(backbone=dict(depth={101 if v % 2 else 50},\n"
                "    init_cfg=dict(type='Pretrained', checkpoint='torchvision://resnet101')),\n"
                "    neck=dict(out_channels=_base_.model.neck.out_channels * 2))\n"
                "train_pipeline = [\n"
                "    dict(type='LoadImageFromFile', backend_args={{_base_.backend_args}}),\n"
                "    dict(type='LoadAnnotations', with_bbox=True),\n"
                f"    dict(type='RandomResize', scale=[(1333, 640), (1333, {800 + v})],\n"
                "        keep_ratio=True),\n"
                "    dict(type='RandomFlip', prob=0.5),\n"
                "    dict(type='PackDetInputs'),\n"
                "]\n"
                "train_dataloader = dict(dataset=dict(pipeline=train_pipeline))\n"
                "test_pipeline = {{_base_.test_pipeline}}\n"
                "optim_wrapper = dict(_delete_=True, type='AmpOptimWrapper',\n"
                f"    optimizer=dict(type='AdamW', lr=0.000{v + 1}, weight_decay=0.05))\n"
                f"max_epochs = {24 + v}\n"
                "train_cfg = dict(max_epochs=max_epochs)\n"
                "param_scheduler = [\n"
                "    dict(type='LinearLR', start_factor=0.001, by_epoch=False, begin=0, end=500),\n"
                "    dict(type='MultiStepLR', begin=0, end=max_epochs, by_epoch=True,\n"
                "        milestones=[16, 22], gamma=0.1),\n"
                "]\n",
            )
        for w in range(SUB_VARIANTS):
            _write(
                f"{folder}/algo{a}_v{w % VARIANTS}_w{w}.py",
                f"_base_ = './algo{a}_v{w % VARIANTS}.py'\n"
                "model = dict(bbox_head=dict(num_classes={{_base_.model.bbox_head.num_classes}},\n"
                f"    loss_cls=dict(_delete_=True, type='VarifocalLoss', alpha={0.5 + w / 100})))\n"
                f"train_dataloader = dict(batch_size={2 + w % 3})\n"
                "auto_scale_lr = dict(base_batch_size=_base_.train_dataloader.batch_size * 8)\n",
            )


# -- pure-Python (read_base() and lazy imports) --------------------------------------------------

BENCHPKG = {
    "__init__.py": "",
    "models.py": "class RetinaNet: pass\nclass ResNet: pass\nclass FPN: pass\n"
    "class RetinaHead: pass\nclass PAFPN: pass\n",
    "losses.py": "class FocalLoss: pass\nclass L1Loss: pass\nclass VarifocalLoss: pass\n",
    "datasets.py": "class CocoDataset: pass\nclass CocoMetric: pass\nclass DefaultSampler: pass\n",
    "transforms.py": "class LoadImageFromFile: pass\nclass LoadAnnotations: pass\n"
    "class Resize: pass\nclass RandomFlip: pass\nclass PackDetInputs: pass\n"
    "class RandomResize: pass\n",
    "optim.py": "class SGD: pass\nclass AdamW: pass\n",
}


def write_pure(root: str, package_root: str) -> None:
    for name, text in BENCHPKG.items():
        _write(os.path.join(package_root, "benchpkg", name), text)
    base = os.path.join(root, "_base_")
    _write(f"{base}/__init__.py", "")
    for m in range(MODELS):
        _write(f"{base}/models/model{m}.py", _model_py(m, lazy=True))
    for d in range(DATASETS):
        _write(f"{base}/datasets/coco{d}.py", _dataset_py(d, lazy=True))
    for s in range(SCHEDULES):
        _write(f"{base}/schedules/schedule{s}.py", _schedule_py(s, lazy=True))
    _write(f"{base}/default_runtime.py", "from collections import OrderedDict\n\n" + RUNTIME_PY)
    for a in range(ALGORITHMS):
        folder = os.path.join(root, f"algo{a}")
        first = f"algo{a}_r50_fpn_1x_coco"
        _write(
            f"{folder}/{first}.py",
            "from mmengine.config import read_base\n\n"
            "with read_base():\n"
            f"    from .._base_.models.model{a % MODELS} import *\n"
            f"    from .._base_.datasets.coco{a % DATASETS} import *\n"
            f"    from .._base_.schedules.schedule{a % SCHEDULES} import *\n"
            "    from .._base_.default_runtime import *\n\n"
            "from benchpkg.optim import SGD\n\n"
            "optim_wrapper.optimizer.lr = 0.01\n"
            f"model.bbox_head.num_classes = {20 + a}\n"
            f"work_dir = './work_dirs/{first}'\n",
        )
        for v in range(VARIANTS):
            _write(
                f"{folder}/algo{a}_v{v}.py",
                "from mmengine.config import read_base\n\n"
                "with read_base():\n"
                f"    from .{first} import *\n\n"
                "from benchpkg.optim import AdamW\n"
                "from benchpkg.transforms import (LoadAnnotations, LoadImageFromFile,\n"
                "    PackDetInputs, RandomFlip, RandomResize)\n\n"
                f"model.backbone.update(dict(depth={101 if v % 2 else 50},\n"
                "    init_cfg=dict(type='Pretrained', checkpoint='torchvision://resnet101')))\n"
                "model.neck.out_channels = model.neck.out_channels * 2\n"
                "train_pipeline = [\n"
                "    dict(type=LoadImageFromFile, backend_args=backend_args),\n"
                "    dict(type=LoadAnnotations, with_bbox=True),\n"
                f"    dict(type=RandomResize, scale=[(1333, 640), (1333, {800 + v})],\n"
                "        keep_ratio=True),\n"
                "    dict(type=RandomFlip, prob=0.5),\n"
                "    dict(type=PackDetInputs),\n"
                "]\n"
                "train_dataloader.dataset.pipeline = train_pipeline\n"
                "optim_wrapper = dict(type='AmpOptimWrapper',\n"
                f"    optimizer=dict(type=AdamW, lr=0.000{v + 1}, weight_decay=0.05))\n"
                f"max_epochs = {24 + v}\n"
                "train_cfg.max_epochs = max_epochs\n"
                "param_scheduler = [\n"
                "    dict(type='LinearLR', start_factor=0.001, by_epoch=False, begin=0, end=500),\n"
                "    dict(type='MultiStepLR', begin=0, end=max_epochs, by_epoch=True,\n"
                "        milestones=[16, 22], gamma=0.1),\n"
                "]\n",
            )
        for w in range(SUB_VARIANTS):
            _write(
                f"{folder}/algo{a}_v{w % VARIANTS}_w{w}.py",
                "from mmengine.config import read_base\n\n"
                "with read_base():\n"
                f"    from .algo{a}_v{w % VARIANTS} import *\n\n"
                "from benchpkg.losses import VarifocalLoss\n\n"
                f"model.bbox_head.loss_cls = dict(type=VarifocalLoss, alpha={0.5 + w / 100})\n"
                f"train_dataloader.batch_size = {2 + w % 3}\n"
                "auto_scale_lr.base_batch_size = train_dataloader.batch_size * 8\n",
            )


# -- data (.yaml and .json) ----------------------------------------------------------------------


def write_data(root: str) -> None:
    import yaml

    base = os.path.join(root, "_base_")
    namespaces: list[dict] = []
    for name, text in (
        *((f"models/model{m}", _model_py(m, lazy=False)) for m in range(MODELS)),
        *((f"datasets/coco{d}", _dataset_py(d, lazy=False)) for d in range(DATASETS)),
        *((f"schedules/schedule{s}", _schedule_py(s, lazy=False)) for s in range(SCHEDULES)),
        ("default_runtime", RUNTIME_PY),
    ):
        namespace: dict = {}
        exec(text, namespace)
        values = {k: v for k, v in namespace.items() if not k.startswith("__")}
        namespaces.append(values)
        _write(f"{base}/{name}.yaml", yaml.safe_dump(json.loads(json.dumps(values))))
    for a in range(ALGORITHMS):
        folder = os.path.join(root, f"algo{a}")
        first = f"algo{a}_r50_fpn_1x_coco"
        bases = _bases_list(a).replace(".py", ".yaml").replace("\n   ", "")
        _write(
            f"{folder}/{first}.yaml",
            f"_base_: {bases}\n"
            "optim_wrapper: {optimizer: {lr: 0.01}}\n"
            f"model: {{bbox_head: {{num_classes: {20 + a}}}}}\n"
            "work_dir: './work_dirs/{{ fileBasenameNoExtension }}'\n",
        )
        for v in range(VARIANTS):
            variant = {
                "_base_": f"./{first}.yaml",
                "model": {"backbone": {"depth": 101 if v % 2 else 50}},
                "train_pipeline": [
                    {"type": "LoadImageFromFile", "backend_args": None},
                    {"type": "LoadAnnotations", "with_bbox": True},
                    {"type": "RandomResize", "scale": [[1333, 640], [1333, 800 + v]]},
                    {"type": "PackDetInputs"},
                ],
                "optim_wrapper": {
                    "_delete_": True,
                    "type": "AmpOptimWrapper",
                    "optimizer": {"type": "AdamW", "lr": 0.0001 * (v + 1)},
                },
                "train_cfg": {"max_epochs": 24 + v},
            }
            _write(f"{folder}/algo{a}_v{v}.json", json.dumps(variant, indent=2))
        for w in range(SUB_VARIANTS):
            _write(
                f"{folder}/algo{a}_v{w % VARIANTS}_w{w}.yaml",
                f"_base_: ./algo{a}_v{w % VARIANTS}.json\n"
                "model:\n  bbox_head:\n    num_classes: {{_base_.model.bbox_head.num_classes}}\n"
                f"    loss_cls: {{_delete_: true, type: VarifocalLoss, alpha: {0.5 + w / 100}}}\n"
                f"train_dataloader: {{batch_size: {2 + w % 3}}}\n",
            )


TREES = {"classic": write_classic, "pure": write_pure, "data": write_data}


def tree_configs(root: str) -> list[str]:
    """Every config of a tree that is not a base, in a fixed order."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "_base_")
        found.extend(
            os.path.join(folder, f)
            for f in sorted(files)
            if f.endswith((".py", ".json", ".yaml")) and f != "__init__.py"
        )
    return sorted(found)


def _loader(library: str):
    if library == "mmengine":
        from mmengine.config import Config
    else:
        from treadle.config import Config

    def load(path: str) -> dict:
        return Config.fromfile(path).to_dict()

    return load


def _child(library: str, root: str) -> None:
    """In a fresh process: time two passes over the tree, print them as JSON."""
    warnings.simplefilter("ignore")
    fromfile = _loader(library)
    files = tree_configs(root)
    passes, cpu = [], []
    for _ in range(2):
        start, start_cpu = time.perf_counter(), time.process_time()
        for path in files:
            fromfile(path)
        passes.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    times = {"cold": passes[0], "warm": passes[1], "cold_cpu": cpu[0], "warm_cpu": cpu[1]}
    print(json.dumps({**times, "configs": len(files)}))


def _check_same_dicts(root: str) -> int:
    from mmengine.config import Config as MMConfig

    from treadle.config import Config

    files = tree_configs(root)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in files:
            theirs, ours = MMConfig.fromfile(path), Config.fromfile(path)
            if theirs.to_dict() != ours.to_dict():
                raise SystemExit(f"MMEngine and treadle.config load different dicts: {path}")
            if dict(theirs.env_variables) != dict(ours.env_variables):
                raise SystemExit(f"different env_variables: {path}")
    return len(files)


def _time_in_subprocess(library: str, root: str, env: dict[str, str]) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", library, root],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


# Wall-clock time of each pass, then the process's CPU time over the same pass: on a shared
# machine the wall clock of a short pass swings with the other processes' load; CPU time less.
KEYS = ("cold", "warm", "cold_cpu", "warm_cpu")


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):5.1f}x ({min(values):.1f}-{max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="subprocess pairs per tree")
    parser.add_argument("--tree", choices=sorted(TREES), action="append", help="default: all")
    parser.add_argument("--child", nargs=2, metavar=("LIBRARY", "ROOT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    with tempfile.TemporaryDirectory() as folder:
        package_root = os.path.join(folder, "site")
        env = dict(os.environ)
        env[ENV_VAR] = "/data/coco/"
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
        os.environ[ENV_VAR] = env[ENV_VAR]
        sys.path.insert(0, package_root)
        for name in args.tree or list(TREES):
            root = os.path.join(folder, name, "configs")
            if name == "pure":
                write_pure(root, package_root)
            else:
                TREES[name](root)
            count = _check_same_dicts(root)
            rows: dict[str, dict[str, list[float]]] = {"mmengine": {}, "treadle": {}}
            for _ in range(args.repeats):
                for library in rows:  # interleaved: the host's load hits both alike
                    result = _time_in_subprocess(library, root, env)
                    for key in KEYS:
                        rows[library].setdefault(key, []).append(result[key])
            print(f"tree {name}: {count} configs, same dicts; {args.repeats} subprocess pairs")
            for key in KEYS:
                mm, ours = rows["mmengine"][key], rows["treadle"][key]
                ratios = [m / t for m, t in zip(mm, ours, strict=True)]
                print(
                    f"  {key:8s}: mmengine {statistics.median(mm) * 1e3:7.0f} ms  "
                    f"treadle {statistics.median(ours) * 1e3:6.0f} ms  "
                    f"ratio {_spread(ratios)}"
                )
            sys.stdout.flush()


if __name__ == "__main__":
    main()
