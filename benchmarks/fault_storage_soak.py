"""The longer mode of tests/runner/test_fault_storage.py: many trainings checkpointing to a
moto S3 server through a proxy that fails requests at random (503, SlowDown, reset
connections, slow answers past the read timeout).

After every run it checks what the fast tests check once: each checkpoint object that exists
loads whole, ``last_checkpoint`` (local and in the bucket) names an object that exists, no
multipart upload is left pending, and training reached its last iteration. Prints the number
of runs, faults injected, save failures logged, and the time taken.

    hatch run python benchmarks/fault_storage_soak.py --runs 50 --fault-rate 0.3
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import random
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--fault-rate", type=float, default=0.3, help="share of PUTs that fail")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import boto3
    import torch
    from moto.server import ThreadedMotoServer
    from runner_toy_model import toy_iter_cfg
    from storage_proxy import FaultyProxy

    from treadle.fileio.backends import registry_utils
    from treadle.runner.runner import Runner

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    for name, value in (
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_DEFAULT_REGION", "us-east-1"),
    ):
        os.environ[name] = value
    client = boto3.client("s3", endpoint_url=endpoint)
    proxy = FaultyProxy(endpoint)
    rng = random.Random(args.seed)
    faults = [(503, "ServiceUnavailable"), (503, "SlowDown"), (500, "InternalError"), "reset"]
    faults.append(("slow", 0.5))
    injected = failures = 0
    start = time.perf_counter()
    for run in range(args.runs):
        bucket = f"soak-{run}-{rng.getrandbits(32):08x}"
        client.create_bucket(Bucket=bucket)
        registry_utils.backend_instances.clear()

        def decide(method: str, path: str) -> bool:
            return method == "PUT" and ".pth" in path and rng.random() < args.fault_rate

        proxy._faults = [[decide, rng.choice(faults), None]]
        with tempfile.TemporaryDirectory() as work_dir:
            checkpoint = dict(
                type="CheckpointHook",
                interval=2,
                by_epoch=False,
                max_keep_ckpts=2,
                out_dir=f"s3://{bucket}/ckpts",
                backend_args=dict(
                    endpoint_url=proxy.url,
                    max_attempts=3,
                    backoff=0.001,
                    client_config=dict(read_timeout=0.2),
                ),
            )
            cfg = toy_iter_cfg(
                work_dir,
                val_dataloader=None,
                val_evaluator=None,
                val_cfg=None,
                default_hooks=dict(checkpoint=checkpoint),
                log_level="ERROR",
            )
            before = len(proxy.requests)
            runner = Runner(**cfg)
            handler = _Counter()
            runner.logger.addHandler(handler)
            runner.train()
            injected += sum(1 for _, _, action in proxy.requests[before:] if action is not None)
            failures += handler.count
            assert runner.iter == 10, runner.iter
            listing = client.list_objects_v2(Bucket=bucket).get("Contents", [])
            keys = {item["Key"] for item in listing}
            for key in keys:
                if key.endswith(".pth"):
                    body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
                    torch.load(io.BytesIO(body), weights_only=False)  # whole
            local = os.path.join(work_dir, "last_checkpoint")
            if os.path.exists(local):
                with open(local) as file:
                    named = file.read().split(f"s3://{bucket}/", 1)[1]
                assert named in keys, (named, sorted(keys))
            assert "Uploads" not in client.list_multipart_uploads(Bucket=bucket)
    took = time.perf_counter() - start
    proxy.close()
    server.stop()
    print(
        f"{args.runs} runs, {injected} faults injected, {failures} saves given up after the "
        f"retries (logged, training went on); every pointer named a whole checkpoint; "
        f"{took:.1f} s"
    )
    return 0


class _Counter(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "could not save" in record.getMessage():
            self.count += 1


if __name__ == "__main__":
    sys.exit(main())
