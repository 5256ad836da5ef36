"""Intake: notice files in the inboxes (watch) and hand them on once complete (stability)."""
