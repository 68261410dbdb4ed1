"""pybpe's command line: `pybpe COMMAND ...` (the same as `python -m pybpe COMMAND ...`).

One module per command or pair of commands, each adding its own subparser
(add_parser) and running it (run): demo, train, encode / decode (codec),
count, stats, inspect, convert, bench, wordpiece.  What they share -- the tokenizer
options, reading inputs, safe outputs, progress, errors -- is _common.py.

main() is the one place that turns failures into exit codes, each reported
as one line on stderr, never a traceback (unless --debug):

    0    done
    1    usage: the command line is wrong (an unknown option, a missing argument...)
    2    input: a file is missing, unreadable or corrupt, an ID or a name is unknown
    3    an internal error (a bug: --debug shows where)
    130  interrupted (Ctrl-C); 143 on SIGTERM; 141 when the reader of stdout goes away
"""
import argparse
import os
import signal
import sys
import warnings

from .. import __version__, backend
from ..errors import FormatError, NoTokenError, PatternTimeout
from . import bench, codec, convert, count, demo, inspection, stats, train, wordpiece
from ._common import CLIError, UsageError

COMMANDS = (demo, train, codec, count, stats, inspection, convert, bench, wordpiece)

EXAMPLES = """\
examples:
  pybpe demo                                      train on Hamlet and show what was learned
  pybpe train corpus.txt -o tok.json              learn a tokenizer (the chapter's flavour)
  pybpe encode gpt2 "hello world"                 31373 995
  pybpe count --encoding o200k_base *.md          tokens per file, like wc
  pybpe COMMAND --help                            each command's options and examples

exit codes: 0 done, 1 usage error, 2 input error (missing or corrupt file, bad ID, unknown
encoding), 3 internal error, 130 interrupted"""


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors raised as UsageError (one line, exit code 1)
    instead of a usage dump and exit code 2."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        raise UsageError("%s: %s (see %s --help)" % (self.prog, message, self.prog))


class _CommandParser(_Parser):
    """A command's parser: options may come before, between or after its
    arguments (`pybpe encode gpt2 --pieces "hello world"`), which plain
    argparse refuses once a variable-length positional has started."""

    _intermixing = False

    def parse_known_args(self, args=None, namespace=None):
        if self._intermixing:  # parse_known_intermixed_args calls back here
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def build_parser():
    parser = _Parser(prog="pybpe", description="Byte-pair encoding tokenizers: train, encode, decode, count, "
                     "inspect and convert them.", epilog=EXAMPLES)
    parser.add_argument("--version", action="version",
                        version="pybpe %s (%s backend)" % (__version__, backend()),
                        help="print pybpe's version and default backend, and exit")
    parser.add_argument("--debug", action="store_true", dest="debug_main",
                        help="show the full traceback of an error")
    # The same --debug after the command name (a different dest: a
    # subparser's default would otherwise overwrite the main parser's value).
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_CommandParser)
    sub.required = True
    for module in COMMANDS:
        module.add_parsers(sub, common)
    return parser


def main(argv=None):
    """Run the command line; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv[: argv.index("--")] if "--" in argv else "--debug" in argv
    try:
        with _sigterm_as_exit(), warnings.catch_warnings():
            # Without the C extension, --version and demo's note say which
            # backend runs; the library's warning would be a second stderr
            # line on every command (errors are one line).
            warnings.filterwarnings("ignore", message="pybpe's C extension is not available",
                                    category=RuntimeWarning)
            args = build_parser().parse_args(argv)
            if args.command == "demo" and args.backend is None and backend() != "c":
                sys.stderr.write("note: running on the pure-Python backend\n")
            return args.run(args)
    except KeyboardInterrupt:
        if debug:
            raise
        return 128 + signal.SIGINT
    except BrokenPipeError:
        # The reader went away (`pybpe encode ... | head`): stop quietly, and
        # keep Python from complaining when it flushes stdout at exit.
        _silence_stdout()
        return 128 + signal.SIGPIPE
    except SystemExit:
        raise
    except BaseException as exc:
        if debug and not isinstance(exc, CLIError):
            raise
        code, message = _report(exc)
        _flush_quietly()
        sys.stderr.write(message if message.startswith("pybpe") else "pybpe: " + message)
        sys.stderr.write("\n")
        return code


def _report(exc):
    """(exit code, one-line message) for an exception."""
    if isinstance(exc, CLIError):
        return exc.code, _one_line(str(exc))
    if isinstance(exc, (FormatError, PatternTimeout, UnicodeError, NoTokenError)):
        return 2, _one_line(str(exc))
    if isinstance(exc, OSError):
        where = "%s: " % exc.filename if exc.filename else ""
        return 2, "%s%s" % (where, exc.strerror or exc)
    if isinstance(exc, MemoryError):
        return 2, "out of memory"
    return 3, "internal error: %s: %s (run again with --debug for the traceback)" % (
        type(exc).__name__, _one_line(str(exc)))


def _one_line(text):
    return " ".join(text.split())


def _flush_quietly():
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        _silence_stdout()


def _silence_stdout():
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


class _sigterm_as_exit:
    """SIGTERM raises SystemExit(143) while the command runs, so cleanup code
    (temporary files) runs as for Ctrl-C; the previous handler comes back
    after.  Only the main thread can set handlers: elsewhere nothing changes."""

    def __enter__(self):
        try:
            self.previous = signal.signal(signal.SIGTERM, self._exit)
        except ValueError:  # not the main thread
            self.previous = None

    def __exit__(self, *exc_info):
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)

    @staticmethod
    def _exit(signum, frame):
        raise SystemExit(128 + signum)


def entry_point():
    """The `pybpe` console script."""
    sys.exit(main())
