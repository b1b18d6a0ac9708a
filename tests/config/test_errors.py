"""Every bad input gives one error naming the file (and line), of a class MMEngine users catch."""

import re

import pytest

from treadle.config import (
    Config,
    ConfigCycleError,
    ConfigError,
    ConfigFileNotFoundError,
    ConfigSyntaxError,
)


def loc(data, name, line=None):
    path = re.escape(str(data / "errors" / name))
    return path + (f":{line}: " if line else ": ")


def test_missing_file(data):
    with pytest.raises(FileNotFoundError, match=r"config file not found: .*no_such_config\.py"):
        Config.fromfile(data / "no_such_config.py")


def test_unsupported_extension(data):
    with pytest.raises(OSError, match=r"unsupported config extension '\.toml'; use \.py"):
        Config.fromfile(data / "errors" / "unsupported.toml")
    with pytest.raises(OSError, match=r"unsupported config format '\.toml'"):
        Config.fromstring("a = 1", ".toml")


def test_python_syntax_error(data):
    with pytest.raises(
        SyntaxError, match=loc(data, "syntax_error.py", 2) + "invalid Python"
    ) as info:
        Config.fromfile(data / "errors" / "syntax_error.py")
    assert info.value.lineno == 2 and "dict(x=1" in info.value.text


@pytest.mark.parametrize(
    ("name", "line", "what"),
    [("bad_yaml.yaml", 3, "invalid YAML"), ("bad_json.json", 3, "invalid JSON")],
)
def test_invalid_yaml_and_json(data, name, line, what):
    with pytest.raises(ConfigSyntaxError, match=loc(data, name, line) + what):
        Config.fromfile(data / "errors" / name)


def test_yaml_that_is_not_a_mapping(tmp_path):
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(
        TypeError, match="a config must be a mapping of keys to values, this one is a list"
    ):
        Config.fromfile(tmp_path / "list.yaml")


def test_missing_base_names_the_line_of_the_path(data):
    with pytest.raises(
        ConfigFileNotFoundError,
        match=loc(data, "missing_base.py", 4) + "_base_ file './nope.py' not found",
    ):
        Config.fromfile(data / "errors" / "missing_base.py")


def test_missing_base_in_yaml(tmp_path):
    (tmp_path / "c.yaml").write_text("a: 1\n_base_:\n  - ./gone.yaml\n")
    with pytest.raises(FileNotFoundError, match=r"c\.yaml:3: _base_ file './gone.yaml' not found"):
        Config.fromfile(tmp_path / "c.yaml")


def test_bad_base_value(tmp_path):
    (tmp_path / "c.py").write_text("a = 1\n_base_ = 3\n")
    with pytest.raises(
        TypeError, match=r"c\.py:2: _base_ must be a path or a list of paths, got 3"
    ):
        Config.fromfile(tmp_path / "c.py")


def test_base_with_unsupported_extension(tmp_path):
    (tmp_path / "b.toml").write_text("")
    (tmp_path / "c.py").write_text("_base_ = './b.toml'\n")
    with pytest.raises(OSError, match=r"c\.py:1: .*unsupported config extension"):
        Config.fromfile(tmp_path / "c.py")


def test_base_cycle(data):
    with pytest.raises(
        ConfigCycleError,
        match=r"cycle_b\.py:1: _base_ files include each other: "
        r".*cycle_a\.py -> .*cycle_b\.py -> .*cycle_a\.py",
    ):
        Config.fromfile(data / "errors" / "cycle_a.py")


def test_duplicate_keys_among_bases_name_both_files(data):
    with pytest.raises(
        KeyError,
        match=r"duplicate_keys\.py:1: bases .*base_ok\.py and .*base_dup\.py both define 'x'",
    ):
        Config.fromfile(data / "errors" / "duplicate_keys.py")


@pytest.mark.parametrize(
    ("name", "line", "message"),
    [
        (
            "bad_ref.py",
            3,
            r"\{\{_base_\.y\.zz\}\}: _base_\.y has no key 'zz' \(did you mean 'z'\?\)",
        ),
        ("bad_ref.yaml", 2, r"\{\{_base_\.yy\}\}: _base_ has no key 'yy' \(did you mean 'y'\?\)"),
        ("bad_ref.json", 3, r"\{\{_base_\.y\.q\}\}: _base_\.y has no key 'q'"),
    ],
)
def test_bad_base_reference(data, name, line, message):
    with pytest.raises(KeyError, match=loc(data, name, line) + message):
        Config.fromfile(data / "errors" / name)


def test_bad_base_reference_into_a_list(tmp_path):
    (tmp_path / "b.py").write_text("a = [1, 2]\n")
    (tmp_path / "c.yaml").write_text("_base_: ./b.py\nv: {{_base_.a.7}}\n")
    with pytest.raises(IndexError, match=r"c\.yaml:2: .*_base_\.a has 2 items, no index 7"):
        Config.fromfile(tmp_path / "c.yaml")


def test_missing_base_attribute_in_python(data):
    with pytest.raises(
        AttributeError,
        match=loc(data, "bad_base_attr.py", 4) + r".*no attribute 'zz' \(did you mean 'z'\?\)",
    ):
        Config.fromfile(data / "errors" / "bad_base_attr.py")


def test_errors_inside_python_code_name_the_line(data):
    with pytest.raises(
        NameError, match=loc(data, "name_error.py", 2) + "NameError: name 'undefined_name'"
    ):
        Config.fromfile(data / "errors" / "name_error.py")


def test_dict_merged_into_a_non_dict(data):
    with pytest.raises(
        TypeError,
        match=loc(data, "dict_into_int.py", 2)
        + r"'x' cannot inherit from base because x is a dict in the child config but is of "
        + r"type <class 'int'> in base config \(base value 1\)",
    ):
        Config.fromfile(data / "errors" / "dict_into_int.py")


def test_reserved_key_in_a_file(data):
    with pytest.raises(KeyError, match="filename is reserved for config file"):
        Config.fromfile(data / "errors" / "reserved.py")


def test_environment_variable_without_default(data, monkeypatch):
    monkeypatch.delenv("TREADLE_SURELY_UNSET_VAR", raising=False)
    with pytest.raises(
        KeyError,
        match=loc(data, "env_missing.py", 1)
        + r"environment variable \$TREADLE_SURELY_UNSET_VAR is not set",
    ):
        Config.fromfile(data / "errors" / "env_missing.py")


def test_text_config_cannot_inherit_a_pure_python_one(data):
    with pytest.raises(
        RuntimeError,
        match=loc(data, "text_child_of_pure.py", 1) + r".*lazy_base\.py is a pure-Python config",
    ):
        Config.fromfile(data / "errors" / "text_child_of_pure.py")


def test_missing_read_base_module(data):
    with pytest.raises(
        FileNotFoundError,
        match=loc(data, "pure_missing_base.py", 4) + r"base config \.nope_base not found",
    ):
        Config.fromfile(data / "errors" / "pure_missing_base.py")


def test_all_errors_share_one_base_class(data):
    for name in (
        "syntax_error.py",
        "bad_ref.yaml",
        "cycle_a.py",
        "missing_base.py",
        "dict_into_int.py",
    ):
        with pytest.raises(ConfigError) as info:
            Config.fromfile(data / "errors" / name)
        assert info.value.filename and info.value.lineno
        assert "Traceback" not in str(info.value)
