"""Command line: backup SOURCE DEST [--exclude PATTERN ...]."""
import argparse

from .engine import run_backup
from .reporter import Reporter


def build_parser():
    parser = argparse.ArgumentParser(prog="backup", description="Copy changed files to a backup tree.")
    parser.add_argument("source")
    parser.add_argument("dest")
    parser.add_argument("--exclude", action="append", default=[], metavar="PATTERN",
                        help="glob of paths to leave out (repeatable)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    return run_backup(args.source, args.dest, Reporter(), exclude=args.exclude)
