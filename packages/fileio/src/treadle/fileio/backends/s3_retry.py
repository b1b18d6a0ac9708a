"""Retries of S3 requests, and the errors S3Backend raises when they run out.

botocore's own retries are switched off (``total_max_attempts=1``) and this policy answers
botocore's ``needs-retry`` event instead, for every HTTP request the client sends, those of the
transfer manager's parts included. So a failed part of a multipart upload is sent again on its
own, not the whole object, and the backoff is ours to configure (botocore's standard mode waits
up to 1 s, 2 s, 4 s, ... and takes no base delay).

Transient: HTTP 5xx and 429, the throttling and timeout error codes of S3, and connection
errors (refused, reset, closed, timed out).
"""

from __future__ import annotations

import logging
import random

import botocore.exceptions

from ..errors import StorageError, file_not_found

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

logger = logging.getLogger(__name__)

TRANSIENT_CODES = frozenset(
    {
        "SlowDown",
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottled",
        "RequestThrottledException",
        "RequestLimitExceeded",
        "TooManyRequestsException",
        "BandwidthLimitExceeded",
        "RequestTimeout",
        "RequestTimeoutException",
        "InternalError",
        "ServiceUnavailable",
    }
)
NOT_FOUND_CODES = frozenset({"NoSuchKey", "NotFound", "404"})
# Errors of the HTTP connection itself: botocore's own, and the built-in ones that escape it.
TRANSIENT_EXCEPTIONS = (
    botocore.exceptions.HTTPClientError,  # connection closed or reset, read timeout
    botocore.exceptions.ConnectionError,  # endpoint unreachable, connect timeout
    botocore.exceptions.IncompleteReadError,
    ConnectionError,
    TimeoutError,
)


def is_transient_response(status: int, code: str) -> bool:
    return status >= 500 or status == 429 or code in TRANSIENT_CODES


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, botocore.exceptions.ClientError):
        error = exc.response.get("Error", {})
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        return is_transient_response(status, error.get("Code", ""))
    return isinstance(exc, TRANSIENT_EXCEPTIONS)


class RetryPolicy:
    """Exponential backoff with jitter: the n-th retry waits ``backoff * 2**(n-1)`` seconds,
    at most ``max_backoff``, times a random factor in [0.5, 1] so that parallel requests
    spread out. ``max_attempts`` counts the first try.

    Example:
        >>> client.meta.events.register('needs-retry.s3', RetryPolicy(5, 0.1, 20).needs_retry)
    """

    def __init__(self, max_attempts: int, backoff: float, max_backoff: float) -> None:
        if not isinstance(max_attempts, int) or max_attempts < 1:
            raise ValueError(f"max_attempts must be an int >= 1, got {max_attempts!r}")
        if backoff < 0 or max_backoff < 0:
            raise ValueError(f"backoff and max_backoff must be >= 0, got {backoff}, {max_backoff}")
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff

    def delay(self, attempt: int) -> float:
        """Seconds to wait after the failed ``attempt`` (1 for the first try)."""
        return min(self.max_backoff, self.backoff * 2.0 ** (attempt - 1)) * random.uniform(0.5, 1.0)

    def needs_retry(
        self,
        attempts: int,
        response: tuple[Any, ...] | None = None,
        caught_exception: BaseException | None = None,
        operation: object = None,
        **_: object,
    ) -> float | None:
        """botocore's needs-retry event: seconds to sleep before the next try, or None."""
        if attempts >= self.max_attempts:
            return None
        if caught_exception is not None:
            transient = isinstance(caught_exception, TRANSIENT_EXCEPTIONS)
            reason = repr(caught_exception)
        elif response is not None:
            http_response, parsed = response
            code = parsed.get("Error", {}).get("Code", "")
            transient = is_transient_response(http_response.status_code, code)
            reason = f"HTTP {http_response.status_code} {code}".strip()
        else:
            return None
        if not transient:
            return None
        delay = self.delay(attempts)
        name = getattr(operation, "name", "request")
        logger.debug(
            "S3 %s attempt %d failed (%s); retrying in %.3f s", name, attempts, reason, delay
        )
        return delay


def storage_error(
    exc: BaseException, operation: str, path: str, bucket: str, key: str, policy: RetryPolicy
) -> OSError:
    """The error to raise for ``exc``, naming the operation, bucket and key."""
    detail = f"bucket {bucket!r}, key {key!r}"
    if isinstance(exc, botocore.exceptions.ClientError):
        code = exc.response.get("Error", {}).get("Code", "")
        if code in NOT_FOUND_CODES:
            return file_not_found(path, "S3Backend", detail)
        if code == "NoSuchBucket":
            return file_not_found(path, "S3Backend", f"bucket {bucket!r} does not exist")
    if is_transient(exc):
        if isinstance(exc, botocore.exceptions.ClientError):
            attempts = exc.response.get("ResponseMetadata", {}).get("RetryAttempts", 0) + 1
        else:
            attempts = policy.max_attempts
        failed = f"failed after {attempts} attempt{'s' if attempts > 1 else ''}"
    else:
        failed = "failed"
    return StorageError(
        f"S3Backend: {operation} of {path!r} ({detail}) {failed}: {exc}",
        backend="S3Backend",
        path=path,
        bucket=bucket,
        key=key,
    )
