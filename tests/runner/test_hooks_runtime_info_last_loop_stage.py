"""RuntimeInfoHook.last_loop_stage: MMEngine's attribute for the stage a validation run hands
back to, which toolbox tests read and set."""

from types import SimpleNamespace

from treadle.logging import MessageHub
from treadle.runner.hooks import RuntimeInfoHook


def test_last_loop_stage_follows_a_validation_inside_training():
    hub = MessageHub.get_instance("runtime_info_last_loop_stage")
    runner = SimpleNamespace(message_hub=hub)
    hook = RuntimeInfoHook()
    assert hook.last_loop_stage is None
    hub.update_info("loop_stage", "train")
    hook.before_val(runner)
    assert (hook.last_loop_stage, hub.get_info("loop_stage")) == ("train", "val")
    hook.after_val(runner)
    assert (hook.last_loop_stage, hub.get_info("loop_stage")) == (None, "train")
    # Set from outside, as MMEngine's tests do: after_val hands the stage back to it.
    hook.last_loop_stage = "train"
    hub.update_info("loop_stage", "val")
    hook.after_val(runner)
    assert hub.get_info("loop_stage") == "train"
