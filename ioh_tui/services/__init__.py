"""App-level services that are neither engine nor UI: workspace changes, process metrics."""

from ioh_tui.services.metrics import ProcessSample, sample_processes
from ioh_tui.services.watcher import FileChange, WorkspaceWatcher

__all__ = ["FileChange", "ProcessSample", "WorkspaceWatcher", "sample_processes"]
