"""Config.fromfile + to_dict over real toolboxes' config trees, MMEngine 0.10.7 beside treadle.

The generated trees of ``config_trees.py`` are our own making; real trees disagree with them
(deeper ``_base_`` chains, long lists of dicts, pure-Python configs with hundreds of lazy
imports). This benchmark takes the trees that the toolboxes ship in their wheels on the package
registry, installs each wheel with ``--no-deps`` into a scratch site folder (so that
``mmdet::`` bases and ``read_base()`` imports of ``opencompass.configs`` resolve the way they
do for a user), and races the two libraries on every config of each tree:

1. Check (untimed): a child process per library loads every config (``_base_`` folders and
   ``__init__.py`` left out) and writes a canonical form of ``to_dict()``; the configs that load
   in both must give identical dicts (a difference stops the benchmark). Configs that fail in
   both (a toolbox's ``custom_imports`` of a package not installed here) are counted and left out;
   a config that loads in one library only is listed.
2. Time: for each tree, fresh processes, interleaved (MMEngine, treadle, MMEngine, ...), each
   loading every checked config once, ``Config.fromfile(path).to_dict()``, cold (the first pass
   of a process: what a user's script and a config-listing tool see). Each child measures its
   loop (the library's own import excluded) as the process's CPU time and as wall-clock time;
   the table gives medians of both and the median of the per-pair ratios MMEngine ÷ treadle.
   CPU time is the figure to read on a shared machine: other processes on the same cores
   stretch the wall clock of both libraries by whatever share they take at that moment.

``--baseline SRC`` times a second treadle too, its ``treadle.config`` taken from ``SRC`` (a copy
of ``packages/config/src`` from before a change), in the same interleaved rounds, so that a
change is measured before and after under the same conditions (its dicts are checked as well).

    hatch run mmengine:python benchmarks/config_real_trees.py            # every tree, 3 rounds
    hatch run mmengine:python benchmarks/config_real_trees.py --tree mmdet --tree xtuner
    hatch run mmengine:python benchmarks/config_real_trees.py --baseline /tmp/before/src

Wheels are kept in ``~/.cache/treadle/bench-wheels`` (``--wheels``). A wheel that cannot be
downloaded (no network to the registry) is named, with pip's reason, and the other trees run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

#: tree -> (requirement, its configs folder inside the installed package, kind)
TREES: dict[str, tuple[str, str, str]] = {
    "mmseg": ("mmsegmentation==1.2.2", "mmseg/.mim/configs", "classic"),
    "mmocr": ("mmocr==1.0.1", "mmocr/.mim/configs", "classic"),
    "mmyolo": ("mmyolo==0.6.0", "mmyolo/.mim/configs", "classic"),
    "mmdet": ("mmdet==3.3.0", "mmdet/.mim/configs", "classic"),
    "mmpretrain": ("mmpretrain==1.2.0", "mmpretrain/.mim/configs", "classic"),
    "mmdet3d": ("mmdet3d==1.4.0", "mmdet3d/.mim/configs", "classic"),
    "mmagic": ("mmagic==1.2.0", "mmagic/.mim/configs", "classic"),
    "mmaction2": ("mmaction2==1.2.0", "mmaction/.mim/configs", "classic"),
    "mmpose": ("mmpose==1.3.2", "mmpose/.mim/configs", "classic"),
    "opencompass": ("opencompass==0.5.4", "opencompass/configs", "pure-Python"),
    "xtuner": ("xtuner==0.2.0", "xtuner/configs", "pure-Python"),
}
DEFAULT_WHEELS = pathlib.Path.home() / ".cache" / "treadle" / "bench-wheels"


# -- getting the trees ---------------------------------------------------------------------------


def fetch_wheel(requirement: str, wheels: pathlib.Path) -> tuple[pathlib.Path | None, str]:
    """The wheel of ``requirement`` (downloaded once into ``wheels``), or None and pip's reason."""
    name, _, version = requirement.partition("==")
    pattern = f"{name.replace('-', '_')}-{version}-*.whl"
    found = sorted(wheels.glob(pattern))
    if found:
        return found[0], ""
    wheels.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "-q",
            requirement,
            "-d",
            str(wheels),
        ],
        capture_output=True,
        text=True,
    )
    found = sorted(wheels.glob(pattern))
    if found:
        return found[0], ""
    lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    return None, lines[-1] if lines else f"pip exited {done.returncode}"


PIP_INSTALL = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile"]


def install_wheel(wheel: pathlib.Path, site: pathlib.Path) -> None:
    subprocess.run(
        [*PIP_INSTALL, "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
    )


def tree_configs(root: pathlib.Path) -> list[str]:
    """Every config of a tree: its ``.py`` files outside ``_base_`` folders."""
    files = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).parts
        if "_base_" in parts or path.name == "__init__.py":
            continue
        files.append(str(path))
    return files


# -- children ------------------------------------------------------------------------------------


def _config_class(library: str):
    if library == "mmengine":
        from mmengine.config import Config
    else:
        from treadle.config import Config
    return Config


def canonical(value: object) -> object:
    """A JSON form of a ``to_dict()`` that is the same for both libraries' equal values."""
    if isinstance(value, dict):
        return {"dict": sorted(([str(k), canonical(v)] for k, v in value.items()), key=str)}
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [canonical(v) for v in value]]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return repr(value) if math.isnan(value) or math.isinf(value) else value
    kind = type(value).__name__
    if kind == "LazyObject":  # both libraries keep the module and the imported name
        return ["LazyObject", str(value._module), value._imported]
    if kind == "LazyAttr":
        return ["LazyAttr", str(value)]
    if isinstance(value, type) or callable(value):
        qualified = f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', '')}"
        return ["callable", qualified]
    return ["object", kind, repr(value)]


def child_check(library: str, listing: str, out: str) -> None:
    warnings.simplefilter("ignore")
    config = _config_class(library)
    results = {}
    for path in json.loads(pathlib.Path(listing).read_text()):
        try:
            results[path] = {"dict": canonical(config.fromfile(path).to_dict())}
        except BaseException as error:  # a config's own SystemExit too
            results[path] = {"error": f"{type(error).__name__}: {str(error)[:200]}"}
    pathlib.Path(out).write_text(json.dumps(results))


def child_time(library: str, listing: str) -> None:
    warnings.simplefilter("ignore")
    config = _config_class(library)
    files = json.loads(pathlib.Path(listing).read_text())
    start, start_cpu = time.perf_counter(), time.process_time()
    for path in files:
        config.fromfile(path).to_dict()
    cpu = time.process_time() - start_cpu
    wall = time.perf_counter() - start
    print(json.dumps({"seconds": wall, "cpu": cpu, "configs": len(files)}))


def _library_env(library: str, env: dict[str, str], baseline: str | None) -> dict[str, str]:
    """The environment of a child: ``treadle-baseline`` finds treadle.config in ``baseline``
    first (a namespace package's portion on PYTHONPATH comes before the editable install's)."""
    if library != BASELINE:
        return env
    changed = dict(env)
    changed["PYTHONPATH"] = os.pathsep.join(filter(None, [baseline, env.get("PYTHONPATH")]))
    return changed


BASELINE = "treadle-baseline"


def _run_child(args: list[str], env: dict[str, str]) -> str:
    library = "treadle" if args[1] == BASELINE else args[1]
    done = subprocess.run(
        [sys.executable, __file__, args[0], library, *args[2:]],
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode != 0:
        raise SystemExit(f"child {args[:2]} failed:\n{done.stderr[-3000:]}")
    return done.stdout


# -- the race ------------------------------------------------------------------------------------


def check_tree(
    files: list[str], scratch: pathlib.Path, env: dict[str, str], libraries: list[str], baseline
) -> tuple[list, dict]:
    """The configs that load in both libraries to identical dicts, and the counts of the rest
    (a baseline treadle must give MMEngine's dicts as well)."""
    listing = scratch / "all.json"
    listing.write_text(json.dumps(files))
    results = {}
    for library in libraries:
        out = scratch / f"{library}.json"
        child_env = _library_env(library, env, baseline)
        _run_child(["--child-check", library, str(listing), str(out)], child_env)
        results[library] = json.loads(out.read_text())
    same, both_fail, one_side, different = [], [], [], []
    for path in files:
        theirs = results["mmengine"][path]
        for library in libraries[1:]:
            ours = results[library][path]
            if "error" in theirs and "error" in ours:
                both_fail.append(path)
            elif "error" in theirs or "error" in ours:
                one_side.append((f"{path} [{library}]", theirs.get("error"), ours.get("error")))
            elif theirs["dict"] != ours["dict"]:
                different.append(f"{path} [{library}]")
            else:
                continue
            break
        else:
            same.append(path)
    return same, {"both_fail": both_fail, "one_side": one_side, "different": different}


def time_tree(
    files: list[str],
    scratch: pathlib.Path,
    env: dict[str, str],
    repeats: int,
    libraries: list[str],
    baseline: str | None,
) -> dict[str, dict[str, list[float]]]:
    """Per library, the ``wall`` and ``cpu`` seconds of each round."""
    listing = scratch / "checked.json"
    listing.write_text(json.dumps(files))
    times = {library: {"wall": [], "cpu": []} for library in libraries}
    for _ in range(repeats):
        for library in libraries:  # interleaved: the host's load hits each alike
            child_env = _library_env(library, env, baseline)
            out = _run_child(["--child-time", library, str(listing)], child_env)
            measured = json.loads(out.strip().splitlines()[-1])
            times[library]["wall"].append(measured["seconds"])
            times[library]["cpu"].append(measured["cpu"])
    return times


def _print_one_side(name: str, one_side: list[tuple[str, str | None, str | None]]) -> None:
    """The configs that load in one library only (left out of the timing): how many, and the
    first few with each library's error."""
    if not one_side:
        return
    print(f"  {name}: {len(one_side)} config(s) load in one library only (left out), e.g.:")
    for path, theirs, ours in one_side[:3]:
        print(f"    {path}\n      mmengine: {theirs or 'ok'}\n      treadle: {ours or 'ok'}")


def _ratios(times: dict, library: str, clock: str) -> list[float]:
    theirs = times["mmengine"][clock]
    return [m / t for m, t in zip(theirs, times[library][clock], strict=True)]


def _ratio_text(ratios: list[float]) -> str:
    return f"{statistics.median(ratios):.1f}x ({min(ratios):.1f}-{max(ratios):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", choices=sorted(TREES), action="append", help="default: all")
    parser.add_argument("--repeats", type=int, default=3, help="fresh process pairs per tree")
    parser.add_argument("--wheels", type=pathlib.Path, default=DEFAULT_WHEELS)
    parser.add_argument(
        "--baseline",
        help="also time treadle.config from this folder (a copy of packages/config/src)",
    )
    parser.add_argument(
        "--site",
        type=pathlib.Path,
        help="install the trees here and keep them (default: a scratch folder, removed)",
    )
    parser.add_argument("--child-check", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--child-time", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_check:
        child_check(*args.child_check)
        return
    if args.child_time:
        child_time(*args.child_time)
        return
    libraries = ["mmengine", "treadle"] + ([BASELINE] if args.baseline else [])
    baseline = os.path.abspath(args.baseline) if args.baseline else None
    rows = []
    with tempfile.TemporaryDirectory(prefix="treadle-real-trees-") as folder:
        scratch = pathlib.Path(folder)
        site = args.site.resolve() if args.site else scratch / "site"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
        # One string hash in every child: a config that lists a set (opencompass's calm.py:
        # `list(set(...))`) then gives one order in both libraries' processes.
        env["PYTHONHASHSEED"] = "0"
        for name in args.tree or list(TREES):
            requirement, configs, kind = TREES[name]
            wheel, reason = fetch_wheel(requirement, args.wheels)
            if wheel is None:
                print(f"tree {name}: could not get {requirement} ({reason}); skipped", flush=True)
                continue
            if not (site / configs).is_dir():
                install_wheel(wheel, site)
            files = tree_configs(site / configs)
            work = scratch / name
            work.mkdir()
            same, rest = check_tree(files, work, env, libraries, baseline)
            if rest["different"]:
                shown = "\n  ".join(rest["different"][:10])
                raise SystemExit(
                    f"tree {name}: MMEngine and treadle give different dicts:\n  {shown}"
                )
            _print_one_side(name, rest["one_side"])
            times = time_tree(same, work, env, args.repeats, libraries, baseline)
            rows.append((name, kind, len(same), times))
            parts = [
                f"{library} cpu {statistics.median(times[library]['cpu']):.2f} s "
                f"wall {statistics.median(times[library]['wall']):.2f} s"
                for library in libraries
            ]
            ratios = [
                f"{library} cpu {_ratio_text(_ratios(times, library, 'cpu'))} "
                f"wall {_ratio_text(_ratios(times, library, 'wall'))}"
                for library in libraries[1:]
            ]
            print(
                f"tree {name} ({requirement}, {kind}): {len(same)} configs, identical dicts "
                f"({len(rest['both_fail'])} fail in both, left out); {'; '.join(parts)}; "
                f"MMEngine ÷ {', '.join(ratios)}",
                flush=True,
            )
    _print_table(rows, libraries)


def _print_table(rows: list, libraries: list[str]) -> None:
    """Medians of CPU (and wall) seconds; ratios: median (lowest-highest) of the rounds."""
    head = ["tree", "kind", "configs", "MMEngine 0.10.7 cpu s (wall)"]
    for library in libraries[1:]:
        head += [f"{library} cpu s (wall)", f"MMEngine ÷ {library}, cpu", "wall"]
    print("\n| " + " | ".join(head) + " |")
    print("|---|---|" + "---:|" * (len(head) - 2))
    for name, kind, count, times in rows:
        cells = [TREES[name][0], kind, str(count)]
        for library in libraries:
            median = statistics.median
            cells.append(
                f"{median(times[library]['cpu']):.2f} ({median(times[library]['wall']):.2f})"
            )
            if library != "mmengine":
                cells.append(_ratio_text(_ratios(times, library, "cpu")))
                cells.append(f"{statistics.median(_ratios(times, library, 'wall')):.1f}x")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
