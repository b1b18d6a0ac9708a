"""Check 6b: the device input path. benchmarks/input_path.py's sides take turns epoch by epoch:
treadle's Runner (each batch copied on a side stream ahead of its step, the next one read ahead
while the current step computes) against a naive loop that copies each batch synchronously,
on the small ResNet-like conv net (benchmarks/convnet.py), batch 128, 32x32 images in pinned
memory, 4 DataLoader workers. Goal on CUDA: treadle's step at most 0.97x the naive loop's, with
the side stream in use (a ratio met without it would not be this feature's).

On the CPU nothing is copied to a device, so the figure only says the check runs: the row
passes and says so.
"""

from __future__ import annotations

from pathlib import Path

from gpu_pass_checks.rows import Row, verdict

CHECK = "input_path: engine step vs naive synchronous-copy loop"
WHAT = "small ResNet, batch 128, 32x32 images, pinned memory"


def run(device: str, work_dir: Path) -> list[Row]:
    from input_path import GOAL, measure, setup_for

    setup = setup_for(device)
    result = measure(setup, device)
    if result.errors:
        failed = "; ".join(f"{side}: {error}" for side, error in result.errors.items())
        return [Row(CHECK, "fail", "", failed[:300])]
    ratio = result.ratio()
    without = result.ratio("treadle-sync")
    figure = f"{ratio:.3f}x naive (device_prefetch=False: {without:.3f}x)"
    if device == "cpu":
        return [
            Row(
                CHECK,
                "pass",
                figure,
                f"CPU analogue ({setup.batch_size} images of {setup.image_size}x"
                f"{setup.image_size}), informational: nothing is copied on the CPU; the goal "
                f"<= {GOAL:.2f}x is meaningful on a GPU only",
            )
        ]
    plan = result.plans.get("treadle", {})
    used = bool(plan.get("prefetch") and plan.get("read_ahead"))
    return [
        verdict(
            CHECK,
            used and ratio <= GOAL,
            figure,
            f"over the goal {GOAL:.2f}x ({WHAT})"
            if used
            else f"the side stream was not used (plan: {plan})",
            f"goal <= {GOAL:.2f}x; {WHAT}; side stream, one batch read ahead",
        )
    ]
