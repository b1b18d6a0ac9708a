"""Every config mmpretrain 1.2.0 ships loads in treadle.config to what MMEngine 0.10.7 loads.

The wheel's ``.mim/configs`` (over 500 files): ``_base_`` chains, ``{{_base_.x}}``
substitutions, ``_delete_``, ``mmpretrain::`` bases... Each is loaded by both ``Config``
classes in this process (no launcher needed) and their ``to_dict()`` compared.
"""

from __future__ import annotations

import warnings

from downstream_runs import skip_without_toolbox, tools_dir

skip_without_toolbox()

from mmengine.config import Config as MMEngineConfig  # noqa: E402

from treadle.config import Config  # noqa: E402


def _plain(value):
    # Tuples and lists compare alike: MMEngine's dump/load turns some tuples into lists.
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def test_every_shipped_config_loads_to_the_same_dict():
    root = tools_dir().parent / "configs"
    files = sorted(
        path
        for path in root.rglob("*.py")
        if "_base_" not in path.parts and "__pycache__" not in path.parts
    )
    compared, differences = 0, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in files:
            try:
                theirs = _plain(MMEngineConfig.fromfile(str(path)).to_dict())
            except Exception:  # a few shipped configs do not load in MMEngine either
                continue
            try:
                ours = _plain(Config.fromfile(str(path)).to_dict())
            except Exception as error:
                differences[path.relative_to(root)] = f"{type(error).__name__}: {error}"
                continue
            compared += 1
            if ours != theirs:
                keys = sorted(k for k in {*ours, *theirs} if ours.get(k) != theirs.get(k))
                differences[path.relative_to(root)] = f"differs at {keys}"
    assert compared > 500, f"only {compared} of {len(files)} configs loaded in MMEngine"
    assert not differences, "\n".join(f"{path}: {why}" for path, why in differences.items())
