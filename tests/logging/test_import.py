import importlib.metadata
import subprocess
import sys

import treadle.logging


def test_public_names():
    assert treadle.logging.__version__ == importlib.metadata.version("treadle-logging")
    assert set(treadle.logging.__all__) == {
        "HistoryBuffer",
        "Logger",
        "MMLogger",
        "ManagerMeta",
        "ManagerMixin",
        "MessageHub",
        "__version__",
        "print_log",
    }
    for name in treadle.logging.__all__:
        assert hasattr(treadle.logging, name)


def test_treadle_is_a_namespace_package():
    import treadle

    assert getattr(treadle, "__file__", None) is None


def test_import_pulls_in_neither_torch_nor_numpy():
    code = (
        "import sys, treadle.logging\n"
        "from treadle.logging import MessageHub\n"
        "MessageHub('x').update_scalar('loss', 1.0)\n"
        "heavy = sorted(m for m in ('torch', 'numpy') if m in sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
