"""Where MMEngine asserts, treadle.logging raises the error that names the problem and, as well,
MMEngine's AssertionError (code written for MMEngine catches that); messages stay treadle's."""

import pickle
import threading

import pytest

from treadle.logging import HistoryBuffer, ManagerMeta, ManagerMixin, MessageHub
from treadle.logging.errors import NotOneValueError


class Several:
    """An array-like of three elements, as numpy and torch give (duck-typed: neither is needed)."""

    shape = (3,)
    size = 3

    def item(self):
        raise ValueError("only one element arrays can be converted")


def test_message_hub_arguments():
    with pytest.raises(
        AssertionError, match=r"log_scalars\['a'\] must be a HistoryBuffer, got int"
    ):
        MessageHub("hello", log_scalars={"a": 1})
    with pytest.raises(TypeError):
        MessageHub("hello", log_scalars={"a": 1})
    with pytest.raises(AssertionError, match="resumed_keys names 'iters', which is in neither"):
        MessageHub("hello", runtime_info={"iter": 1}, resumed_keys={"iters": False})


def test_update_scalars_refusals_are_assertions_too():
    hub = MessageHub("train")
    with pytest.raises(AssertionError, match=r"scalar 'bad': a logged value must be an int"):
        hub.update_scalars({"bad": []})
    with pytest.raises(TypeError):
        hub.update_scalars({"bad": []})
    with pytest.raises(AssertionError, match=r"log_dict\['acc'\] is a dict, so it must hold"):
        hub.update_scalars({"acc": {"count": 1}})
    with pytest.raises(KeyError):
        hub.update_scalars({"acc": {"count": 1}})
    with pytest.raises(AssertionError, match="the count of scalar 'acc' must be an int"):
        hub.update_scalar("acc", 1.0, count=2.5)
    with pytest.raises(AssertionError, match="log_dict must be a dict, got list"):
        hub.update_scalars([1.0])
    with pytest.raises(AssertionError, match="info_dict must be a dict, got list"):
        hub.update_info_dict([1])
    hub.update_info("iter", 1, resumed=False)
    with pytest.raises(AssertionError, match="was first written with resumed=False"):
        hub.update_info("iter", 2, resumed=True)
    with pytest.raises(AssertionError, match="the state dict lacks runtime_info, resumed_keys"):
        hub.load_state_dict({"log_scalars": {}})
    assert "bad" not in hub.log_scalars  # a refused first value leaves no buffer


def test_a_value_of_several_elements_is_every_error_mmengine_raises():
    buffer = HistoryBuffer()
    # MMEngine's HistoryBuffer.update raises TypeError, its MessageHub an AssertionError.
    for kind in (TypeError, ValueError, AssertionError):
        with pytest.raises(kind, match=r"a logged value must have one element, got a Several"):
            buffer.update(Several())
    with pytest.raises(NotOneValueError, match="count must have one element"):
        buffer.update(1.0, Several())
    with pytest.raises(AssertionError, match=r"MessageHub 'train': scalar 'loss': a logged value"):
        MessageHub("train").update_scalar("loss", Several())


def test_get_info_of_a_missing_key_is_the_default():
    hub = MessageHub("train")
    assert hub.get_info("unknown") is None
    assert hub.get_info("unknown", "fallback") == "fallback"
    hub.update_info("epoch", 3)
    assert hub.get_info("epoch", "fallback") == 3
    restored = pickle.loads(pickle.dumps(hub))
    assert restored.get_info("feat") is None


def test_state_dict_keeps_an_object_deepcopy_refuses():
    hub = MessageHub("train")
    lock = threading.Lock()
    hub.update_info("lock", lock)
    with pytest.warns(UserWarning, match="holds the object itself"):
        assert hub.state_dict()["runtime_info"]["lock"] is lock


def test_manager_names():
    class Named(ManagerMixin):
        def __init__(self, name=""):
            super().__init__(name)

    with pytest.raises(AssertionError, match="the name of a Named instance must be a str, got int"):
        Named.get_instance(name=1)
    with pytest.raises(TypeError):
        Named.get_instance(name=1)
    with pytest.raises(AssertionError, match="must not be empty"):
        Named("")
    with pytest.raises(ValueError):
        Named("")

    class Loose(ManagerMixin):
        # Its __init__ never reaches ManagerMixin's check: get_instance checks the name itself.
        def __init__(self, name):
            self.name = name

    with pytest.raises(AssertionError, match="must be a str, got list"):
        Loose.get_instance(name=["a"])
    assert not Loose._instance_dict


def test_a_class_without_name_is_refused_with_mmengine_phrase():
    with pytest.raises(AssertionError, match=r"NoName1 must have the `name` argument"):

        class NoName1(metaclass=ManagerMeta):
            def __init__(self, a, *args, **kwargs):
                pass
