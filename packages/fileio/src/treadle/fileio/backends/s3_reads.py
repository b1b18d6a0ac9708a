"""Reading a whole S3 object into bytes, for S3Backend.get.

Every read starts with one plain GET. An object of at most ``multipart_threshold`` bytes is
read from it, as it always was. A larger one is read in ``multipart_chunksize`` parts: the
first part from the stream that GET already opened, the others by ranged GETs, with
``max_concurrency`` connections at work at a time (that stream's among them). Each ranged GET
is ``If-Match`` the first GET's ETag, so that every part comes from the same version of the
object. Each part is copied into one buffer as it arrives, and that buffer becomes the bytes
returned (no copy at the end). With ``max_concurrency=1``, the first GET's stream brings all.

This replaced boto3's transfer manager here (issue 42) because of what the manager costs a
read into memory: it cannot use a GET already sent (it learns the size from a HEAD request and
then GETs every part, so a large read took two requests more than it needs: the first GET,
dropped, and the HEAD), and it passes every 256 KiB of the object through a queue and an I/O
thread into a BytesIO.

Retries: the client's ``needs-retry`` handler (s3_retry) retries failed requests; a stream
that breaks while its bytes arrive is fetched again here, the part alone, within the same
``max_attempts``. An object replaced while it is read (``PreconditionFailed``, or another size)
is read again from the start, within ``max_attempts`` too.
"""

from __future__ import annotations

import io
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import botocore.exceptions

from .s3_retry import RetryPolicy, is_transient

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class _ObjectChanged(Exception):
    """The object was replaced between two requests of one read: read it again."""


class ObjectReplacedError(Exception):
    """The object was replaced while it was read, at each of ``attempts`` tries.

    S3Backend.get turns it into a StorageError naming the path.
    """

    def __init__(self, attempts: int) -> None:
        super().__init__(f"the object was replaced while it was read, {attempts} times in a row")
        self.attempts = attempts


def read_object(
    client: Any, bucket: str, key: str, transfer_config: Any, policy: RetryPolicy
) -> bytes:
    """The bytes of ``s3://bucket/key``; see the module's docstring.

    Example:
        >>> read_object(backend.client, 'bucket', 'big.bin', backend.transfer_config,
        ...             backend.retry_policy)
        b'...'
    """
    attempt = 1
    while True:
        response = client.get_object(Bucket=bucket, Key=key)
        bounds = _part_bounds(response["ContentLength"], transfer_config)
        if len(bounds) > 1:
            # The parts retry themselves: an error that arrives here is final.
            workers = min(transfer_config.max_concurrency - 1, len(bounds) - 1)
            try:
                return _read_parts(client, bucket, key, response, bounds, workers, policy)
            except _ObjectChanged:
                if attempt >= policy.max_attempts:
                    raise ObjectReplacedError(attempt) from None
        else:
            try:
                return _read_body(response["Body"])
            except Exception as exc:  # the connection broke while the body arrived
                if attempt >= policy.max_attempts or not is_transient(exc):
                    raise
        time.sleep(policy.delay(attempt))
        attempt += 1


def _part_bounds(size: int, transfer_config: Any) -> list[tuple[int, int]]:
    """``[(start, end), ...]`` of the parts to read; one part for a small object, or when
    one connection is all that ``max_concurrency`` allows."""
    chunk = transfer_config.multipart_chunksize
    if size <= transfer_config.multipart_threshold or transfer_config.max_concurrency < 2:
        return [(0, size)]
    return [(start, min(start + chunk, size)) for start in range(0, size, chunk)]


def _read_body(body: Any) -> bytes:
    # Read to the end, the connection goes back to the pool by itself; closed otherwise.
    try:
        data: bytes = body.read()
    except BaseException:
        body.close()
        raise
    return data


def _read_parts(
    client: Any,
    bucket: str,
    key: str,
    response: dict[str, Any],
    bounds: list[tuple[int, int]],
    workers: int,
    policy: RetryPolicy,
) -> bytes:
    size = response["ContentLength"]
    if_match = {"IfMatch": response["ETag"]} if response.get("ETag") else {}
    buffer = io.BytesIO()
    view: memoryview | None = None
    ready = threading.Event()  # set once ``view`` exists (or never will: then ``stop`` is set)
    stop = threading.Event()  # set when a part failed: the parts not begun are not fetched

    def fetch(index: int, first_attempt: int = 1) -> None:
        start, end = bounds[index]
        data = _read_range(client, bucket, key, start, end, size, if_match, policy, first_attempt)
        ready.wait()
        if view is not None and not stop.is_set():
            view[start:end] = data  # copied in while other parts are still on their way

    # The parts after the first, taken in order by the pool's threads and, once it has the
    # first part, by this thread too: max_concurrency connections all along.
    pending = iter(range(1, len(bounds)))
    taking = threading.Lock()

    def work() -> None:
        while not stop.is_set():
            with taking:
                index = next(pending, None)
            if index is None:
                return
            fetch(index)

    try:
        with ThreadPoolExecutor(workers, thread_name_prefix="treadle-s3-get") as pool:
            futures = []
            try:
                futures += [pool.submit(work) for _ in range(workers)]
                # The buffer of the whole object, allocated once the requests are on their
                # way; getvalue() hands out the BytesIO's own bytes (no copy: no view is left).
                buffer.seek(size - 1)
                buffer.write(b"\0")
                whole = view = buffer.getbuffer()
                ready.set()
                _read_first_part(response["Body"], bounds[0][1], whole, fetch, policy)
                work()
                for future in futures:
                    future.result()
            except BaseException:
                stop.set()
                ready.set()  # no thread waits for a buffer that will not come
                response["Body"].close()
                raise
    finally:  # after the pool: no thread writes into the view any more
        if view is not None:
            view.release()
    return buffer.getvalue()


def _read_first_part(
    body: Any, end: int, view: memoryview, fetch: Callable[[int, int], None], policy: RetryPolicy
) -> None:
    """The first part, from the stream of the first GET; if that stream breaks, by a ranged
    GET of its own (attempt 2 on)."""
    try:
        data = body.read(end)
        if len(data) != end:
            raise _short_read(len(data), end)
        view[:end] = data
        return
    except Exception as exc:
        if not is_transient(exc) or policy.max_attempts < 2:
            raise
    finally:
        body.close()  # the rest of this stream is not needed
    time.sleep(policy.delay(1))
    fetch(0, 2)


def _read_range(
    client: Any,
    bucket: str,
    key: str,
    start: int,
    end: int,
    size: int,
    if_match: dict[str, str],
    policy: RetryPolicy,
    attempt: int,
) -> bytes:
    """Bytes ``start`` to ``end`` (exclusive) of an object of ``size`` bytes."""
    while True:
        try:
            response = client.get_object(
                Bucket=bucket, Key=key, Range=f"bytes={start}-{end - 1}", **if_match
            )
        except botocore.exceptions.ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "PreconditionFailed":
                raise _ObjectChanged from exc
            raise
        # Without an ETag to match, a new version shows as another total size.
        content_range = response.get("ContentRange")
        if content_range and not content_range.endswith(f"/{size}"):
            response["Body"].close()
            raise _ObjectChanged
        try:
            data: bytes = _read_body(response["Body"])
            if len(data) != end - start:
                raise _short_read(len(data), end - start)
            return data
        except Exception as exc:  # the stream broke while the part arrived
            if attempt >= policy.max_attempts or not is_transient(exc):
                raise
        time.sleep(policy.delay(attempt))
        attempt += 1


def _short_read(actual: int, expected: int) -> Exception:
    error: Exception = botocore.exceptions.IncompleteReadError(
        actual_bytes=actual, expected_bytes=expected
    )
    return error
