"""`cctool tree` on one real profile of every input format: golden text, the roots' records
checked against the raw files, and inclusive values that never grow towards the leaves.

Each case names its reader with ``--from`` so that the golden shows that reader's tree, not
whatever detection picks. Sources are the shared profiles (see ../shared/data/README.md) and
the repository's own callgrind and folded samples (tests/data).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from cctool.cli import cli
from cctool.readers import reader_names
from tests.conftest import check_golden, json_rows, metric_value

REPO_DATA = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class Case:
    source: str  # shared data folder[/file], or "repo:<path under tests/data>"
    metrics: tuple[str, ...]  # -m, first one inclusive (it sorts, colors and is checked)
    flags: tuple[str, ...] = ()  # --depth/--threshold to keep the golden small


CASES: dict[str, Case] = {
    # Saved from the HPCToolkit sparse database of GAMESS (GPU metrics, 16 ranks).
    "cct": Case("hpctoolkit-gamess", ("REALTIME (inc)", "GKER (inc)", "GXCOPY (inc)"),
                ("--depth", "6", "--threshold", "0.1")),
    "hpctoolkit": Case("hpctoolkit-allgather-database", ("time (inc)", "time"),
                       ("--depth", "7", "--threshold", "0.1")),
    "hpctoolkit-v4": Case("hpctoolkit-cpi-v4-database", ("time (inc)", "time"),
                          ("--depth", "5", "--threshold", "0.05")),
    "cube": Case("scorep-cpi-cubex/profile.cubex",
                 ("time (inc)", "time", "visits", "bytes_sent (inc)")),
    "caliper": Case("caliper-lulesh-cali/lulesh-annotation-profile.cali",
                    ("time (inc)", "time", "count")),
    "caliper-json": Case("caliper-cpi-json/cpi-callpath-profile.json",
                         ("time (inc)", "time", "count (inc)"),
                         ("--depth", "7", "--threshold", "0.1")),
    # A SpotDB folder holding one run (0.cali of spotdb/: LULESH on 64 ranks).
    "spotdb": Case("spotdb/0.cali", ("Avg time/rank (inc)", "Max time/rank (inc)",
                                     "Avg time/rank"), ("--depth", "6", "--threshold", "0.01")),
    "cprofile": Case("cprofile-hatchet-pstats/cprofile-cycle.pstats",
                     ("time (inc)", "time", "calls")),
    "gprof2dot": Case("gprof2dot-cpi/callgrind.dot.64042.0.1", ("time (inc)", "time", "calls"),
                      ("--depth", "6", "--threshold", "0.1")),
    "callgrind": Case("repo:callgrind/callgrind.out.sample", ("Ir (inc)", "Ir", "calls")),
    "gprof": Case("repo:gprof/cycles.gprof.txt", ("time (inc)", "time", "calls")),
    "pyinstrument": Case("pyinstrument-hatchet-json/pyinstrument-hatchet-profile.json",
                         ("time (inc)", "time"), ("--depth", "6", "--threshold", "0.1")),
    "tau": Case("tau-cpi-mpi", ("time (inc)", "time", "calls")),
    "timemory": Case("timemory/wall.tree.json", ("wall_clock (inc)", "wall_clock", "laps")),
    "hatchet": Case("json/hatchet-graph-literal.json", ("time (inc)", "time")),
    "folded": Case("repo:folded/python.folded", ("samples (inc)", "samples"), ("--depth", "8",)),
    "pprof": Case("repo:pprof/heap.pb.gz", ("alloc_space (inc)", "alloc_space", "alloc_objects")),
    "speedscope": Case("repo:speedscope/pyspy.speedscope.json",
                       ("time (inc)", "time", "samples (inc)")),
    "chrome-trace": Case("repo:chrome-trace/viztracer.json", ("time (inc)", "time", "calls"),
                         ("--depth", "7")),
    "perfetto": Case("repo:perfetto/v8-execute.pftrace", ("time (inc)", "time", "calls")),
    "ascent": Case("repo:ascent/np2", ("time (inc)", "time", "calls")),
    "perfetto-samples": Case("repo:perfetto/android-perf.pftrace.gz",
                             ("samples (inc)", "samples", "sampled time (inc)"),
                             ("--depth", "4", "--threshold", "0.05")),
    "otf2": Case("repo:otf2/ping-pong", ("time (inc)", "time", "calls")),
    "dhat": Case("repo:dhat/np2", ("bytes (inc)", "reads (inc)", "writes (inc)"),
                 ("--depth", "4", "--threshold", "0.05")),
    "caliper-data": Case("repo:caliper-data/np2", ("bytes allocated (inc)", "allocations",
                                                   "time (inc)")),
    "perf-script": Case("repo:perf-script/perf-fp.txt", ("cpu-clock (inc)", "samples")),
    "cpuprofile": Case("repo:v8/node-cpu.cpuprofile", ("time (inc)", "time", "samples"),
                       ("--depth", "9", "--threshold", "0.01")),
    "heapprofile": Case("repo:v8/node-heap.heapprofile", ("sampled bytes (inc)",),
                        ("--depth", "9", "--threshold", "0.01")),
    "massif": Case("repo:massif/massif.out.sort", ("peak bytes (inc)", "peak bytes")),
    # Its addresses unnamed (see the profile fixture): names would come from this machine's
    # binaries.
    "gperftools": Case("repo:gperftools/work.prof", ("time (inc)", "samples")),
    "gecko": Case("repo:gecko/firefox.json.xz", ("samples (inc)", "cpu time (inc)"),
                  ("--depth", "12", "--threshold", "0.1")),
    "contention": Case("repo:gperftools/cppbench.contention", ("delay (inc)", "contentions"),
                       ("--depth", "8", "--threshold", "0.05")),
    "v8-ticks": Case("repo:v8-ticks/work.prof.json.xz", ("samples (inc)", "samples"),
                     ("--depth", "12", "--threshold", "0.1")),
    "jfr": Case("repo:jfr/work.jfr.json.xz", ("samples (inc)", "samples")),
    "async-profiler-html": Case("repo:async-profiler-html/busyclient.html",
                                ("samples (inc)", "samples"), ("--depth", "8")),
    "stackprof": Case("repo:stackprof/work.stackprof.json", ("samples (inc)", "samples"),
                      ("--depth", "8")),
    "memray-stats": Case("repo:memray/alloc.stats.json", ("allocated bytes (inc)",)),
    "caliper-report": Case("repo:caliper-report/runtime-report.txt", ("time (inc)", "time")),
    "ghc-prof": Case("repo:ghc-prof/work.prof", ("time (inc)", "alloc (inc)", "entries"),
                     ("--depth", "6")),
}


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def profile(data: Callable[[str], Path], tmp_path: Path) -> Callable[[str], Path]:
    """The path to give ``cctool tree --from <fmt>`` for a format's case."""

    def make(fmt: str) -> Path:
        source = CASES[fmt].source
        if fmt == "gperftools":  # written before every binary it maps: no names from them
            old = tmp_path / "work.prof"
            shutil.copy(REPO_DATA / source.removeprefix("repo:"), old)
            os.utime(old, (0, 0))
            return old
        if fmt == "otf2":
            pytest.importorskip("otf2", reason="the otf2 package is not installed (cctool[otf2])")
        if source.startswith("repo:"):
            return REPO_DATA / source.removeprefix("repo:")
        folder, _, name = source.partition("/")
        path = data(folder) / name if name else data(folder)
        if fmt == "spotdb":  # a SpotDB directory of exactly one run
            run_dir = tmp_path / "spotdb-one-run"
            run_dir.mkdir()
            shutil.copy(path, run_dir / path.name)
            return run_dir
        if fmt == "cct":
            saved = tmp_path / "gamess.cct"
            res = run("read", str(path), "-o", str(saved))
            assert res.exit_code == 0, res.stderr
            return saved
        return path

    return make


def tree(fmt: str, path: Path, *extra: str):
    metrics = [a for m in CASES[fmt].metrics for a in ("-m", m)]
    return run("tree", str(path), "--from", fmt, "--color", "never", "--width", "100",
               *metrics, *extra)


def test_every_format_has_a_case() -> None:
    assert sorted(CASES) == sorted(reader_names())


@pytest.mark.parametrize("fmt", list(CASES))
def test_tree_golden(fmt: str, profile, update_goldens: bool) -> None:
    res = tree(fmt, profile(fmt), *CASES[fmt].flags)
    assert res.exit_code == 0, res.stderr
    assert len(res.stdout.splitlines()) <= 45
    check_golden(f"tree.format-{fmt}.txt", res.stdout, update_goldens)


def test_cct_tree_is_the_source_tree(profile, data) -> None:
    """A saved .cct shows exactly the tree of the database it was saved from."""
    flags = ["-m", "REALTIME (inc)", "-m", "GKER (inc)", "--depth", "6", "--threshold", "0.1"]
    direct = run("tree", str(data("hpctoolkit-gamess")), "--color", "never", *flags)
    saved = run("tree", str(profile("cct")), "--color", "never", *flags)
    assert direct.exit_code == saved.exit_code == 0
    assert saved.stdout == direct.stdout


# The roots' names and totals (summed over ranks and threads) of each profile, read from the
# raw files without cctool. How each was found is noted per format.
ROOTS: dict[str, list[tuple[str, float]]] = {
    # As for hpctoolkit-v4 below: `exec_total(decode(db), ctx, "REALTIME (sec)")` of the
    # test_readers_hpctoolkit_v4 struct decoder on the two entry contexts; they add up to the
    # 4008.423769 s that hpcprof stored on context 0.
    "cct": [("unknown entry", 2399.931303), ("main thread", 1608.492466)],
    # experiment.xml: <PF i="8"> (<program root>) has <M n="2" v="2.61406e+07"/> and
    # <PF i="2"> (<partial call paths>) v="17786" (<no thread>, i="6", has none); the exact
    # sums are those of metric 2 (CPUTIME Sum (I)) of the scope over the 20 big-endian
    # *.metric-db files (struct, as tests/hpctoolkit_raw.py reads them), in microseconds;
    # cctool holds times in seconds.
    "hpctoolkit": [("<program root>", 26140582.0e-6), ("<partial call paths>", 17786.0e-6),
                   ("<no thread>", 0.0)],
    # profile.db decoded with struct (test_readers_hpctoolkit_v4.decode): CPUTIME (sec)
    # execution values of the "main thread" and "application thread" entry contexts summed
    # over the non-summary profiles.
    "hpctoolkit-v4": [("main thread", 0.28182), ("application thread", 0.044155)],
    # profile.cubex: 1.data (time, INCLUSIVE, doubles after a 10-byte header), row 0 (cnode 0,
    # region "cpi"): 5.0556256 + 5.0556371 + 5.0556166 + 5.0556287.
    "cube": [("cpi", 20.222507982262172)],
    # The sum#time.duration (attr 111, third data value) of the 19 ctx records with a region
    # (ref=155 for main .. ref=182), 0.025121 + 0.000206 + ... = 0.492491: all 20 records
    # add up to 0.493788; the first one (ref=28, 0.001297 s) lies outside every region.
    "caliper": [("main", 0.492491), ("<outside regions>", 0.001297)],
    # json-split rows: sum of sum#time.duration over rows whose callpath node
    # (source.function#callpath.address) descends from node 1 "_start", resp. is one of the
    # pthread_spin_lock / log2 call paths that lack _start (truncated unwinds). Whole
    # microseconds (Caliper 1's timer; 435 samples of the sampler's 5 ms), held in seconds.
    "caliper-json": [("_start", 2174924.0e-6), ("pthread_spin_lock", 119976.0e-6),
                     ("log2", 5006.0e-6)],
    # 0.cali: the ctx record of main has "avg#inclusive#sum#time.duration" (alias
    # "Avg time/rank") = 235.060251 s; one run, so the tree value is that record's.
    # The record outside every region: avg#inclusive#sum#time.duration=0.009060 (cali-query).
    "spotdb": [("main", 235.060251), ("<outside regions>", 0.009060)],
    # pstats: e has no callers (ct 23.0226); g has 1001 calls but only 1000 from f, whose edge
    # ct is 22.950701, so its root call is 22.973431 - 22.950701; __exit__ ct 7.3e-05.
    "cprofile": [("e", 23.0226), ("g", 22.973431 - 22.950701), ("__exit__", 7.3e-05)],
    # The DOT labels of the functions nobody calls: "(below main)\n97.95%", ... (percent).
    "gprof2dot": [("(below main)", 97.95), ("0x0000000000000ff0", 0.8),
                  ("hwloc_topology_load", 0.74), ("psm_allocate_vbufs", 0.2),
                  ("psm_no_lock", 0.16), ("ibv_get_device_list", 0.11),
                  ("_dl_catch_error'2", 0.1)],
    # fn=(0) 0x000000000001ab70 calls (below main) once with cost "0 40401 ..."; nothing
    # calls it, and totals: is 40401 Ir.
    "callgrind": [("0x000000000001ab70", 40401.0)],
    # The flat profile's last cumulative seconds, 0.34; main [1] is <spontaneous>.
    "gprof": [("main", 0.34)],
    # root_frame: {"function": "<module>", "time": 0.47815}.
    "pyinstrument": [("<module>", 0.47815)],
    # ".TAU application" 1 7 <excl> <incl> in profile.{0,1,2,3}.0.0: Incl column summed
    # (TAU writes microseconds; cctool holds seconds).
    "tau": [(".TAU application", (51781.0 + 55329.0 + 54029.0 + 52908.0) * 1e-6)],
    # wall.tree.json, the depth-1 children of each rank's graph: inclusive repr_data of
    # outer-loop-0 (35.638487535 + rank 1's) and outer-loop-1, in seconds.
    "timemory": [("generate_history/outer-loop-0", 35.638487535 + 33.403509927),
                 ("generate_history/outer-loop-1", 22.997982187 + 21.776822844)],
    # The graph's two roots, nodes 0 and 20, and their dataframe rows: foo and waldo with
    # "time (inc)" 135 and 30.
    "hatchet": [("foo", 135.0), ("waldo", 30.0)],
    # Every stack starts with "<module> (sampler.py:1)": 55 + 1 + 2 + 1 + 1 + 2 + 57.
    "folded": [("<module> (sampler.py:1)", 119.0)],
    # go tool pprof -raw heap.pb.gz: alloc_space of the samples by outermost location:
    # runtime.main 2105354 + 592551 + 1212696 + 524336, profileWriter and systemstack alone.
    "pprof": [("runtime.main", 4434937.0), ("runtime/pprof.profileWriter", 924248.0),
              ("runtime.systemstack", 524496.0)],
    # 65 of py-spy's 66 samples of 0.005 s start at <module>; the last one has no frame.
    "speedscope": [("<module>", 0.325), ("[no stack]", 0.005)],
    # viztracer's outermost X event: {"name": "builtins.exec", "dur": 517999.901}.
    # (Chrome traces are in microseconds; cctool holds seconds.)
    "chrome-trace": [("builtins.exec", 517999.901e-6)],
    # The outermost slices of the two renderer threads, per name, decoded with Perfetto's
    # generated protobuf classes (begin/end pairs on each track; us).
    "perfetto": [("RunMicrotasks", 4754e-6), ("V8.BytecodeBudgetInterrupt", 1719e-6),
                 ("V8.BytecodeBudgetInterruptWithStackCheck", 431e-6),
                 ("V8.StackGuard", 90e-6)],
    # awk: the [total] lines of both ranks' files, 0.199805 + 0.411959 s.
    "ascent": [("[total]", 0.199805 + 0.411959)],
    # expected_samples.py (Perfetto's protobuf classes): the samples per outermost frame of
    # their callstack, in the order of their counts (ties in the file's order).
    "perfetto-samples": [
        ("__start_thread", 417.0),
        ("__libc_init", 102.0),
        ("ERROR INVALID_MAP", 67.0),
        ("ERROR INVALID_ELF", 51.0),
        ("ERROR UNWIND_INFO", 17.0),
        ("_ZN8perfetto4base18ReadFileDescriptorEiPNSt3__112basic_stringIcNS1_11c"
         "har_traitsIcEENS1_9allocatorIcEEEE", 6.0),
        ("_ZN14QemuPipeStream24commitBufferAndReadFullyEmPvm", 4.0),
        ("_ZN11unwindstack7MapInfo6GetElfERKNSt3__110shared_ptrINS_6MemoryEEENS_8ArchEnumE", 2.0),
        ("0x17afca", 2.0),
        ("_Z15SkConvertPixelsRK11SkImageInfoPvmS1_PKvm", 2.0),
        ("_ZN8perfetto15KernelSymbolMap5ParseERKNSt3__112basic_stringIcNS1_11cha"
         "r_traitsIcEENS1_9allocatorIcEEEE", 1.0),
        ("ERROR MEMORY_INVALID", 1.0),
        ("art_quick_invoke_stub", 1.0),
        ("_ZN11unwindstack16DwarfSectionImplImE16GetFdeFromOffsetEm", 1.0),
        ("_ZN11unwindstack16ElfInterfaceImplINS_10ElfTypes64EE15GetFunctionNameE"
         "mPNS_12SharedStringEPm", 1.0),
        ("0x1a18fa", 1.0),
        ("0x17afca", 1.0),
        ("0x1a18fa", 1.0),
        ("_ZN7android8hardware14IPCThreadState20getAndExecuteCommandEv", 1.0),
        ("_ZN7android14IPCThreadState15waitForResponseEPNS_6ParcelEPi", 1.0),
        ("_ZN11unwindstack11DwarfMemory16ReadEncodedValueImEEbhPm", 1.0),
        ("_ZZN8perfetto9profiling8Unwinder12UnwindSampleERKNS0_12ParsedSampleEPN"
         "S0_17UnwindingMetadataEbENK3$_5clEv", 1.0),
        ("_ZN11unwindstack6Memory9ReadFullyEmPvm", 1.0),
        ("_ZN11unwindstack3Elf4InitEv", 1.0),
    ],
    # Every line of the collapsed file the page was made from starts with BusyClient.run_[j]:
    # its counts add up to 185 (awk).
    "async-profiler-html": [("BusyClient.run", 185.0)],
    # otf2's Python bindings: main's Leave - Enter on the two ranks (otf2/totals.json).
    "otf2": [("int main(int, char**)", 0.3987849786260884)],
    # valgrind-summary.txt of np2: the two ranks' "Total:" bytes, 3,451,530 + 3,025,444.
    "dhat": [("heap", 3451530.0 + 3025444.0)],
    # cali-query -q "select sum(alloc.total_size) where mem.alloc group by mpi.world.size"
    # np2/*.cali gives 1277952; the region roots hold time, no tracked bytes.
    "caliper-data": [("tracked objects", 1277952.0), ("setup", 0.0), ("sweep", 0.0),
                     ("scratch", 0.0), ("<outside regions>", 0.0)],
    # perf-fp.txt: the periods (ns) of the samples whose last call-chain line (outermost
    # frame) is start_thread, resp. __libc_start_call_main.
    "perf-script": [("start_thread", 221221221e-9), ("__libc_start_call_main", 212212212e-9)],
    # endTime - (startTime + timeDeltas[0]) of the file, in microseconds.
    "cpuprofile": [("(root)", 291878e-6)],
    # The sum of every node's selfSize under head.
    "heapprofile": [("(root)", 387216.0)],
    # heap_tree=peak of snapshot 43: n0 "(below main)" 83778272 under the two ??? frames,
    # n0 "in 18 places, all below massif's threshold" 16852, and mem_heap_extra_B 3604.
    "massif": [("(below main)", 83778272.0), ("[18 places below threshold]", 16852.0),
               ("[allocator overhead]", 3604.0)],
    # The records' last address (outermost caller, less one) with struct: 26 samples at
    # libc's clone3, 25 at work_prof's _start, 1000 us each (the header's period).
    "gperftools": [("libc.so.6+0x1098eb", 0.026), ("work_prof+0x10a0", 0.025)],
    # Every stack of the three threads starts at the "(root)" label: 895 + 57 + 241 samples.
    "gecko": [("(root)", 1193.0)],
    # cycles x 100 (sampling period) / 3201000000 (cycles/second) of the samples by their
    # last address: 0x7fcdc2ff214e (libpthread-2.15.so from 0x7fcdc2feb000) and 0x79e80a.
    "contention": [("libpthread-2.15.so+0x714d", 0.6904322399250233),
                   ("cppbench_server_main+0x39e809", 7.59762574195564e-05)],
    # The ticks by the outermost code their stack resolves to (an unresolved pc alone:
    # UNKNOWN), counted over the preprocessed JSON's ticks.
    "v8-ticks": [("node:internal/main/run_main_module:1:1", 184.0), ("UNKNOWN", 10.0),
                 ("/usr/lib/x86_64-linux-gnu/libc.so.6", 3.0), ("_IO_fwrite@@GLIBC_2.2.5", 2.0),
                 ("processTicksAndRejections node:internal/process/task_queues:67:35", 1.0)],
    # The execution samples by their stack's last frame: 57 in Work.main, 1 in a JDK read.
    "jfr": [("Work.main", 57.0), ("sun.nio.ch.FileChannelImpl.read", 1.0)],
    # stackprof's report: every one of the 54 samples starts at <main>.
    "stackprof": [("<main>", 54.0)],
    # The five locations of top_allocations_by_size, then the rest of 12,570,078 B.
    "memray-stats": [("grab", 12320829.0), ("get_data", 63271.0),
                     ("_get_code_from_file", 61406.0), ("[other locations]", 58612.0),
                     ("_compile_bytecode", 33144.0), ("_fill_cache", 32816.0)],
    # The report's top-level regions, Time (I).
    "caliper-report": [("mainloop", 0.269557), ("setup", 0.009931)],
    # MAIN holds every tick: 91 ticks @ 1000 us.
    "ghc-prof": [("MAIN", 0.091)],
}


@pytest.mark.parametrize("fmt", list(CASES))
def test_root_records(fmt: str, profile) -> None:
    metric = CASES[fmt].metrics[0]
    res = tree(fmt, profile(fmt), "--to", "json", "--depth", "1")
    assert res.exit_code == 0, res.stderr
    rows = json_rows(res.stdout)
    assert all(r["parent"] is None and r["depth"] == 0 for r in rows)
    got = [(r["name"], metric_value(r, metric)) for r in rows]
    want = ROOTS[fmt]
    if fmt == "perfetto-samples":  # raw symbols in the trace, shown demangled
        from tests.test_readers_perfetto_samples import cxxfilt

        want = list(zip(cxxfilt([n for n, _ in want]), [v for _, v in want], strict=True))
    assert [n for n, _ in got] == [n for n, _ in want]
    assert [v for _, v in got] == pytest.approx([v for _, v in want], rel=1e-6, abs=1e-9)


# gprof2dot drops edges under 0.1% and rounds to 0.01%: fscanf's only edge left in
# gprof2dot-cpi carries 0.12% of its 0.16%, so the vfscanf below it (0.16%) outweighs it.
_XFAIL = {
    "gprof2dot": "gprof2dot-cpi lost callers of fscanf and rounds edges: children exceed parent",
}


@pytest.mark.parametrize(
    "fmt",
    [pytest.param(f, marks=pytest.mark.xfail(reason=_XFAIL[f], strict=True)) if f in _XFAIL
     else f for f in CASES],
)
def test_inclusive_never_grows_downwards(fmt: str, profile) -> None:
    """Over the whole tree, a child's inclusive value is at most its parent's."""
    metric = CASES[fmt].metrics[0]
    res = tree(fmt, profile(fmt), "--to", "json")
    assert res.exit_code == 0, res.stderr
    rows = {r["node"]: r for r in json_rows(res.stdout)}
    value = {node: metric_value(r, metric) for node, r in rows.items()}
    bad = [(rows[r["parent"]]["name"], r["name"], value[node]) for node, r in rows.items()
           if r["parent"] is not None
           and value[node] > value[r["parent"]] * (1 + 1e-9) + 1e-12]
    assert not bad
