"""Pages: probe a source file, render its pages (in worker processes) and turn them upright."""
