"""Service: the daemon process (service), one document through the stages (pipeline), systemd glue."""
