"""Deploy progress follows Nornir's own task events (the processor), per device and thread-safely."""

from __future__ import annotations

from nornir import InitNornir
from nornir.core.task import Result, Task

from nr_run.runbooks.deploy import TASK_LABELS
from nr_run.runbooks.progress import DeviceProgress, ProgressProcessor


def test_processor_marks_running_and_failed_devices(tmp_path):
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text("a: {}\nb: {}\n")
    nr = InitNornir(inventory={"plugin": "SimpleInventory", "options": {"host_file": str(hosts)}},
                    logging={"enabled": False})
    progress = DeviceProgress(None, ["a", "b"])
    history: list[tuple[str, str]] = []
    original = progress.set
    progress.set = lambda device, state, note="": (history.append((device, state)), original(device, state, note))

    def commit_device(task: Task) -> Result:
        if task.host.name == "b":
            raise RuntimeError("commit refused")
        return Result(host=task.host, result="ok")

    nr.with_processors([ProgressProcessor(progress, TASK_LABELS)]).run(task=commit_device)
    assert ("a", "committing") in history and ("b", "committing") in history
    assert progress.states == {"a": "committing", "b": "failed"}
