"""The static program a synthetic profile unrolls: load modules, files and procedures.

Library code (MPI, the network library, libc, libm, libgomp) comes from fixed tables of real
frame names; application procedures get solver-like names and bodies (statements, loops,
call sites) on rising source lines, arranged in levels so the call graph is a DAG.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence

MAX_DEPTH = 60

_MONITOR = "/opt/hpctoolkit/lib/hpctoolkit/ext-libs/libmonitor.so.0.0.0"
_MPI_LIB = "/usr/tce/packages/mvapich2/mvapich2-2.3.6-gcc-10.3.1/lib/libmpi.so.12.1.1"
_MPI_SRC = "/builddir/build/BUILD/mvapich2-2.3.6/src/"
_PSM = "/usr/lib64/libpsm_infinipath.so.1.16"
_LIBC = "/usr/lib64/libc-2.17.so"
_LIBM = "/usr/lib64/libm-2.17.so"
_GOMP = "/usr/lib64/libgomp.so.1"
_PSM_DIR = "mpid/ch3/channels/psm/src/"
# MPI entry point -> how its chain ends, then "name source" of the frames below it. Frames
# shared by several chains (MPIC_Sendrecv, MPIC_Recv) end the same way in all of them.
_MPI_CALLS = {
    "MPI_Init": ("net", "PMPI_Init mpi/init/init.c", "MPIR_Init_thread mpi/init/initthread.c",
                 "MPID_Init mpid/ch3/src/mpid_init.c", f"psm_doinit {_PSM_DIR}psm_entry.c"),
    "MPI_Finalize": ("wait", "PMPI_Finalize mpi/init/finalize.c",
                     "MPID_Finalize mpid/ch3/src/mpid_finalize.c",
                     f"psm_dofinalize {_PSM_DIR}psm_exit.c"),
    "MPI_Comm_rank": ("local", "PMPI_Comm_rank mpi/comm/comm_rank.c"),
    "MPI_Comm_size": ("local", "PMPI_Comm_size mpi/comm/comm_size.c"),
    "MPI_Allreduce": ("wait", "PMPI_Allreduce mpi/coll/allreduce.c",
                      "MPIR_Allreduce_impl mpi/coll/allreduce.c",
                      "MPIR_Allreduce_MV2 mpi/coll/allreduce_osu.c",
                      "MPIR_Allreduce_pt2pt_rs_MV2 mpi/coll/allreduce_osu.c",
                      "MPIC_Sendrecv mpi/coll/helper_fns.c"),
    "MPI_Reduce": ("wait", "PMPI_Reduce mpi/coll/reduce.c", "MPIR_Reduce_impl mpi/coll/reduce.c",
                   "MPIR_Reduce_MV2 mpi/coll/reduce_osu.c",
                   "MPIR_Reduce_binomial_MV2 mpi/coll/reduce_osu.c",
                   "MPIC_Recv mpi/coll/helper_fns.c"),
    "MPI_Bcast": ("wait", "PMPI_Bcast mpi/coll/bcast.c", "MPIR_Bcast_impl mpi/coll/bcast.c",
                  "MPIR_Bcast_MV2 mpi/coll/bcast_osu.c",
                  "MPIR_Bcast_binomial_MV2 mpi/coll/bcast_osu.c",
                  "MPIC_Recv mpi/coll/helper_fns.c"),
    "MPI_Barrier": ("wait", "PMPI_Barrier mpi/coll/barrier.c",
                    "MPIR_Barrier_impl mpi/coll/barrier.c",
                    "MPIR_Barrier_MV2 mpi/coll/barrier_osu.c",
                    "MPIR_shmem_barrier_MV2 mpi/coll/barrier_osu.c"),
    "MPI_Allgather": ("wait", "PMPI_Allgather mpi/coll/allgather.c",
                      "MPIR_Allgather_impl mpi/coll/allgather.c",
                      "MPIR_Allgather_MV2 mpi/coll/allgather_osu.c",
                      "MPIR_Allgather_RD_MV2 mpi/coll/allgather_osu.c",
                      "MPIC_Sendrecv mpi/coll/helper_fns.c"),
    "MPI_Alltoall": ("wait", "PMPI_Alltoall mpi/coll/alltoall.c",
                     "MPIR_Alltoall_impl mpi/coll/alltoall.c",
                     "MPIR_Alltoall_pairwise_MV2 mpi/coll/alltoall_osu.c",
                     "MPIC_Sendrecv mpi/coll/helper_fns.c"),
    "MPI_Isend": ("net", "PMPI_Isend mpi/pt2pt/isend.c", "MPID_Isend mpid/ch3/src/mpid_isend.c",
                  "MPIDI_CH3_EagerContigIsend mpid/ch3/src/ch3u_eager.c",
                  f"psm_isendv {_PSM_DIR}psm_istart.c", f"psm_isend_pkt {_PSM_DIR}psm_send.c"),
    "MPI_Irecv": ("net", "PMPI_Irecv mpi/pt2pt/irecv.c", "MPID_Irecv mpid/ch3/src/mpid_irecv.c",
                  f"psm_irecv {_PSM_DIR}psm_recv.c"),
    "MPI_Waitall": ("wait", "PMPI_Waitall mpi/pt2pt/waitall.c",
                    "MPIR_Waitall_impl mpi/pt2pt/waitall.c"),
    "MPI_Wait": ("wait", "PMPI_Wait mpi/pt2pt/wait.c", "MPIR_Wait_impl mpi/pt2pt/wait.c"),
}
_COMM = {  # verbs of communication routines -> the MPI calls they make
    "exchange": ("MPI_Irecv", "MPI_Isend", "MPI_Waitall"), "reduce": ("MPI_Allreduce",),
    "gather": ("MPI_Allgather",), "scatter": ("MPI_Bcast",), "transpose": ("MPI_Alltoall",),
    "sync": ("MPI_Barrier",), "accumulate": ("MPI_Reduce",),
}
_VERBS = ("compute", "update", "apply", "assemble", "solve", "advance", "interpolate", "integrate",
          "smooth", "restrict", "prolongate", "build", "evaluate", "project", "pack", "unpack",
          "copy", "scale", "relax", "factor", "sweep", "correct", "limit", "reconstruct",
          *_COMM)
_NOUNS = ("flux", "pressure", "velocity", "halo", "boundary", "residual", "matrix", "stencil",
          "mesh", "energy", "stress", "density", "gradient", "divergence", "jacobian",
          "preconditioner", "viscosity", "temperature", "face_values", "cell_centers",
          "coarse_grid", "fine_grid", "sparse_rows", "krylov_basis", "ghost_cells", "eos",
          "source_terms", "forces", "particles", "species")
_LIBC_CALLS = (("__memcpy_avx_unaligned",), ("__GI___libc_malloc", "_int_malloc"),
               ("__GI___libc_free", "_int_free"), ("__memset_avx2_unaligned_erms",))
_LIBM_CALLS = ("__ieee754_exp_fma", "__ieee754_pow_fma", "__ieee754_log_fma", "__sin_fma")



class Proc:
    __slots__ = ("pid", "name", "module", "file", "line", "body", "atomic", "size", "min", "depth")

    def __init__(self, pid: int, name: str, module: int, file: int, line: int) -> None:
        self.pid, self.name, self.module, self.file, self.line = pid, name, module, file, line
        self.body: list[Item] = []
        self.atomic = True  # library code: unrolled whole or not called at all
        self.size = self.min = self.depth = 0

    def seal(self, body: list[Item], atomic: bool) -> Proc:
        """Fix the body; ``size``/``min``/``depth`` are the full, minimal and deepest unrolling."""
        self.body, self.atomic = body, atomic and all(i.proc is None or i.proc.atomic for i in body)
        self.size = 1 + sum(i.max for i in body)
        self.min = self.size if self.atomic else 1 + body[0].min
        self.depth = 1 + max(i.depth for i in body)
        return self


class Item:
    """A static scope in a procedure body: statement ``S``, loop ``L`` or call site ``C``."""

    __slots__ = ("tag", "line", "sid", "kind", "file", "items", "proc", "min", "max", "depth",
                 "boost", "trips")

    def __init__(self, tag: str, line: int, sid: int, *, kind: str = "", file: int = 0,
                 items: list[Item] | None = None, proc: Proc | None = None,
                 boost: float = 1.0, trips: float = 0.0) -> None:
        self.tag, self.line, self.sid, self.kind, self.file = tag, line, sid, kind, file
        self.items, self.proc = items or [], proc
        self.boost = boost  # share of a tight node budget this item draws, relative to siblings
        self.trips = trips  # loops: fixed cost multiplier (0: drawn per calling context)
        if proc is not None:  # a call site is not a cctool node: it costs what the callee costs
            self.min, self.max, self.depth = proc.min, proc.size, proc.depth
        elif tag == "L":
            self.min = 1 + self.items[0].min
            self.max = 1 + sum(i.max for i in self.items)
            self.depth = 1 + max(i.depth for i in self.items)
        else:
            self.min = self.max = self.depth = 1


class Program:
    """The static program: load modules, files and procedures (ids shared, as hpcprof does)."""

    def __init__(self, rng: random.Random, name: str) -> None:
        self.rng, self.name = rng, name
        self.binary = f"/opt/{name}/bin/{name}"
        self._ids = itertools.count(2)
        self.modules: dict[str, int] = {}
        self.files: dict[str, int] = {}
        self.procs: dict[tuple[str, int], Proc] = {}
        self.fake: set[int] = set()  # procedures hpcrun makes up (<program root>, ...)
        self.lines: dict[int, int] = {}  # next free line per source file

    def sid(self) -> int:
        return next(self._ids)

    def module(self, path: str) -> int:
        if path not in self.modules:
            self.modules[path] = self.sid()
        return self.modules[path]

    def file(self, path: str) -> int:
        if path not in self.files:
            self.files[path] = self.sid()
        return self.files[path]

    def proc(self, name: str, module: str, file: str | None = None) -> tuple[Proc, bool]:
        """The procedure ``name`` of ``module`` and whether it is new."""
        lm = self.module(module)
        if (name, lm) in self.procs:
            return self.procs[(name, lm)], False
        base = module.rsplit("/", 1)[-1]
        f = self.file(file or f"<unknown file> [{base}]")
        line = 0
        if file and not file.startswith("<"):
            line = self.lines.get(f, self.rng.randint(20, 120))
            self.lines[f] = line + self.rng.randint(30, 160)
        p = Proc(self.sid(), name, lm, f, line)
        self.procs[(name, lm)] = p
        return p, True

    def stmt(self, line: int, kind: str) -> Item:
        return Item("S", line, self.sid(), kind=kind)

    def call(self, line: int, proc: Proc) -> Item:
        return Item("C", line, self.sid(), proc=proc)

    # ------------------------------------------------------------------ library code
    def chain(self, frames: Sequence[tuple[str, str, str | None]], leaf: list[Item]) -> Proc:
        """Procedures calling each other in order, the last one running ``leaf``."""
        body = leaf
        for name, module, file in reversed(frames):
            p, new = self.proc(name, module, file)
            if new:
                p.seal(body, atomic=True)
            body = [self.call(p.line + 3 if p.line else 0, p)]
        return body[0].proc  # type: ignore[return-value]

    def psm(self, kind: str, frames: int) -> Proc:
        names = [(f"<unknown procedure> 0x{self.rng.randrange(0x9000, 0x35000):x} "
                  f"[{_PSM.rsplit('/', 1)[-1]}]", _PSM, None) for _ in range(frames)]
        return self.chain(names, [self.stmt(0, kind)])

    def progress(self) -> Proc:
        src = _MPI_SRC + _PSM_DIR
        p, new = self.proc("MPIDI_CH3I_Progress", _MPI_LIB, src + "ch3_progress.c")
        if new:
            wait, _ = self.proc("psm_progress_wait", _MPI_LIB, src + "psm_queue.c")
            yld = self.chain([("__GI___sched_yield", _LIBC, None)], [self.stmt(0, "wait")])
            tries = self.chain([("psm_try_complete", _MPI_LIB, src + "psm_queue.c")],
                               [self.call(0, self.psm("wait", 4))])
            wait.seal([self.stmt(wait.line + 4, "wait"), self.call(wait.line + 9, tries),
                       self.call(wait.line + 12, yld)], atomic=True)
            p.seal([self.call(p.line + 6, wait)], atomic=True)
        return p

    def mpi(self, name: str) -> Proc:
        tail, *frames = _MPI_CALLS[name]
        if (name, self.module(_MPI_LIB)) in self.procs:
            return self.procs[(name, self.module(_MPI_LIB))]
        chain = [(name, _MPI_LIB, _MPI_SRC + frames[0].split()[1])]
        chain += [(f.split()[0], _MPI_LIB, _MPI_SRC + f.split()[1]) for f in frames]
        if tail == "wait":
            leaf = [self.call(0, self.progress())]
        elif tail == "net":
            leaf = [self.call(0, self.psm("net", self.rng.randint(1, 3)))]
        else:
            leaf = [self.stmt(0, "lib")]
        return self.chain(chain, leaf)

    def libc(self) -> Proc:
        names = self.rng.choice(_LIBC_CALLS)
        return self.chain([(n, _LIBC, None) for n in names], [self.stmt(0, "lib")])

    def libm(self) -> Proc:
        return self.chain([(self.rng.choice(_LIBM_CALLS), _LIBM, None)], [self.stmt(0, "lib")])

    # ------------------------------------------------------------------ application code
    def app(self, name: str, group: str, callees: list[Proc], kernel: bool) -> Proc:
        """An application procedure calling ``callees`` among its loops and statements."""
        rng = self.rng
        noun = name.split("_", 1)[-1]
        p, _ = self.proc(name, self.binary, f"./src/opt/{self.name}/src/{group}/{noun}.c")
        verb = name.split("_", 1)[0]
        calls = list(callees)
        calls += [self.mpi(m) for m in _COMM.get(verb, ())]
        if verb not in _COMM and rng.random() < 0.12:
            calls.append(self.mpi(rng.choice(("MPI_Allreduce", "MPI_Allreduce", "MPI_Waitall",
                                              "MPI_Barrier", "MPI_Bcast"))))
        if rng.random() < 0.15:
            calls.append(self.libc())
        if kernel and rng.random() < 0.3:
            calls.append(self.libm())
        n_loops = rng.randint(1, 3) if kernel else rng.choice((0, 1, 1, 2))
        loops: list[list[object]] = [["S"] * rng.randint(1, 3) for _ in range(n_loops)]
        top: list[object] = ["S"] * rng.randint(0, 3)
        for c in calls:
            (rng.choice(loops) if loops and rng.random() < 0.6 else top).append(c)
        for body in loops:
            rng.shuffle(body)
            if kernel and rng.random() < 0.35:
                body.append(["S"] * rng.randint(1, 3))  # an inner loop
        top += loops
        rng.shuffle(top)
        cursor = [p.line + 1]
        items = [self.stmt(p.line + 1, "serial"), *self._items(top, cursor, p.file, False)]
        self.lines[p.file] = max(self.lines[p.file], cursor[0] + rng.randint(5, 40))
        return p.seal(items, atomic=False)

    def _items(self, spec: list[object], cursor: list[int], file: int,
               in_loop: bool) -> list[Item]:
        """Static items for ``spec`` ("S", a callee, or a list for a loop) on rising lines."""
        out: list[Item] = []
        for s in spec:
            line = cursor[0] = cursor[0] + self.rng.randint(1, 4)
            if s == "S":
                out.append(self.stmt(line, "compute" if in_loop else "serial"))
            elif isinstance(s, Proc):
                out.append(self.call(line, s))
            else:  # a loop; its first item is the statement on its header line
                first = self.stmt(line, "compute")
                inner = self._items(s, cursor, file, True)  # type: ignore[arg-type]
                out.append(Item("L", line, self.sid(), file=file, items=[first, *inner]))
        return out


def build_program(rng: random.Random, name: str, nodes: int, threads: int) -> tuple[
        Program, Proc, Proc | None]:
    """The static program: enough levels that its full unrolling exceeds ``nodes``, but not
    so many that a path could be deeper than ``MAX_DEPTH``."""
    levels = 4 + math.ceil(math.log10(max(nodes, 10)))
    best = None
    while True:
        prog = Program(random.Random(rng.random()), name)
        root, worker = _app_tree(prog, nodes, levels, threads)
        if root.depth > MAX_DEPTH + 1 and best is not None:  # depth counts from 1, nodes from 0
            return best
        best = prog, root, worker
        if root.size >= 1.3 * nodes or levels >= 16:
            return best
        levels += 1


def _app_tree(prog: Program, nodes: int, levels: int, threads: int) -> tuple[Proc, Proc | None]:
    rng = prog.rng
    names = [f"{v}_{n}" for v in _VERBS for n in _NOUNS]
    rng.shuffle(names)
    pool = iter(names + [f"{n}_{s}" for s in ("3d", "block", "local") for n in names])
    n_app = max(3 * levels, min(nodes // 25, 2000))
    weights = [lvl**0.8 for lvl in range(2, levels + 1)]
    per_level = [max(2, round(n_app * w / sum(weights))) for w in weights]
    below: list[list[Proc]] = []  # procedures of the deeper levels, deepest first
    for depth, count in zip(range(levels, 1, -1), reversed(per_level), strict=True):
        group = "kernels" if depth == levels else "solver" if depth > 3 else "driver"
        procs = []
        for _ in range(count):
            callees = _pick_callees(rng, below)
            procs.append(prog.app(next(pool), group, callees, kernel=not below))
        below.insert(0, procs)
    drivers = [prog.app(next(pool), "driver", _pick_callees(rng, below), False)
               for _ in range(rng.randint(3, 6))]
    init = prog.app("initialize", "driver", _pick_callees(rng, below), False)
    output = prog.app("write_output", "driver", _pick_callees(rng, below), False)
    main, _ = prog.proc("main", prog.binary, f"./src/opt/{prog.name}/src/main.c")
    ln = main.line
    step = Item("L", ln + 30, prog.sid(), file=main.file, boost=8.0, trips=40.0, items=[
        prog.stmt(ln + 31, "serial"),
        *[prog.call(ln + 33 + 2 * i, d) for i, d in enumerate(drivers)],
        prog.call(ln + 34 + 2 * len(drivers), prog.mpi("MPI_Allreduce"))])
    once = [prog.call(ln + 20, init), prog.call(ln + 60, output)]
    for item in once:
        item.boost = 0.3  # set-up and output run once, the time steps many times
    main.seal([prog.stmt(ln + 1, "serial"), prog.call(ln + 12, prog.mpi("MPI_Init")),
               prog.call(ln + 13, prog.mpi("MPI_Comm_rank")),
               prog.call(ln + 14, prog.mpi("MPI_Comm_size")), once[0], step, once[1],
               prog.call(ln + 62, prog.mpi("MPI_Finalize"))], atomic=False)
    root, _ = prog.proc("<program root>", _MONITOR)
    prog.fake.add(root.pid)
    root.seal([prog.call(0, main)], atomic=False)
    if threads < 2:
        return root, None
    start, _ = prog.proc("gomp_thread_start", _GOMP)
    barrier = prog.chain([("gomp_team_barrier_wait_end", _GOMP, None), ("do_wait", _GOMP, None)],
                         [prog.stmt(0, "spin")])
    outlined = []
    for k in below[-1][:40]:  # kernels: each parallel loop becomes an outlined function
        fn, _ = prog.proc(f"{k.name}._omp_fn.0", prog.binary, None)
        fn.file, fn.line = k.file, k.line
        loops = [i for i in k.body if i.tag == "L"] or k.body[1:2]
        outlined.append(fn.seal([prog.stmt(fn.line, "compute"), *loops], atomic=False))
    start.seal([prog.call(0, barrier), *[prog.call(0, f) for f in outlined]], atomic=False)
    worker, _ = prog.proc("<thread root>", _MONITOR)
    prog.fake.add(worker.pid)
    return root, worker.seal([prog.call(0, start)], atomic=False)


def _pick_callees(rng: random.Random, below: list[list[Proc]]) -> list[Proc]:
    """Callees for a procedure: mostly from the next level down, some from the one below."""
    if not below:
        return []
    picks = []
    for _ in range(rng.choice((1, 2, 2, 3, 3, 4))):
        level = below[0] if len(below) == 1 or rng.random() < 0.75 else below[1]
        picks.append(rng.choice(level))
    return picks


