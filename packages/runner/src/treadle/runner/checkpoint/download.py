"""Downloading a checkpoint over http(s) into a cache directory, once per machine.

The cache is torch.hub's (``$TORCH_HOME/hub/checkpoints``), which MMEngine and torchvision
use too, so a file any of them downloaded is reused. The download goes to a temporary name
that is renamed when complete: an interrupted download never looks cached.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import urllib.error
import urllib.parse
import urllib.request

from treadle import dist
from treadle.fileio import atomic_temporary_path
from treadle.logging import print_log

_CHUNK = 1 << 20
# torch.hub's convention: a file named name-<sha256 prefix>.ext can be checked.
_HASH_IN_NAME = re.compile(r"-([a-f0-9]*)\.")
_TIMEOUT_S = 60


def default_model_dir() -> str:
    import torch.hub

    return os.path.join(torch.hub.get_dir(), "checkpoints")


def cached_file_name(url: str) -> str:
    name = os.path.basename(urllib.parse.urlparse(url).path)
    if not name:
        raise ValueError(f"{url!r} names no file (its path ends with '/'): cannot cache it")
    return name


def _fetch(url: str, destination: str, hash_prefix: str | None) -> None:
    request = urllib.request.Request(url, headers={"User-Agent": "treadle"})
    digest = hashlib.sha256() if hash_prefix else None
    try:
        with (
            urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response,
            open(destination, "wb") as file,
        ):
            while chunk := response.read(_CHUNK):
                file.write(chunk)
                if digest is not None:
                    digest.update(chunk)
    except urllib.error.HTTPError as err:
        if err.code == 404:
            raise FileNotFoundError(
                errno.ENOENT, "No such file or directory (http download: HTTP 404)", url
            ) from None
        raise OSError(f"downloading {url} failed: HTTP {err.code} {err.reason}") from err
    except urllib.error.URLError as err:
        raise OSError(f"downloading {url} failed: {err.reason}") from err
    if digest is not None and not digest.hexdigest().startswith(hash_prefix):
        raise RuntimeError(
            f"the file downloaded from {url} has SHA-256 {digest.hexdigest()}, which does not "
            f"start with {hash_prefix!r} as its name says: the download is corrupt or the file "
            "changed"
        )


def download_checkpoint(
    url: str, model_dir: str | None = None, check_hash: bool = False, progress: bool = False
) -> str:
    """The local path of ``url``'s file in ``model_dir``, downloaded unless already there.
    ``progress`` is accepted for MMEngine's signature; the download is logged either way."""
    model_dir = model_dir or default_model_dir()
    os.makedirs(model_dir, exist_ok=True)
    cached = os.path.join(model_dir, cached_file_name(url))
    if os.path.isfile(cached):
        return cached
    hash_prefix = None
    if check_hash:
        match = _HASH_IN_NAME.search(os.path.basename(cached))
        hash_prefix = match.group(1) if match else None
    print_log(f'Downloading: "{url}" to {cached}', logger="current")
    with atomic_temporary_path(cached) as temporary:
        _fetch(url, temporary, hash_prefix)
    return cached


def _local_rank() -> int:
    try:
        return dist.get_local_rank()
    except Exception:  # a group without the launcher's local-rank variables
        return dist.get_rank()


def download_once_per_machine(
    url: str, model_dir: str | None = None, check_hash: bool = False, progress: bool = False
) -> str:
    """:func:`download_checkpoint` by the first process of each machine while the others
    wait, then by the others (who find the file cached)."""
    if dist.get_world_size() == 1:
        return download_checkpoint(url, model_dir, check_hash, progress)
    if _local_rank() != 0:
        dist.barrier()
        return download_checkpoint(url, model_dir, check_hash, progress)
    try:
        return download_checkpoint(url, model_dir, check_hash, progress)
    finally:
        # Reached even when the download fails: the others must not wait forever.
        dist.barrier()
