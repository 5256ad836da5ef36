"""The ``ocr-daemon`` commands, one module per command (``daemon.cli`` builds the parser and maps
errors to exit codes).

Contract: each command module has ``add_arguments(parser)`` (its options, on the subcommand's
parser) and ``run(args) -> int`` (the exit code, ``daemon.errors.ExitCode``). A command does the
argument handling and the printing; what it runs is its stage's (the pipeline, the journal's
repair, the writers, the config reference). ``common`` holds what several commands share.
"""
