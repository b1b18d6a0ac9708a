""".yaml and .json configs are parsed once per text and each load given its own copy: what a
load returns must be what parsing the file then would give, and share nothing with the next."""

import datetime
import os

from treadle.config import Config


def _child(folder, base_text, ext=".yaml"):
    (folder / f"base{ext}").write_text(base_text)
    (folder / "child.yaml").write_text(f"_base_: ./base{ext}\nextra: 1\n")
    return folder / "child.yaml"


def test_an_edit_that_keeps_size_and_mtime_is_seen(tmp_path):
    child = _child(tmp_path, "model: {depth: 1}\n")
    assert Config.fromfile(child).model.depth == 1
    base = tmp_path / "base.yaml"
    before = os.stat(base)
    base.write_text("model: {depth: 7}\n")
    os.utime(base, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert Config.fromfile(child).model.depth == 7


def test_mutating_a_loaded_config_does_not_reach_the_next_load(tmp_path):
    for ext, text in (
        (".yaml", "model: {layers: [{n: 1}]}\n"),
        (".json", '{"model": {"layers": [{"n": 1}]}}'),
    ):
        child = _child(tmp_path, text, ext)
        first = Config.fromfile(child)
        first.model.layers[0].n = 100
        first.model.layers.append({"n": 2})
        assert Config.fromfile(child).to_dict() == {"model": {"layers": [{"n": 1}]}, "extra": 1}


def test_yaml_aliases_tuples_and_dates_load_as_parsed_every_time(tmp_path):
    child = _child(
        tmp_path,
        "shared: &s {a: 1}\nalias: *s\npair: !!python/tuple [1, 2]\nday: 2024-01-02\n",
    )
    for _ in range(2):
        cfg = Config.fromfile(child)
        assert cfg.to_dict() == {
            "shared": {"a": 1},
            "alias": {"a": 1},
            "pair": (1, 2),
            "day": datetime.date(2024, 1, 2),
            "extra": 1,
        }
        cfg.shared.a = 5
