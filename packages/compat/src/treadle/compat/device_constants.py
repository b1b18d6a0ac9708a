"""``mmengine.device.utils``'s module constants, computed once from treadle.runner.device."""

from __future__ import annotations

from treadle.runner.device import (
    get_device,
    is_dipu_available,
    is_mlu_available,
    is_musa_available,
    is_npu_available,
)

IS_NPU_AVAILABLE = is_npu_available()
IS_MLU_AVAILABLE = is_mlu_available()
IS_DIPU_AVAILABLE = is_dipu_available()
IS_MUSA_AVAILABLE = is_musa_available()
#: The device type MMEngine would pick: 'cuda', 'npu', ..., or 'cpu'.
DEVICE = get_device()
