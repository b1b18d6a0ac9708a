"""treadle.fileio serves projects without training: importing it never pulls torch or numpy,
and it leaves fsspec, boto3 and yaml to the first path that needs them."""

import subprocess
import sys


def imported_after(code: str, modules: set[str]) -> list[str]:
    probe = f"import sys; {code}; print(sorted({modules!r} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return eval(out.stdout.strip())


def test_import_pulls_neither_torch_nor_numpy():
    assert imported_after("import treadle.fileio", {"torch", "numpy"}) == []


def test_import_pulls_no_optional_or_heavy_module():
    heavy = {"fsspec", "boto3", "botocore", "s3transfer", "yaml", "json", "pickle", "tempfile"}
    assert imported_after("import treadle.fileio", heavy) == []


def test_local_files_need_neither_fsspec_nor_boto3(tmp_path):
    code = (
        "import treadle.fileio as f; "
        f"f.put(b'x', {str(tmp_path / 'a.bin')!r}); f.get({str(tmp_path / 'a.bin')!r}); "
        f"list(f.list_dir_or_file({str(tmp_path)!r}))"
    )
    assert imported_after(code, {"fsspec", "boto3", "botocore"}) == []
