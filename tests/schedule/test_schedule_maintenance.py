"""The scheduled job's maintenance says what vacuum kept, and why, beside what it removed."""

from __future__ import annotations

from job_harness import FAST, Job, json_lines

from toolkit.cli import ExitCode


def test_maintenance_says_vacuum_kept_files_younger_than_its_window(job: Job) -> None:
    # maintenance after every run: the second compacts two snapshots' files into one, and
    # the files it replaced are younger than the default 168-hour window, so none go yet
    job.config.write_text(
        FAST.replace("[schedule]\n", '[schedule]\nmaintain_every = "0s"\n'), encoding="utf-8"
    )
    result = job.run("--every", "0.2s", "--max-runs", "2", "--log-format", "json")
    assert result.exit_code == ExitCode.OK, result.output
    maintenance = job.status()["last_maintenance"]
    assert maintenance["files_after"] < maintenance["files_before"]  # compaction replaced some
    assert maintenance["vacuumed"] == 0
    assert maintenance["vacuum_kept"] >= maintenance["files_before"] - maintenance["files_after"]
    assert maintenance["vacuum_retention_hours"] == 168
    lines = json_lines(result.stderr)
    logged = [line for line in lines if line.get("message") == "maintenance done"]
    assert logged and logged[-1]["vacuum_kept"] == maintenance["vacuum_kept"]
