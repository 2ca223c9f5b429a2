"""Reading profiles: the registry of readers, format detection and the one ``read`` entry point.

Each reader is a module exposing ``NAME`` (what ``--from`` takes), ``DESCRIPTION``,
``sniff(path) -> bool`` (cheap: looks at names and the first bytes only) and
``read(path, **options) -> GraphFrame`` (the contract: :mod:`._contract`), in a package per
family (``hpctoolkit/``, ``caliper/``, ``callgraph/``, ``stacks/``, ``traces/``, ``memory/``,
``trees/``). :mod:`.registry` lists them in sniffing order, :mod:`.sniffing` finds the reader of
a path, :mod:`.discovery` the profiles of a folder and :mod:`.reading` reads one. Importing
this package imports no reader.
"""

from cctool.readers.discovery import (
    expand_paths,
    is_one_run,
    keep_profiles,
    profile_files,
    runs_to_sniff,
    warn_left_out,
    warn_left_out_files,
)
from cctool.readers.reading import normalise, read, read_declared
from cctool.readers.registry import READERS, STDIN, get_reader, reader_modules, reader_names
from cctool.readers.sniffing import detect, is_profile, sniff

__all__ = [
    "READERS", "STDIN", "detect", "expand_paths", "get_reader", "is_one_run", "is_profile",
    "keep_profiles", "normalise", "profile_files", "read", "read_declared", "reader_modules",
    "reader_names", "runs_to_sniff", "sniff", "warn_left_out", "warn_left_out_files",
]
