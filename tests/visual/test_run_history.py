"""Issue 43, one history across resumes (treadle.visual.run_history): the records a resumed run
writes, read back through any number of resumes, cut at each checkpoint, after a move; and the
plot and `python -m treadle.visual plot` drawing them. The real runs: tests/runner/
test_run_history_resume.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from treadle.visual import read_history
from treadle.visual.__main__ import main
from treadle.visual.plot import plot_file, plot_scalars
from treadle.visual.run_history import (
    RESUME_RECORD,
    read_resume_record,
    write_resume_record,
)


def run(work_dir: Path, name: str, lines: list[dict], resumed: tuple[str, int] | None = None):
    """A run folder WORK_DIR/NAME/vis_data with ``lines`` and, for a resumed run, its record."""
    vis_dir = work_dir / name / "vis_data"
    vis_dir.mkdir(parents=True)
    if lines:
        (vis_dir / "scalars.json").write_text("".join(json.dumps(line) + "\n" for line in lines))
    if resumed is not None:
        write_resume_record(vis_dir, work_dir / resumed[0], resumed[1])
    return work_dir / name


def train(first: int, last: int, epoch_every: int = 10, iter_key: bool = True) -> list[dict]:
    """Training lines for iterations first..last and a validation line at each epoch's end
    (step: the epoch; iter: the iteration, unless ``iter_key`` is off, as under compat)."""
    lines = []
    for i in range(first, last + 1):
        lines.append({"loss": 1 / i, "step": i, **({"iter": i} if iter_key else {})})
        if i % epoch_every == 0:
            lines.append({"acc": i, "step": i // epoch_every, **({"iter": i} if iter_key else {})})
    return lines


@pytest.fixture
def chain(tmp_path: Path) -> Path:
    """Run a: 1-30 (checkpoint at 20 resumed by b); b: 21-45 (checkpoint at 40 resumed by c);
    c: 41-50."""
    run(tmp_path, "20240101_000000", train(1, 30))
    run(tmp_path, "20240101_010000", train(21, 45), ("20240101_000000", 20))
    run(tmp_path, "20240101_020000", train(41, 50), ("20240101_010000", 40))
    return tmp_path


def test_the_record_is_relative_to_its_folder(tmp_path):
    vis_dir = tmp_path / "b" / "vis_data"
    path = write_resume_record(vis_dir, tmp_path / "a", 20, epoch=2, checkpoint=tmp_path / "e.pth")
    assert path == vis_dir / RESUME_RECORD
    assert json.loads(path.read_text()) == {
        "run": "../../a",
        "run_abs": str(tmp_path / "a"),
        "iter": 20,
        "epoch": 2,
        "checkpoint": "../../e.pth",
    }
    record = read_resume_record(vis_dir)
    assert (record.run, record.iteration, record.epoch) == ("../../a", 20, 2)
    assert read_resume_record(tmp_path) is None
    write_resume_record(vis_dir, tmp_path / "a", 20, checkpoint="s3://bucket/e.pth")
    assert read_resume_record(vis_dir).checkpoint == "s3://bucket/e.pth"


def test_a_broken_record_names_its_file(tmp_path):
    (tmp_path / RESUME_RECORD).write_text('{"run": "../a"}')
    with pytest.raises(ValueError, match=rf"{RESUME_RECORD}: not a record .*expected a JSON"):
        read_resume_record(tmp_path)


def test_every_iteration_once_across_two_resumes(chain):
    history = read_history(chain)
    assert [run.run_dir.name for run in history.runs] == [
        "20240101_000000",
        "20240101_010000",
        "20240101_020000",
    ]
    assert [run.up_to for run in history.runs] == [20, 40, None]
    assert history.resume_points == [20, 40] and history.broken is None
    loss = history.series["loss"]
    assert loss.iteration_axis() == list(range(1, 51))
    assert loss.values == [1 / i for i in range(1, 51)]
    # The validation at 20 comes from a (logged before b resumed), at 30 from b (a's was
    # superseded), at 40 from b, at 50 from c.
    assert history.series["acc"].iteration_axis() == [10, 20, 30, 40, 50]
    assert history.found.path == chain / "20240101_020000" / "vis_data" / "scalars.json"


def test_lines_without_iter_are_cut_where_the_first_line_passes_the_checkpoint(tmp_path):
    # Under treadle.compat scalars.json holds MMEngine's keys only: validation lines carry
    # their epoch as step. The file is read up to the first line past the checkpoint.
    run(tmp_path, "a", train(1, 30, iter_key=False))
    run(tmp_path, "b", train(21, 30, iter_key=False), ("a", 20))
    history = read_history(tmp_path / "b")
    assert history.series["loss"].steps == list(range(1, 31))
    assert history.series["acc"].steps == [1, 2, 3]  # a's epoch 3 was superseded by b's


def test_a_resume_from_an_older_checkpoint_cuts_every_earlier_run_there(tmp_path):
    # c resumed b's chain at 15, before b's own resume point (25): nothing of b is drawn, and
    # a up to 15.
    run(tmp_path, "a", train(1, 30))
    run(tmp_path, "b", [], ("a", 25))  # b crashed before writing scalars
    run(tmp_path, "c", train(16, 20), ("b", 15))
    history = read_history(tmp_path / "c")
    assert [run.up_to for run in history.runs] == [15, 15, None]
    assert history.runs[1].scalars is None
    assert history.series["loss"].iteration_axis() == list(range(1, 21))


def test_single_run_reads_the_newest_alone(chain):
    history = read_history(chain, single_run=True)
    assert len(history.runs) == 1
    assert history.series["loss"].iteration_axis() == list(range(41, 51))


def test_a_moved_or_copied_work_dir_reads_its_own_runs(chain, tmp_path):
    copied = tmp_path / "copy"
    shutil.copytree(chain, copied, ignore=shutil.ignore_patterns("copy"))
    history = read_history(copied)
    assert all(copied in run.run_dir.parents for run in history.runs)
    moved = tmp_path / "elsewhere" / "moved"
    shutil.move(str(copied), str(moved))
    history = read_history(moved)
    assert [run.run_dir.parent for run in history.runs] == [moved] * 3
    assert history.series["loss"].iteration_axis() == list(range(1, 51))


def test_the_absolute_path_is_tried_when_the_relative_one_leads_nowhere(chain, tmp_path):
    # The newest run alone was copied elsewhere: its record's absolute path still finds b.
    alone = tmp_path / "alone" / "20240101_020000"
    shutil.copytree(chain / "20240101_020000", alone)
    history = read_history(alone)
    assert [run.run_dir for run in history.runs[:2]] == [
        chain / "20240101_000000",
        chain / "20240101_010000",
    ]


def test_a_missing_earlier_run_ends_the_history_with_a_warning(chain):
    shutil.rmtree(chain / "20240101_000000")
    with pytest.warns(
        UserWarning, match=r"resumed from ../../20240101_000000 at iteration 20, but"
    ):
        history = read_history(chain)
    assert len(history.runs) == 2 and "not there" in history.broken
    assert history.series["loss"].iteration_axis() == list(range(21, 51))


def test_a_record_that_leads_back_to_itself_stops(tmp_path):
    run(tmp_path, "a", train(1, 5), ("a", 3))
    with pytest.warns(UserWarning, match=r"leads back to a run already read"):
        history = read_history(tmp_path / "a")
    assert history.series["loss"].iteration_axis() == list(range(1, 6))


def test_the_plot_marks_each_resume_and_says_which_runs_it_drew(chain, capsys):
    figure = plot_scalars(chain, keys=["loss"])
    (axes,) = figure.axes
    assert [line.get_xdata()[0] for line in axes.lines[1:]] == [20, 40]  # the resume marks
    assert list(axes.lines[0].get_xdata()) == list(range(1, 51))
    assert "with the 2 runs it resumed from" in figure.texts[0].get_text()
    assert len(plot_scalars(chain, keys=["loss"], single_run=True).axes[0].lines) == 1
    result = plot_file(chain)
    assert result.history is not None and len(result.history.runs) == 3
    assert main(["plot", str(chain), "--keys", "loss"]) == 0
    out = capsys.readouterr().out.splitlines()
    newest = chain / "20240101_020000" / "vis_data" / "scalars.json"
    assert out[0] == f"read {newest} (the newest of 3 under {chain})"
    assert out[1].endswith(
        "20240101_000000/vis_data/scalars.json up to iteration 20 (resumed from there)"
    )
    assert out[2].endswith(
        "20240101_010000/vis_data/scalars.json up to iteration 40 (resumed from there)"
    )
    assert main(["plot", str(chain), "--keys", "loss", "--single-run"]) == 0
    assert "resumed from there" not in capsys.readouterr().out
