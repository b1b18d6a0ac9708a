"""The boto3 client and transfer configuration of one S3Backend.

boto3 and botocore are imported inside these functions, when a backend is made, so that
``import treadle.fileio`` stays free of them.
"""

from __future__ import annotations

from ..optional import import_boto3

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .s3_retry import RetryPolicy

MiB = 1024 * 1024


def build_client(
    retry_policy: RetryPolicy,
    *,
    endpoint_url: str | None = None,
    region_name: str | None = None,
    aws_access_key_id: str | None = None,
    aws_secret_access_key: str | None = None,
    aws_session_token: str | None = None,
    profile_name: str | None = None,
    addressing_style: str | None = None,
    max_concurrency: int = 10,
    client_config: dict[str, Any] | None = None,
) -> Any:
    """An S3 client whose failed requests ``retry_policy`` retries.

    Arguments left None fall back to boto3's configuration chain (``AWS_*`` environment
    variables, ``~/.aws/config`` and ``~/.aws/credentials``, instance roles). The client has
    its own session: boto3 clients may be shared by threads, sessions may not.

    Example:
        >>> client = build_client(RetryPolicy(5, 0.1, 20), endpoint_url='http://127.0.0.1:9000')
    """
    boto3 = import_boto3()
    from botocore.config import Config

    config = Config(
        # Our retry policy decides (see s3_retry); botocore makes one try per request.
        retries={"mode": "standard", "total_max_attempts": 1},
        # Every concurrent transfer holds a connection; two spare ones serve the other calls.
        max_pool_connections=max(10, max_concurrency + 2),
        s3={"addressing_style": addressing_style} if addressing_style else None,
        **(client_config or {}),
    )
    session = boto3.session.Session(
        aws_access_key_id=aws_access_key_id,
        aws_secret_access_key=aws_secret_access_key,
        aws_session_token=aws_session_token,
        region_name=region_name,
        profile_name=profile_name,
    )
    client = session.client("s3", endpoint_url=endpoint_url, config=config)
    client.meta.events.register("needs-retry.s3", retry_policy.needs_retry)
    return client


def build_transfer_config(
    multipart_threshold: int, multipart_chunksize: int, max_concurrency: int
) -> Any:
    """The transfer manager's settings: objects above ``multipart_threshold`` bytes move in
    ``multipart_chunksize`` parts, ``max_concurrency`` at a time."""
    import_boto3()
    from boto3.s3.transfer import TransferConfig

    return TransferConfig(
        multipart_threshold=multipart_threshold,
        multipart_chunksize=multipart_chunksize,
        max_concurrency=max_concurrency,
    )


def create_transfer_manager(client: Any, transfer_config: Any) -> Any:
    """A transfer manager over ``client``, for a ``with`` block: leaving the block waits for
    its transfers, or cancels them when the block raised."""
    from boto3.s3.transfer import create_transfer_manager as create

    return create(client, transfer_config)
