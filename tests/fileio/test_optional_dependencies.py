"""A missing optional dependency raises an ImportError naming what to install."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import textwrap

import pytest

from treadle import fileio


def test_missing_boto3_names_the_s3_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "boto3", None)  # import boto3 now raises ImportError
    with pytest.raises(ImportError, match=r"needs 'boto3'.*pip install 'treadle-fileio\[s3\]'"):
        fileio.S3Backend()
    # Ported MMEngine code learns why: MMEngine sends s3:// paths to its Petrel backend.
    with pytest.raises(ImportError, match=r"^S3Backend \(s3:// paths, which treadle reads with "):
        fileio.S3Backend()
    with pytest.raises(ImportError, match=r"with boto3, not MMEngine's Petrel SDK\) needs"):
        fileio.S3Backend()
    with pytest.raises(ImportError, match=r"treadle-fileio\[s3\]"):
        fileio.get("s3://bucket/key", backend_args={"region_name": "only-in-this-test"})


def test_missing_http_implementation_names_the_http_extra():
    # A fresh interpreter where importing aiohttp fails, whether or not it is installed here:
    # fsspec keeps the filesystem classes it loaded, so this process cannot forget it.
    code = textwrap.dedent(
        """
        import sys
        sys.modules["aiohttp"] = None
        from treadle import fileio
        try:
            fileio.get("http://127.0.0.1:9/file.txt")
        except ImportError as error:
            print(error)
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert re.search(r"http:// filesystem needs 'aiohttp'.*treadle-fileio\[http\]", result.stdout)


@pytest.mark.skipif(importlib.util.find_spec("gcsfs") is not None, reason="gcsfs is installed")
def test_missing_fsspec_implementation_names_it():
    with pytest.raises(ImportError, match=r"gcs:// paths need an fsspec implementation.*gcsfs"):
        fileio.get("gcs://bucket/key")
