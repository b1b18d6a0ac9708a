"""Errors that say what was searched, what is close, and what the constructor accepts."""

import re

import pytest

from treadle.registry import Registry, init_default_scope


def test_type_not_found_names_registry_scopes_key_and_close_names(tree):
    with pytest.raises(KeyError) as caught:
        tree.det3d.build({"type": "CascadHead"})
    message = str(caught.value)
    # "KEY is not in the SCOPE::NAME registry": MMEngine's phrase.
    assert "CascadHead is not in the mydet3d::det3d models registry." in message
    assert "Searched the scopes 'mydet3d' (det3d models), 'mydet' (det models), 'treadle'" in (
        message
    )
    assert "Did you mean 'CascadeHead'?" in message


def test_suggestions_include_other_scopes_and_other_cases(tree):
    root = tree.root
    root.register_module(name="resnet", module=dict)
    with pytest.raises(KeyError, match=r"Did you mean 'ResNet', 'resnet'\?"):
        root.build({"type": "RESNET"})
    with pytest.raises(KeyError, match=r"Did you mean 'mydet.FasterRCNN'\?"):
        root.build({"type": "FasterRCNN"})
    with pytest.raises(KeyError, match=r"Did you mean 'mycls.MobileNet'\?"):
        root.build({"type": "mydet.MobileNet"})


def test_no_suggestion_when_nothing_is_close(tree):
    with pytest.raises(KeyError) as caught:
        tree.root.build({"type": "Zzzzzz"})
    assert "Did you mean" not in str(caught.value)
    assert "an entry point in the group 'treadle.registry'" in str(caught.value)


def test_unknown_scope_lists_the_scopes_of_the_tree(tree):
    with pytest.raises(
        KeyError,
        match=re.escape(
            "nosuchscope_q.ResNet is not in the mycls::cls models registry. No "
            "registry of scope 'nosuchscope_q' exists in its tree (scopes: 'treadle', 'mydet', "
            "'mydet3d', 'mycls'): no installed distribution declares 'nosuchscope_q' in the "
            "entry-point group 'treadle.registry', no module 'nosuchscope_q.registry'"
        ),
    ):
        tree.cls.build({"type": "nosuchscope_q.ResNet"})


def test_not_found_under_a_default_scope_names_the_scoped_registry(tree):
    init_default_scope("mydet")
    with pytest.raises(KeyError, match=r"Missing is not in the mydet::det models registry"):
        tree.root.build({"type": "Missing"})


def test_construction_failure_names_type_and_registry_and_chains(tree):
    root = tree.root

    @root.register_module()
    class Fragile:
        def __init__(self, size):
            if size < 0:
                raise ValueError(f"size must be >= 0, got {size}")

    with pytest.raises(
        ValueError,
        match=r"building 'Fragile' from the 'models' registry \(scope 'treadle'\) failed: "
        r"ValueError: size must be >= 0, got -1",
    ) as caught:
        root.build({"type": "Fragile", "size": -1})
    assert isinstance(caught.value.__cause__, ValueError)
    assert str(caught.value.__cause__) == "size must be >= 0, got -1"


def test_a_nested_failure_shows_the_path_of_builds(tree):
    root, det = tree.root, tree.det

    @det.register_module()
    class Detector:
        def __init__(self, backbone):
            self.backbone = root.build(backbone)

    with pytest.raises(TypeError) as caught:
        root.build({"type": "mydet.Detector", "backbone": {"type": "ResNet", "dept": 50}})
    message = str(caught.value)
    assert message.startswith("building 'mydet.Detector' from the 'models' registry")
    assert "TypeError: building 'ResNet' from the 'models' registry" in message
    assert isinstance(caught.value.__cause__.__cause__, TypeError)


def test_unexpected_keyword_lists_accepted_parameters_and_the_closest(tree):
    with pytest.raises(TypeError) as caught:
        tree.root.build({"type": "ResNet", "dept": 18})
    message = str(caught.value)
    assert "building 'ResNet' from the 'models' registry (scope 'treadle') failed" in message
    assert "got an unexpected keyword argument 'dept'" in message
    assert "'dept' is not a parameter of 'ResNet'; did you mean 'depth'?" in message
    assert "'ResNet' accepts: depth, stages" in message
    assert isinstance(caught.value.__cause__, TypeError)


def test_missing_required_parameters_are_listed():
    registry = Registry("losses", scope="treadle")

    @registry.register_module()
    def focal_loss(alpha, gamma=2.0):
        return alpha, gamma

    with pytest.raises(TypeError, match="missing required parameters: alpha"):
        registry.build({"type": "focal_loss"})


def test_an_exception_type_that_needs_more_arguments_becomes_a_runtime_error():
    registry = Registry("things", scope="treadle")

    class Odd(Exception):
        def __init__(self, code, detail):
            super().__init__(f"{code}: {detail}")

    @registry.register_module()
    def fail():
        raise Odd(7, "odd")

    with pytest.raises(RuntimeError, match=r"building 'fail'.*failed: Odd: 7: odd") as caught:
        registry.build({"type": "fail"})
    assert isinstance(caught.value.__cause__, Odd)


def test_failure_of_a_type_given_as_a_class_names_the_class(tree):
    class Local:
        def __init__(self):
            raise OSError("disk full")

    with pytest.raises(OSError, match=r"building .*test_errors\..*Local from the 'models'"):
        tree.root.build({"type": Local})
