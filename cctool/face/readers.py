"""Hatchet's readers on the GraphFrame users import: ``GraphFrame.from_hpctoolkit(path)``
and the rest, each a thin call to cctool's readers (format detected, then checked against
the name asked for). A class method of :class:`Readers` returns the calling class, so
``cctool.GraphFrame.from_caliper`` gives a ``cctool.GraphFrame``.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

from cctool.errors import CctoolError, UnknownFormatError
from cctool.model.frame import GraphFrame

__all__ = ["Readers"]


def _read_as(path: str | Path, formats: Sequence[str]) -> GraphFrame:
    """``cctool.read(path)`` when it detects one of ``formats``; else the first of them
    names the file's problem."""
    from cctool.readers import read

    try:
        gf = read(path)
    except UnknownFormatError:
        return read(path, formats[0])
    found = gf.metadata.get("format")
    if found is not None and found not in formats:
        raise CctoolError(f"{path}: a {found} profile, not {' or '.join(formats)}; "
                          "read it with cctool.read()")
    return gf


def _reader(*formats: str) -> Any:
    """Hatchet's ``from_<format>(path)``: ``path`` read as one of ``formats``."""

    def read_as(cls: type[Readers], path: str | Path) -> Any:
        return cls._lift(_read_as(path, formats))

    read_as.__doc__ = f"A {' or '.join(formats)} profile: ``cctool.read(path)``."
    return classmethod(read_as)


def _read_json_text(text: str) -> GraphFrame:
    """A Hatchet JSON document (graphframe layout or literal) given as text."""
    from cctool.readers import read

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "graphframe.json"
        path.write_text(text, encoding="utf-8")
        return read(path, "hatchet")




class Readers:
    """Hatchet's ``GraphFrame.from_<format>`` readers, for :class:`cctool.GraphFrame`."""

    @classmethod
    def _lift(cls, gf: GraphFrame) -> Self:
        raise NotImplementedError  # the face's class lifts model frames to itself

    @classmethod
    def from_hpctoolkit(cls, dirname: str | Path) -> Self:
        """An HPCToolkit database: XML (``experiment.xml``) or sparse v4 (``meta.db``)."""
        return cls._lift(_read_as(dirname, ("hpctoolkit", "hpctoolkit-v4")))

    @classmethod
    def from_caliper(cls, filename_or_stream: str | Path, query: str | None = None) -> Self:
        """A Caliper ``.cali`` file or its JSON; ``query`` (CalQL) is not supported."""
        if query is not None:
            raise CctoolError("cctool reads the whole Caliper file; a CalQL query is not "
                              "supported (filter the GraphFrame instead)")
        return cls._lift(_read_as(filename_or_stream,
                                  ("caliper", "caliper-json", "caliper-data")))

    @classmethod
    def from_caliperreader(cls, filename_or_caliperreader: str | Path, native: bool = False,
                           string_attributes: Sequence[str] = ()) -> Self:
        """A native Caliper ``.cali`` file (cctool's own parser, no caliper-reader needed);
        metric names are cctool's whatever ``native`` says, and every string attribute is
        kept."""
        return cls._lift(_read_as(filename_or_caliperreader, ("caliper", "caliper-data")))

    @classmethod
    def from_spotdb(cls, db_key: str | Path, list_of_ids: Sequence[str] | None = None
                    ) -> list[Self]:
        """One GraphFrame per run of a SpotDB directory of ``.cali`` files, in path order;
        ``list_of_ids`` keeps the runs whose file name (with or without ``.cali``) it holds."""
        from cctool.readers import read
        from cctool.readers.caliper.spotdb import run_files

        files = run_files(Path(db_key))
        if list_of_ids is not None:
            wanted = set(map(str, list_of_ids))
            files = [f for f in files if f.name in wanted or f.stem in wanted]
        return [cls._lift(read(f, "caliper")) for f in files]

    from_gprof_dot = _reader("gprof2dot")
    from_cprofile = _reader("cprofile")
    from_pyinstrument = _reader("pyinstrument")
    from_tau = _reader("tau")

    @classmethod
    def from_timemory(cls, input: str | Path) -> Self:  # noqa: A002 (Hatchet's name)
        """A timemory JSON tree file (the in-process timemory import is not supported)."""
        return cls._lift(_read_as(input, ("timemory",)))

    @classmethod
    def from_literal(cls, graph_dict: list[dict[str, Any]]) -> Self:
        """A tree given as Hatchet's literal: ``[{"frame": {...}, "metrics": {...},
        "children": [...]}]``."""
        return cls._lift(_read_json_text(json.dumps(graph_dict)))

    @classmethod
    def from_json(cls, json_spec: str) -> Self:
        """A graphframe from the text of Hatchet's ``to_json()``."""
        return cls._lift(_read_json_text(json_spec))

    @classmethod
    def from_hdf(cls, filename: str | Path, key: str = "hatchet_graphframe",
                 **kwargs: Any) -> Self:
        """A GraphFrame ``to_hdf`` wrote under ``key`` (see :mod:`cctool.face.hdf`)."""
        from cctool.face.hdf import read_hdf

        if kwargs:
            raise CctoolError(f"from_hdf takes a file name and a key, not {', '.join(kwargs)}")
        return cls._lift(read_hdf(filename, key))

    @classmethod
    def from_perfflowaspect(cls, filename: str | Path, **kwargs: Any) -> Self:
        """A PerfFlowAspect trace (``perfflow.*.pfw``: Chrome trace events, ``X`` or
        ``B``/``E``) as a calling context tree, read by cctool's trace-event reader: the
        time each call path ran (``time``, ``calls``), pid -> rank, tid -> thread; Hatchet's
        one row per event is ``cctool.read_timeline(path)``."""
        if kwargs:
            raise CctoolError("from_perfflowaspect takes a file name, not "
                              f"{', '.join(kwargs)}")
        return cls._lift(_read_as(filename, ("chrome-trace",)))

    @classmethod
    def from_lists(cls, *lists: Any) -> Self:
        """Hatchet's tree from lists: ``from_lists(["a", ["b", "d", "e"], ["c", "f"]])``, a
        node's name first and its children after it; every node has ``time`` 1 (and
        ``time (inc)`` its subtree's size)."""
        from cctool.face.hatchet_io import from_lists

        return cls._lift(from_lists(lists))

    @classmethod
    def from_hpctoolkit_latest(cls, dirname: str | Path, max_depth: int | None = None,
                               min_percentage_of_application_time: float | None = None,
                               min_percentage_of_parent_time: float | None = None
                               ) -> Self:
        """An HPCToolkit sparse (v4, ``meta.db``) database. As Hatchet's reader, it leaves
        out the nodes at depth ``max_depth`` or deeper (roots are at 0) and those whose
        inclusive time (the default inclusive metric, summed over ranks) is below the given
        percentage of the application's or of the parent's, each with its subtree; the
        nodes kept keep their inclusive values as read."""
        from cctool.face.hatchet_io import prune
        from cctool.ops.hot_path import default_inclusive
        from cctool.ops.query import filter_graph

        gf = _read_as(dirname, ("hpctoolkit-v4",))
        if max_depth is None and min_percentage_of_application_time is None and \
                min_percentage_of_parent_time is None:
            return cls._lift(gf)
        keep = prune(gf, default_inclusive(gf, None), max_depth,
                     min_percentage_of_application_time, min_percentage_of_parent_time)
        return cls._lift(filter_graph(gf, keep, squash=True, keep_inclusive=True))

    @classmethod
    def from_timeseries(cls, filename_or_caliperreader: str | Path,
                        level: str = "loop.start_iteration", native: bool = False,
                        string_attributes: Sequence[str] = ()) -> list[Self]:
        """A Caliper time series (the ``timeseries`` service) as one GraphFrame per
        snapshot, in order (Hatchet gives one frame indexed by node and ``level``); each
        frame's ``metadata[level]`` is the snapshot's ``level`` value (None for the
        snapshots outside the loop) and ``metadata["snapshot"]`` its record.
        ``cctool.read(path)`` is the whole run, summed over snapshots."""
        from cctool.face.hatchet_io import timeseries

        return [cls._lift(g) for g in timeseries(filename_or_caliperreader, level)]

    @classmethod
    def construct_from(cls, data: str | Path | Sequence[str | Path] | list[dict[str, Any]]
                       ) -> Self | list[Self]:
        """Chopper's reader of anything: a profile path (format detected, as
        ``cctool.read``), a list of paths (one GraphFrame each), or a Hatchet literal (a
        list of dicts)."""
        from cctool.readers import read

        if isinstance(data, str | Path):
            return cls._lift(read(data))
        items = list(data)
        if items and all(isinstance(x, dict) for x in items):
            return cls._lift(_read_json_text(json.dumps(items)))
        return [cls._lift(read(p)) for p in items]  # type: ignore[arg-type]
