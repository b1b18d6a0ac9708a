"""A text-style Python config that imports ``read_base`` (or other names) from
``mmengine.config`` without a ``with read_base():`` block loads without MMEngine installed, as it
does with MMEngine: treadle.config provides those names itself."""

import subprocess
import sys

from treadle.config import Config


def test_unused_read_base_import_loads(tmp_path):
    (tmp_path / "base.py").write_text("lr = 0.1\nmodel = dict(type='Net', depth=2)\n")
    config = tmp_path / "config.py"
    config.write_text(
        "from mmengine.config import read_base\n"
        "\n"
        "# with read_base():\n"
        "#     from .base import *\n"
        "_base_ = ['./base.py']\n"
        "model = dict(depth=3)\n"
    )
    cfg = Config.fromfile(str(config))
    assert cfg.lr == 0.1
    assert cfg.model == dict(type="Net", depth=3)
    assert "read_base" not in cfg  # a function: dropped like any other imported function


def test_other_mmengine_config_names_resolve_to_treadle(tmp_path):
    config = tmp_path / "config.py"
    config.write_text(
        "from mmengine.config import read_base, ConfigDict\n"
        "from mmengine.config.config import Config\n"
        "a = ConfigDict(b=1)\n"
        "is_treadle = Config.__module__.startswith('treadle')\n"
    )
    cfg = Config.fromfile(str(config))
    assert cfg.a.b == 1
    assert cfg.is_treadle is True


def test_loads_in_a_process_without_mmengine(tmp_path):
    config = tmp_path / "config.py"
    config.write_text("from mmengine.config import read_base\na = 1\n")
    code = (
        "import sys\n"
        "sys.modules['mmengine'] = None  # as if MMEngine were not installed\n"
        "from treadle.config import Config\n"
        f"print(Config.fromfile({str(config)!r}).a)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"
