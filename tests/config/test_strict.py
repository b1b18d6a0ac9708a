import pytest

from treadle.config import Config, StrictModeError


def test_strict_reports_each_unknown_key_with_its_line(data):
    with pytest.raises(StrictModeError) as info:
        Config.fromfile(data / "strict" / "typo.py", strict=True)
    path = str(data / "strict" / "typo.py")
    assert info.value.unknown == [("model.backbone.depht", path, 3), ("optimiser", path, 6)]
    assert f"{path}:3: model.backbone.depht" in str(info.value)
    assert isinstance(info.value, KeyError)


def test_strict_in_yaml(data):
    with pytest.raises(StrictModeError, match=r"typo\.yaml:5: model\.neck"):
        Config.fromfile(data / "strict" / "typo.yaml", strict=True)


def test_strict_in_pure_python_configs(data):
    with pytest.raises(StrictModeError, match=r"pure_typo\.py:7: modle"):
        Config.fromfile(data / "strict" / "pure_typo.py", strict=True)


def test_strict_passes_clean_configs_and_is_off_by_default(data):
    assert Config.fromfile(data / "strict" / "ok.py", strict=True).model.backbone.depth == 101
    assert Config.fromfile(data / "strict" / "typo.py").optimiser.lr == 0.2
    # a config without bases defines its keys: nothing to report
    assert Config.fromfile(data / "strict" / "base.py", strict=True).optimizer.lr == 0.1
