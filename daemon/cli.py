"""The ``ocr-daemon`` command.

Exit codes (the only place they are produced is ``main`` via ``daemon.errors.exit_code_for``):
0 ok; 1 some documents failed / unexpected error; 2 invalid config or usage; 3 the OCR engine
could not start; 4 state dir/journal unusable (or damaged); 5 another ocr-daemon holds the state
dir; 130 interrupted; 141 the reader of the output went away (``ocr-daemon status | head``: like
any Unix tool killed by SIGPIPE, no traceback).

``build_parser()`` is the parser: one subcommand per module of ``daemon.commands`` (``COMMANDS``,
in the order ``--help`` lists them), each adding its own options and handling its arguments;
``main(argv)`` applies the process environment (``daemon.procenv``) first, runs the command and
turns its errors into the exit codes above: a ``ConfigError`` is its problems on stderr, a
``FatalError`` or a bad file's ``InputError`` one ``ocr-daemon: ...`` line, anything else a logged
traceback. ``status`` needs only the state folder (``daemon.commands.common.state_dir_of``);
``once`` processes files several at once, with a ``tqdm`` progress bar on a terminal -- the widely
used bar library, already a dependency of the vLLM stack; it redraws in place, sizes to the
terminal and computes rates -- and plain progress lines on stderr otherwise.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from types import ModuleType

from daemon import __version__, procenv
from daemon.commands import check_config, config, convert, journal, model, once, requeue, route, run, status
from daemon.errors import ConfigError, ExitCode, FatalError, exit_code_for

#: Exit code after the output's reader went away (128 + SIGPIPE, as a shell reports a tool it killed).
EXIT_BROKEN_PIPE = 141

log = logging.getLogger(__name__)

#: (command, its module, help), in the order ``--help`` lists them.
COMMANDS: tuple[tuple[str, ModuleType, str], ...] = (
    ("run", run, "run the daemon in the foreground (what the systemd unit runs)"),
    ("check-config", check_config, "validate the rules file; report every error at once"),
    ("once", once, "process files now as if dropped into their inbox; print where outputs went"),
    ("route", route, "show how a file would be classified and routed (OCRs it, writes nothing)"),
    ("status", status, "documents by state and recent failures"),
    ("requeue", requeue, "queue failed documents (or given files) again"),
    ("config", config, "print the rules.yaml JSON Schema, or the effective config with defaults filled in"),
    ("convert", convert, "rebuild outputs from a saved raw model-output Markdown file (no OCR)"),
    ("model", model, "fetch the model, or write a dummy-weights model folder for testing"),
    ("journal", journal, "rebuild the journal from the outputs, or restore a backup (with the daemon stopped)"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ocr-daemon", description="Watched-folder OCR daemon.")
    parser.add_argument("--version", action="version", version=f"ocr-daemon {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module, text in COMMANDS:
        p = sub.add_parser(name, help=text)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    # First: before any command imports Tesseract or starts a render worker (daemon.procenv says why).
    procenv.apply()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command not in ("run",):
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        code = int(args._run(args))
        sys.stdout.flush()  # a closed pipe shows here, not at exit (where it would be a traceback)
        return code
    except BrokenPipeError:
        return _broken_pipe()
    except ConfigError as e:
        for p in e.problems:
            print(p, file=sys.stderr)
        return ExitCode.CONFIG
    except FatalError as e:
        print(f"ocr-daemon: {e}", file=sys.stderr)
        return int(e.exit_code)
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except Exception as e:
        from daemon.errors import InputError

        if isinstance(e, InputError):
            print(f"ocr-daemon: {e.reason}", file=sys.stderr)
        else:
            log.exception("ocr-daemon: unexpected error")
        return int(exit_code_for(e))


def _broken_pipe() -> int:
    """The reader of stdout went away (``| head``): stop quietly. stdout is pointed at /dev/null
    so the interpreter's final flush of what is still buffered cannot fail again at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
