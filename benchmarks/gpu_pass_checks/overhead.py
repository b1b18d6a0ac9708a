"""Check 6: what treadle's Runner adds to each training step, against plain PyTorch in the same
run, with the model-API floor (MMEngine's model API, no engine) beside it:
benchmarks/runner_step_overhead.py's sides ``plain``, ``model-api`` and ``treadle`` taking turns
epoch by epoch, on its tiny MLP and on the small ResNet-like conv net of benchmarks/convnet.py.

Budgets on CUDA: 1.05x (tiny MLP) and 1.02x (conv net); a ratio over budget fails the check.
On the CPU the runs are short and the machines shared, so the ratios are informational: the
tiny MLP against its CPU budget (1.20x), the conv net against the GPU's.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from gpu_pass_checks.rows import Row

SIDES = ["plain", "model-api", "treadle"]
CPU_BUDGETS = {"tiny": 1.20, "conv": 1.02}


def sizes(device: str) -> list:
    """The benchmark's own sizes on CUDA; on the CPU, shorter runs and a smaller conv net."""
    from runner_step_overhead import SIZES

    tiny, conv = SIZES["tiny"], SIZES["conv"]
    if device == "cuda":
        return [tiny, conv]
    return [
        replace(tiny, epochs=5, steps_per_epoch=100),
        replace(conv, hidden=16, image_size=16, batch_size=16, epochs=5, steps_per_epoch=10),
    ]


def size_row(size: object, device: str) -> Row:
    from runner_step_overhead import measure

    per_step = measure(size, SIDES, size.epochs, 1, device)
    label = "tiny MLP" if size.name == "tiny" else "conv net"
    check = f"overhead: {label}"
    missing = [side for side in SIDES if side not in per_step]
    if missing:
        return Row(check, "fail", "", f"side(s) {', '.join(missing)} failed (see the log)")
    plain = per_step["plain"]
    ratio, floor = per_step["treadle"] / plain, per_step["model-api"] / plain
    figure = f"{ratio:.3f}x (floor {floor:.3f}x, plain {plain * 1e6:.0f} us/step)"
    if device == "cuda":
        within = ratio <= size.budget
        note = f"budget {size.budget:.2f}x"
        return Row(check, "pass" if within else "fail", figure, "" if within else f"over {note}")
    budget = CPU_BUDGETS[size.name]
    state = "within" if ratio <= budget else "over"
    return Row(check, "pass", figure, f"CPU, informational: {state} {budget:.2f}x")


def run(device: str, work_dir: Path) -> list[Row]:
    return [size_row(size, device) for size in sizes(device)]
