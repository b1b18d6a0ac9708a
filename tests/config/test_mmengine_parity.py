"""Every config under data/ (except the folders of errors, package configs and treadle-only
features) loads to exactly the dict MMEngine loads. Skipped without MMEngine:
``hatch run mmengine:pytest tests/config/test_mmengine_parity.py``."""

import warnings
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
SKIPPED_FOLDERS = {"errors", "beyond", "pkgs", "strict"}
FILES = sorted(
    p
    for p in DATA.rglob("*")
    if p.suffix in (".py", ".json", ".yaml", ".yml")
    and not SKIPPED_FOLDERS & set(p.relative_to(DATA).parts)
)


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(DATA)) for p in FILES])
def test_same_dict_as_mmengine(path, monkeypatch):
    mm_config = pytest.importorskip("mmengine.config")
    from treadle.config import Config

    monkeypatch.delenv("TREADLE_TEST_DATA_ROOT", raising=False)
    monkeypatch.delenv("TREADLE_TEST_NUM_CLASSES", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = mm_config.Config.fromfile(str(path))
        ours = Config.fromfile(path)
    assert ours.to_dict() == theirs.to_dict()
    assert ours.env_variables == theirs.env_variables
