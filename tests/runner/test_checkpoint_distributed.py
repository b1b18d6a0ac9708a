"""Checkpoints in a real 2-process gloo group (workers/checkpoint_scenarios.py): one download
per machine, wrapped models saved on rank 0 and loaded on every rank, strict errors on every
rank."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import gloo_group
import pytest
import torch

SCENARIOS = Path(__file__).parent / "workers" / "checkpoint_scenarios.py"
WORLD_SIZE = 2


@pytest.fixture(scope="module")
def group(tmp_path_factory):
    served = tmp_path_factory.mktemp("served")
    torch.save({"w": torch.arange(3.0)}, served / "weights.pth")
    requests = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            requests.append(self.path)
            super().do_GET()

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(served))
    )
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/weights.pth"
    try:
        results = gloo_group.run_group(
            SCENARIOS,
            WORLD_SIZE,
            tmp_path_factory.mktemp("checkpoint"),
            extra_env={"CHECKPOINT_URL": url},
        )
    finally:
        httpd.shutdown()
        httpd.server_close()
    return (lambda rank, name: gloo_group.scenario_value(results, rank, name)), requests


def test_http_checkpoint_is_downloaded_once_per_machine(group):
    value, requests = group
    for rank in range(WORLD_SIZE):
        assert value(rank, "scenario_http_download_once_per_machine") == [0.0, 1.0, 2.0]
    assert requests == ["/weights.pth"]


def test_a_wrapped_model_saved_on_rank_0_loads_on_every_rank(group):
    value, _ = group
    for rank in range(WORLD_SIZE):
        result = value(rank, "scenario_save_wrapped_on_rank_0_and_load_everywhere")
        assert result["names"] == ["backbone.weight", "backbone.bias", "head.weight", "head.bias"]
        assert result["same"] is True
        assert result["latest"].endswith("epoch_1.pth")


def test_strict_mismatch_raises_on_every_rank(group):
    value, _ = group
    for rank in range(WORLD_SIZE):
        message = value(rank, "scenario_strict_mismatch_raises_on_every_rank")
        assert "missing keys in source state_dict: head.bias" in message
