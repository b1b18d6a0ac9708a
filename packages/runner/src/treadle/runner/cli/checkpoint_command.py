"""``treadle checkpoint consolidate SHARDED_DIR OUT``: a sharded (FSDP) checkpoint as one
``.pth`` or ``.safetensors`` file; ``--backend-args JSON`` gives the endpoint and credentials
of the store (S3, MinIO...) either may be on, as CheckpointHook's ``backend_args``."""

from __future__ import annotations

import argparse
import json
from typing import Any

_EXAMPLE = '{"endpoint_url": "http://127.0.0.1:9000"}'


def backend_args_json(text: str) -> dict[str, Any]:
    """The ``--backend-args`` value: a JSON object, as CheckpointHook's ``backend_args``.

    Example:
        >>> backend_args_json('{"endpoint_url": "http://127.0.0.1:9000"}')
        {'endpoint_url': 'http://127.0.0.1:9000'}
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not JSON ({error}): give a JSON object such as '{_EXAMPLE}'"
        ) from None
    if not isinstance(value, dict):
        kind = {list: "list", str: "string", bool: "boolean"}.get(type(value), "number")
        kind = "null" if value is None else kind
        raise argparse.ArgumentTypeError(
            f"{text!r} is a JSON {kind}, not an object: give a JSON object such as '{_EXAMPLE}'"
        )
    return value


def add_checkpoint_command(subcommands: argparse._SubParsersAction) -> None:
    """The ``checkpoint`` command and its subcommands."""
    checkpoint = subcommands.add_parser(
        "checkpoint",
        help="convert checkpoints",
        description="Convert checkpoints.",
    )
    actions = checkpoint.add_subparsers(dest="action", required=True, metavar="ACTION")
    consolidate = actions.add_parser(
        "consolidate",
        help="write a sharded checkpoint directory (FSDP) as one .pth or .safetensors file",
        description="Gather a sharded checkpoint directory written by torch.distributed."
        "checkpoint (FSDPStrategy, state_dict_cfg='local') into one file, in this process. A "
        ".pth file keeps the whole checkpoint (optimizer, schedulers, loop state...), a "
        ".safetensors file the model weights and meta.",
    )
    consolidate.add_argument("sharded_dir", metavar="SHARDED_DIR", help="the checkpoint directory")
    consolidate.add_argument("out", metavar="OUT", help="the file to write (.pth or .safetensors)")
    consolidate.add_argument(
        "--weights-only",
        action="store_true",
        help="keep only the model weights and meta in a .pth file too",
    )
    consolidate.add_argument(
        "--backend-args",
        type=backend_args_json,
        metavar="JSON",
        help="the treadle.fileio backend arguments (endpoint_url, credentials...) of the store "
        "SHARDED_DIR or OUT is on when it is a URL, as CheckpointHook's backend_args, e.g. "
        f"'{_EXAMPLE}'",
    )
    consolidate.set_defaults(run=run_consolidate)


def run_consolidate(args: argparse.Namespace) -> int:
    """Consolidate ``args.sharded_dir`` into ``args.out``; print what was written."""
    if not args.out.endswith((".pth", ".safetensors")):
        raise ValueError(f"OUT must end in .pth or .safetensors, got {args.out!r}")
    # Imported here: building the parser for any command must not import torch (see startup_gc).
    from treadle.runner.checkpoint.consolidate import consolidate_sharded_checkpoint

    written = consolidate_sharded_checkpoint(
        args.sharded_dir,
        args.out,
        weights_only=True if args.weights_only else None,
        backend_args=args.backend_args,
    )
    weights = written.get("state_dict", {})
    print(
        f"wrote {args.out}: {len(weights)} weights"
        + (f" and {', '.join(k for k in written if k != 'state_dict')}" if len(written) > 1 else "")
    )
    return 0
