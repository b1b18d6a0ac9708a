"""Config.fromfile + to_dict on a Python config with a 4-level ``_base_`` chain, ~300 keys.

Prints treadle-config's median time; when MMEngine is importable, also MMEngine's on the same
files, checks both give the same dict, and prints the ratio. Every call reads all files again;
treadle reuses what parsing and compiling them gave while their text is the same (warm loads:
benchmarks/config_trees.py times first loads too). ``to_dict()`` is timed with ``fromfile``:
treadle makes a loaded config's ``ConfigDict`` only when it is first needed.

    hatch run python benchmarks/config_fromfile.py
    hatch run mmengine:bench-config
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import warnings


def write_chain(folder: str) -> str:
    """Four files, each the base of the next; returns the last one."""
    levels = []
    for level in range(4):
        lines = []
        if level:
            lines.append(f"_base_ = './level{level - 1}.py'")
        for block in range(10):
            name = f"block{block}"
            fields = ", ".join(f"f{i}={level * 100 + i}" for i in range(6))
            lines.append(
                f"{name} = dict(type='Block{block}', {fields},\n"
                f"    sub=dict(kind='s{level}', sizes=[{level}, {block}, 3], ratio={level}.5),\n"
                "    items=[dict(type='I', v=i) for i in range(3)])"
            )
        for i in range(27):
            lines.append(f"scalar_{level}_{i} = {'0.1' if i % 2 else repr('text')}")
        if level:
            lines.append(f"derived_{level} = _base_.block0.f0 + {level}")
        path = os.path.join(folder, f"level{level}.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        levels.append(path)
    return levels[-1]


def count_keys(value) -> int:
    if isinstance(value, dict):
        return sum(1 + count_keys(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(count_keys(v) for v in value)
    return 0


def loader(config_class):
    def load(path: str) -> dict:
        return config_class.fromfile(path).to_dict()

    return load


def median_time(load, path: str, runs: int) -> float:
    load(path)  # warm the imports
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        load(path)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()

    from treadle.config import Config

    with tempfile.TemporaryDirectory() as folder:
        path = write_chain(folder)
        ours = Config.fromfile(path).to_dict()
        print(f"config: 4-level _base_ chain, {count_keys(ours)} keys")
        treadle_s = median_time(loader(Config), path, args.runs)
        runs = f"(median of {args.runs})"
        print(f"treadle.config  fromfile+to_dict: {treadle_s * 1e3:7.2f} ms {runs}")
        try:
            from mmengine.config import Config as MMConfig
        except ImportError:
            print("mmengine is not installed: no baseline (hatch run mmengine:bench-config)")
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = MMConfig.fromfile(path).to_dict()
            if theirs != ours:
                raise SystemExit("MMEngine and treadle.config load different dicts")
            mm_s = median_time(loader(MMConfig), path, args.runs)
        print(f"mmengine.config fromfile+to_dict: {mm_s * 1e3:7.2f} ms {runs}")
        print(f"treadle.config is {mm_s / treadle_s:.1f}x faster (same dict)")


if __name__ == "__main__":
    main()
