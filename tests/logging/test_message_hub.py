import pickle
import threading

import pytest

from treadle.logging import HistoryBuffer, MessageHub


class FakeArray:
    def __init__(self, *values):
        self.values = values
        self.size = len(values)
        self.shape = (len(values),)

    def item(self):
        return self.values[0]


def test_update_and_get_scalars():
    hub = MessageHub.get_instance("train")
    hub.update_scalar("loss", 1.0)
    hub.update_scalar("loss", 3.0)
    hub.update_scalar("top1", 30, count=40)
    hub.update_scalar("lr", FakeArray(0.1))
    assert hub.get_scalar("loss").mean() == 2.0
    assert hub.get_scalar("top1").mean() == 0.75
    assert hub.get_scalar("lr").current() == 0.1
    assert list(hub.log_scalars) == ["loss", "top1", "lr"]
    assert all(isinstance(b, HistoryBuffer) for b in hub.log_scalars.values())


def test_update_scalars_with_counts():
    hub = MessageHub("train")
    hub.update_scalars({"loss": 0.5, "top1": {"value": 9, "count": 10}, "n": {"value": 2}})
    hub.update_scalars({"loss": 1.5})
    assert hub.get_scalar("loss").mean() == 1.0
    assert hub.get_scalar("top1").mean() == 0.9
    assert hub.get_scalar("n").data == ([2], [1])


def test_update_scalars_errors():
    hub = MessageHub("train")
    with pytest.raises(TypeError, match="log_dict must be a dict, got list"):
        hub.update_scalars([("loss", 1.0)])
    with pytest.raises(
        KeyError, match=r"log_dict\['top1'\] is a dict, so it must hold 'value'.*'count'"
    ):
        hub.update_scalars({"top1": {"count": 10}})
    with pytest.raises(
        TypeError, match=r"MessageHub 'train': the count of scalar 'top1' must be an int, got float"
    ):
        hub.update_scalars({"top1": {"value": 9, "count": 10.0}})
    assert hub.log_scalars == {}


def test_bad_values_name_the_key_and_leave_no_trace():
    hub = MessageHub("train")
    with pytest.raises(
        TypeError, match=r"MessageHub 'train': scalar 'loss': a logged value must be"
    ):
        hub.update_scalar("loss", "high")
    with pytest.raises(
        ValueError,
        match=r"scalar 'acc': a logged value must have one element, got a FakeArray of shape",
    ):
        hub.update_scalar("acc", FakeArray(1.0, 2.0))
    assert hub.log_scalars == {}
    hub.update_scalar("loss", 1.0, resumed=False)  # the failed update set no resumed flag
    assert hub.state_dict()["resumed_keys"] == {"loss": False}


def test_resumed_flag_cannot_change():
    hub = MessageHub("train")
    hub.update_scalar("loss", 1.0)
    with pytest.raises(
        ValueError,
        match=r"'loss' was first written with resumed=True and cannot be written with resumed=F",
    ):
        hub.update_scalar("loss", 2.0, resumed=False)
    hub.update_info("iter", 1, resumed=False)
    with pytest.raises(
        ValueError, match=r"'iter' was first written with resumed=False.*resumed=True"
    ):
        hub.update_info("iter", 2)
    assert hub.get_scalar("loss").data == ([1.0], [1])
    assert hub.get_info("iter") == 1


def test_runtime_info():
    hub = MessageHub("train")
    hub.update_info("epoch", 1)
    hub.update_info_dict({"iter": 10, "meta": {"seed": 0}})
    assert hub.get_info("epoch") == 1
    assert hub.runtime_info == {"epoch": 1, "iter": 10, "meta": {"seed": 0}}
    assert hub.get_info("missing", default=None) is None
    assert hub.get_info("missing", 5) == 5
    with pytest.raises(TypeError, match="info_dict must be a dict, got tuple"):
        hub.update_info_dict(("epoch", 2))


def test_pop_info():
    hub = MessageHub("train")
    hub.update_info("epoch", 1)
    assert hub.pop_info("epoch") == 1
    assert hub.pop_info("epoch") is None
    assert hub.pop_info("epoch", default=-1) == -1
    hub.update_info("epoch", 2, resumed=False)  # gone entirely: may return with another flag
    assert hub.get_info("epoch") == 2


def test_unknown_keys_are_reported_with_what_exists():
    hub = MessageHub("train")
    hub.update_scalars({"loss": 1.0, "acc": 0.5})
    hub.update_info("epoch", 1)
    with pytest.raises(
        KeyError, match=r"MessageHub 'train' has no scalar 'los'; its scalars: 'acc', 'loss'"
    ):
        hub.get_scalar("los")
    # Runtime info that is not there is None (or the default given), as in MMEngine: hooks ask
    # for keys a loop may not have written yet.
    assert hub.get_info("iter") is None
    assert hub.get_info("iter", 0) == 0
    empty = MessageHub("empty")
    with pytest.raises(
        KeyError, match=r"MessageHub 'empty' has no scalar 'loss'; its scalars: none"
    ):
        empty.get_scalar("loss")


def test_long_key_lists_are_truncated():
    hub = MessageHub("train")
    hub.update_scalars({f"key{i:02d}": float(i) for i in range(25)})
    with pytest.raises(KeyError, match=r"'key19' and 5 more"):
        hub.get_scalar("missing")


def test_constructor_arguments():
    buffer = HistoryBuffer([1.0], [1])
    hub = MessageHub(
        "train",
        log_scalars={"loss": buffer},
        runtime_info={"epoch": 3},
        resumed_keys={"loss": True},
    )
    assert hub.get_scalar("loss") is buffer
    assert hub.get_info("epoch") == 3
    # Keys without a resumed flag are not saved, as in MMEngine.
    assert hub.state_dict()["runtime_info"] == {}
    with pytest.raises(TypeError, match="log_scalars must be a dict or None, got list"):
        MessageHub("x", log_scalars=[])
    with pytest.raises(
        TypeError, match=r"log_scalars\['loss'\] must be a HistoryBuffer, got float"
    ):
        MessageHub("x", log_scalars={"loss": 1.0})
    with pytest.raises(KeyError, match="resumed_keys names 'lr', which is in neither"):
        MessageHub("x", resumed_keys={"lr": True})


def test_get_current_instance_creates_a_default():
    hub = MessageHub.get_current_instance()
    assert hub.instance_name == "treadle"
    assert MessageHub.get_current_instance() is hub
    run = MessageHub.get_instance("run")
    assert MessageHub.get_current_instance() is run
    assert repr(run) == "<MessageHub 'run': 0 scalars, 0 runtime info keys>"


def _hub_with_everything():
    hub = MessageHub("source")
    hub.update_scalars({"loss": 1.0, "acc": {"value": 3, "count": 4}})
    hub.update_scalars({"loss": 2.0})
    hub.update_scalar("time", 0.1, resumed=False)
    hub.update_info_dict({"epoch": 2, "meta": {"seed": [1, 2]}})
    hub.update_info("dataloader", threading.Lock(), resumed=False)  # cannot be copied
    return hub


def test_state_dict_holds_copies_of_resumed_keys():
    hub = _hub_with_everything()
    state = hub.state_dict()
    assert set(state) == {"log_scalars", "runtime_info", "resumed_keys"}
    assert set(state["log_scalars"]) == {"loss", "acc"}
    assert state["log_scalars"]["loss"].data == ([1.0, 2.0], [1, 1])
    assert state["runtime_info"] == {"epoch": 2, "meta": {"seed": [1, 2]}}
    assert state["resumed_keys"] == {
        "loss": True,
        "acc": True,
        "time": False,
        "epoch": True,
        "meta": True,
        "dataloader": False,
    }
    # Copies: the hub goes on without changing the saved state.
    hub.get_info("meta")["seed"].append(3)
    hub.update_scalar("loss", 9.0)
    assert state["runtime_info"]["meta"] == {"seed": [1, 2]}
    assert state["log_scalars"]["loss"].data == ([1.0, 2.0], [1, 1])


def test_state_dict_holds_what_cannot_be_copied_itself():
    # As MMEngine: the object is saved, not a copy of it, with a warning.
    hub = MessageHub("train")
    lock = threading.Lock()
    hub.update_info("lock", lock)
    hub.update_info("epoch", 1)
    with pytest.warns(
        UserWarning, match=r"runtime info 'lock' cannot be copied.*holds the object itself"
    ):
        state = hub.state_dict()
    assert state["runtime_info"] == {"lock": lock, "epoch": 1}
    assert state["runtime_info"]["lock"] is lock


@pytest.mark.parametrize("through_pickle", [False, True])
def test_load_state_dict_round_trip(through_pickle):
    state = _hub_with_everything().state_dict()
    if through_pickle:
        state = pickle.loads(pickle.dumps(state))
    hub = MessageHub("target")
    hub.update_info("kept", "yes")
    hub.load_state_dict(state)
    assert hub.get_scalar("loss").data == ([1.0, 2.0], [1, 1])
    assert hub.get_scalar("acc").mean() == 0.75
    assert hub.get_info("epoch") == 2
    assert hub.get_info("kept") == "yes"
    assert "time" not in hub.log_scalars
    assert hub.get_info("dataloader") is None  # not resumed, so not saved
    # What was saved is saved again.
    assert hub.state_dict()["runtime_info"] == {"kept": "yes", "epoch": 2, "meta": {"seed": [1, 2]}}
    # The loaded state is copied, not shared.
    state["runtime_info"]["meta"]["seed"].append(3)
    assert hub.get_info("meta") == {"seed": [1, 2]}


def test_load_from_another_hub_copies_every_key():
    source = _hub_with_everything()
    hub = MessageHub("target")
    hub.load_state_dict(source)
    assert set(hub.log_scalars) == {"loss", "acc", "time"}
    assert hub.get_info("dataloader") is source.get_info("dataloader")  # cannot copy: shared
    assert hub.get_scalar("loss") is not source.get_scalar("loss")
    hub.update_scalar("loss", 5.0)
    assert source.get_scalar("loss").data == ([1.0, 2.0], [1, 1])
    with pytest.raises(ValueError, match="resumed=False"):
        hub.update_scalar("time", 1.0)  # the flags came along


def test_load_state_dict_errors():
    hub = MessageHub("train")
    with pytest.raises(
        TypeError, match=r"takes a dict from MessageHub.state_dict\(\) or a MessageHub, got list"
    ):
        hub.load_state_dict([])
    with pytest.raises(KeyError, match=r"the state dict lacks runtime_info, resumed_keys"):
        hub.load_state_dict({"log_scalars": {}})
    with pytest.warns(UserWarning, match=r"log_scalars\['loss'\] is a float, not a HistoryBuffer"):
        hub.load_state_dict(
            {"log_scalars": {"loss": 1.0}, "runtime_info": {}, "resumed_keys": {"loss": True}}
        )
    assert hub.log_scalars == {}
    assert hub.state_dict()["resumed_keys"] == {}
