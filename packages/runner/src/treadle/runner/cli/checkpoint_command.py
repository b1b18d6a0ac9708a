"""``treadle checkpoint consolidate SHARDED_DIR OUT``: a sharded (FSDP) checkpoint as one
``.pth`` or ``.safetensors`` file."""

from __future__ import annotations

import argparse


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
    consolidate.set_defaults(run=run_consolidate)


def run_consolidate(args: argparse.Namespace) -> int:
    """Consolidate ``args.sharded_dir`` into ``args.out``; print what was written."""
    if not args.out.endswith((".pth", ".safetensors")):
        raise ValueError(f"OUT must end in .pth or .safetensors, got {args.out!r}")
    # Imported here: building the parser for any command must not import torch (see startup_gc).
    from treadle.runner.checkpoint.consolidate import consolidate_sharded_checkpoint

    written = consolidate_sharded_checkpoint(
        args.sharded_dir, args.out, weights_only=True if args.weights_only else None
    )
    weights = written.get("state_dict", {})
    print(
        f"wrote {args.out}: {len(weights)} weights"
        + (f" and {', '.join(k for k in written if k != 'state_dict')}" if len(written) > 1 else "")
    )
    return 0
