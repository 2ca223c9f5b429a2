"""A compiler's call graph: the phase shares of cctool's tree and exports against
``callgrind_annotate --inclusive=yes``, and the size of the exports.

``python -m benchmarks.bench_callgraph_exports [--regenerate] [--profile FILE]`` profiles
the C++ compiler proper (``cc1plus`` of the installed g++) compiling a translation unit that
includes much of the standard library (``<regex>``, ``<map>``, ``<iostream>``...) under
``valgrind --tool=callgrind`` (about 10 minutes on a loaded 2-CPU machine; the file, about
4 MB, is kept under ``benchmarks/_data``), then runs ``cctool tree FILE --to folded`` and
``--to speedscope`` and prints, for the phases (the calls of the first function below the
root none of whose calls holds 99% of it) and for every function that has one context in the tree
and holds at least 1% of the run, its share of the run in the tree, in each export and in
``callgrind_annotate --inclusive=yes``, and each export's size against the input's.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

DATA = Path(__file__).resolve().parent / "_data"
SOURCE = """\
#include <regex>
#include <map>
#include <unordered_map>
#include <set>
#include <algorithm>
#include <iostream>
#include <vector>
#include <string>
#include <sstream>
#include <functional>
#include <memory>
#include <tuple>
#include <variant>
#include <optional>
#include <numeric>
template <int N> struct Fib { static constexpr long v = Fib<N-1>::v + Fib<N-2>::v; };
template <> struct Fib<0> { static constexpr long v = 0; };
template <> struct Fib<1> { static constexpr long v = 1; };
template <typename T> struct Box { T v; auto get() const { return v; } };
template <typename... Ts> auto sum_all(Ts... ts) { return (ts + ... + 0); }
int main(int argc, char** argv) {
  std::map<std::string, std::vector<int>> m;
  std::unordered_map<int, std::set<std::string>> u;
  std::regex re("([a-z]+)([0-9]*)");
  std::vector<std::variant<int, std::string, double>> vs;
  for (int i = 0; i < argc; ++i) {
    std::string s(argv[i]);
    std::smatch sm;
    if (std::regex_match(s, sm, re)) m[sm[1]].push_back(i);
    u[i].insert(s);
    vs.emplace_back(i);
  }
  std::vector<int> v(100);
  std::iota(v.begin(), v.end(), 0);
  std::sort(v.begin(), v.end(), std::greater<int>());
  auto it = std::find_if(v.begin(), v.end(), [](int x) { return x % 7 == 3; });
  std::ostringstream os;
  os << Fib<40>::v << sum_all(1, 2, 3, 4) << *it << Box<double>{1.5}.get();
  for (auto& [k, vv] : m) os << k << vv.size();
  std::cout << os.str() << std::endl;
  std::optional<std::tuple<int, std::string>> o;
  if (o) std::cout << std::get<0>(*o);
  return 0;
}
"""


def regenerate(out: Path) -> None:
    """Preprocess the source with g++ and profile cc1plus compiling it at -O2."""
    out.parent.mkdir(parents=True, exist_ok=True)
    src, pre = out.parent / "stl_heavy.cpp", out.parent / "stl_heavy.ii"
    src.write_text(SOURCE)
    subprocess.run(["g++", "-std=c++17", "-E", str(src), "-o", str(pre)], check=True)
    cc1 = subprocess.run(["g++", "-print-prog-name=cc1plus"], check=True, capture_output=True,
                         text=True).stdout.strip()
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", cc1,
                    "-fpreprocessed", "-quiet", "-O2", "-std=c++17", str(pre),
                    "-o", str(out.parent / "stl_heavy.s")], check=True)


def annotate(path: Path) -> dict[tuple[str, str], float]:
    """``callgrind_annotate --inclusive=yes``'s inclusive Ir per (function, object)."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100",
                           str(path)], check=True, capture_output=True, text=True).stdout
    out = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([\d,]+) \([\d.]+%\)\s+(.*?)(?: \[(.*)\])?$", line)
        if m and "PROGRAM TOTALS" not in line:
            out[(m.group(2).partition(":")[2], m.group(3) or "")] = float(
                m.group(1).replace(",", ""))
    return out


def export(path: Path, fmt: str, out: Path) -> tuple[float, str]:
    """(seconds, stderr) of ``cctool tree path --to fmt -o out``."""
    start = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "cctool", "tree", str(path), "--to", fmt,
                          "-o", str(out)], check=True, capture_output=True, text=True)
    return time.perf_counter() - start, res.stderr


def folded_share(path: Path, prefix: str) -> float:
    """The folded lines' total under the stack ``prefix``."""
    total = 0.0
    with path.open() as f:
        for line in f:
            stack, _, value = line.rstrip("\n").rpartition(" ")
            if stack == prefix or stack.startswith(prefix + ";"):
                total += float(value)
    return total


def speedscope_share(doc: dict[str, object], frames: list[int]) -> float:
    """The speedscope samples' total under the frame path ``frames``."""
    profile = doc["profiles"][0]  # type: ignore[index]
    k = len(frames)
    return sum(w for s, w in zip(profile["samples"], profile["weights"], strict=True)
               if s[:k] == frames)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", type=Path, default=DATA / "cc1plus-stl.callgrind")
    ap.add_argument("--regenerate", action="store_true")
    args = ap.parse_args()
    if args.regenerate or not args.profile.exists():
        regenerate(args.profile)
    import numpy as np

    from cctool.readers.callgraph import callgrind

    gf = callgrind.read(args.profile)
    inc = gf.node_values(["Ir (inc)"], "sum", None, None)["Ir (inc)"].to_numpy()
    par = gf.parent_array
    total = float(inc[par < 0].sum())
    names, mods = gf.nodes["name"].to_list(), gf.nodes["module"].to_list()
    ann = annotate(args.profile)
    print(f"{args.profile}: {args.profile.stat().st_size:,} bytes, {total:,.0f} Ir, "
          f"{gf.metadata['num_functions']:,} functions, {gf.num_nodes:,} tree nodes "
          f"({gf.metadata['truncated_nodes']:,} contexts left unexpanded)")
    outs = {}
    for fmt, suffix in (("folded", "folded"), ("speedscope", "speedscope.json")):
        out = args.profile.with_suffix("." + suffix)
        secs, err = export(args.profile, fmt, out)
        outs[fmt] = out
        size = out.stat().st_size
        print(f"cctool tree --to {fmt}: {secs:.1f} s, {size:,} bytes "
              f"({size / args.profile.stat().st_size:.1f}x the input)")
        for line in err.splitlines():
            print("   ", line[:200])
    doc = json.loads(outs["speedscope"].read_bytes())
    frame_index = {(f["name"], f.get("file"), f.get("line")): i
                   for i, f in enumerate(doc["shared"]["frames"])}
    files, lines = gf.nodes["file"].to_list(), gf.nodes["line"].to_list()

    def path_of(v: int) -> list[int]:
        chain = []
        while v >= 0:
            chain.append(v)
            v = int(par[v])
        return chain[::-1]

    v = int(np.argmax(np.where(par < 0, inc, -1)))
    while True:  # down the chain of calls that hold 99% of their caller
        kids = np.flatnonzero(par == v)
        if not kids.size or inc[kids].max() < 0.99 * inc[v]:
            break
        v = int(kids[np.argmax(inc[kids])])
    count = Counter(zip(names, mods, strict=True))
    rows = [(int(c), "phase") for c in np.flatnonzero(par == v) if inc[c] >= 0.005 * total]
    rows += [(i, "1 context") for i in np.flatnonzero(inc >= 0.01 * total)
             if count[(names[i], mods[i])] == 1 and (names[i], mods[i]) in ann]
    print(f"\nshares of the run (% of {total:,.0f} Ir); phases: the calls of {names[v]}")
    print(f"{'kind':9} {'tree':>8} {'folded':>8} {'speedsc.':>8} {'annotate':>8}  function")
    worst = 0.0
    for i, kind in sorted(set(rows), key=lambda r: -inc[r[0]]):
        chain = path_of(i)
        prefix = ";".join(names[u].replace(";", ":") for u in chain)
        fold = folded_share(outs["folded"], prefix)
        frames = [frame_index.get((names[u] or "[unknown]", files[u] or None,
                                   lines[u] or None), -1) for u in chain]
        ss = speedscope_share(doc, frames)
        key = (names[i], mods[i])
        want = ann.get(key, float("nan"))
        pct = [100 * x / total for x in (inc[i], fold, ss, want)]
        if key in ann and count[key] == 1:
            worst = max(worst, abs(pct[1] - pct[3]), abs(pct[2] - pct[3]))
        print(f"{kind:9} " + " ".join(f"{p:8.3f}" for p in pct) + f"  {names[i][:70]}")
    print(f"\nlargest difference of an export from callgrind_annotate: {worst:.4f} points")


if __name__ == "__main__":
    main()
