"""With the real MMEngine 0.10.7 installed (hatch env mmengine): the stored names are its
names, treadle wins once installed, and each provided name is the same kind of object."""

import importlib
import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mmengine")

from treadle.compat.mmengine_0_10_7 import MODULES

TOOL = Path(__file__).parents[2] / "tools" / "compat_coverage.py"

# MMEngine names whose treadle object has another class or function name on purpose.
ALIASES = {
    "MMLogger": "Logger",
    "to_ntuple": "to_ntuple",
    "JitModelAnalysis": "ModelAnalysis",
    "load_url": "load_url",
    "build_optimizer_from_cfg": "build_from_cfg",
    "FilterDuplicateWarning": "FilterDuplicateWarning",
}


def test_stored_names_are_mmengine_0_10_7s():
    spec = importlib.util.spec_from_file_location("compat_coverage", TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.mmengine_modules(tool.imported_mmengine()) == MODULES


def test_treadle_wins_over_the_installed_mmengine():
    code = textwrap.dedent(
        """
        import treadle.compat
        treadle.compat.install()
        import mmengine, mmengine.runner
        import treadle.runner
        print(type(mmengine).__name__, mmengine.runner.Runner is treadle.runner.Runner)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["CompatModule", "True"]


def test_install_after_the_real_mmengine_names_it():
    code = "import mmengine.config, treadle.compat\ntreadle.compat.install()\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 1
    assert "CompatInstallError" in out.stderr
    assert "(mmengine, mmengine.config, mmengine.config.config" in out.stderr


def test_each_provided_name_is_the_same_kind_of_object():
    code = textwrap.dedent(
        """
        import importlib, sys, warnings, json
        warnings.simplefilter("ignore")
        from treadle.compat.mmengine_0_10_7 import MODULES
        import inspect
        def kind(v):
            if inspect.isclass(v): return "class", v.__name__
            if inspect.ismodule(v): return "module", None
            if callable(v): return "callable", getattr(v, "__name__", None)
            return "value", None
        out = {}
        for m, (_, names) in MODULES.items():
            mod = importlib.import_module(m)
            for n in names:
                try:
                    out[f"{m}:{n}"] = kind(getattr(mod, n))
                except ImportError:
                    pass
        print(json.dumps(out))
        """
    )
    import json

    reference = json.loads(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
    )
    ours = json.loads(
        subprocess.run(
            [sys.executable, "-c", "import treadle.compat; treadle.compat.install()\n" + code],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    wrong = []
    for key, (their_kind, their_name) in reference.items():
        if key not in ours:
            continue  # a missing name: the coverage table's business
        our_kind, our_name = ours[key]
        name = key.split(":")[1]
        if their_kind in ("module", "value") or "Union" in str(their_name):
            continue  # type aliases (Union[...]) and constants: values differ in kind freely
        expected = ALIASES.get(name, their_name)
        if our_kind != their_kind or (their_kind == "class" and our_name != expected):
            wrong.append((key, their_kind, their_name, our_kind, our_name))
    assert wrong == []
    assert len(ours) >= 0.95 * len(reference)
