"""Writing experiment.xml: the header tables, the metric tables and the call path section."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np

from cctool.synth._program import Program
from cctool.synth._tree import Layout

METRIC_KINDS = ("CPUTIME (usec)", "PAPI_TOT_CYC", "PAPI_TOT_INS")

_DTD = """<!DOCTYPE HPCToolkitExperiment [
<!ELEMENT HPCToolkitExperiment (Header, (SecCallPathProfile|SecFlatProfile)*)>
<!ATTLIST HPCToolkitExperiment version CDATA #REQUIRED>
<!ELEMENT Info (NV*)>
<!ATTLIST Info n CDATA #IMPLIED>
<!ELEMENT NV EMPTY>
<!ATTLIST NV n CDATA #REQUIRED t CDATA #IMPLIED v CDATA #REQUIRED>
<!ELEMENT Header (Info*)>
<!ATTLIST Header n CDATA #REQUIRED>
<!ELEMENT SecHeader (MetricTable?, MetricDBTable?, TraceDBTable?, LoadModuleTable?,
  FileTable?, ProcedureTable?, Info*)>
<!ELEMENT MetricTable (Metric)*>
<!ELEMENT Metric (MetricFormula*, Info?)>
<!ATTLIST Metric
  i CDATA #REQUIRED
  n CDATA #REQUIRED
  es CDATA #IMPLIED
  em CDATA #IMPLIED
  ep CDATA #IMPLIED
  v (raw|final|derived-incr|derived) "raw"
  t (inclusive|exclusive|nil) "nil"
  partner CDATA #IMPLIED
  fmt CDATA #IMPLIED
  show (1|0) "1"
  show-percent (1|0) "1">
<!ELEMENT MetricFormula (Info?)>
<!ATTLIST MetricFormula t (combine|finalize) "finalize" i CDATA #IMPLIED frm CDATA #REQUIRED>
<!ELEMENT M EMPTY>
<!ATTLIST M n CDATA #REQUIRED v CDATA #REQUIRED>
<!ELEMENT MetricDBTable (MetricDB)*>
<!ELEMENT MetricDB EMPTY>
<!ATTLIST MetricDB
  i CDATA #REQUIRED
  n CDATA #REQUIRED
  t (inclusive|exclusive|nil) "nil"
  partner CDATA #IMPLIED
  db-glob CDATA #IMPLIED
  db-id CDATA #IMPLIED
  db-num-metrics CDATA #IMPLIED
  db-header-sz CDATA #IMPLIED>
<!ELEMENT LoadModuleTable (LoadModule)*>
<!ELEMENT LoadModule (Info?)>
<!ATTLIST LoadModule i CDATA #REQUIRED n CDATA #REQUIRED>
<!ELEMENT FileTable (File)*>
<!ELEMENT File (Info?)>
<!ATTLIST File i CDATA #REQUIRED n CDATA #REQUIRED>
<!ELEMENT ProcedureTable (Procedure)*>
<!ELEMENT Procedure (Info?)>
<!ATTLIST Procedure i CDATA #REQUIRED n CDATA #REQUIRED f CDATA #IMPLIED>
<!ELEMENT SecCallPathProfile (SecHeader, SecCallPathProfileData)>
<!ATTLIST SecCallPathProfile i CDATA #REQUIRED n CDATA #REQUIRED>
<!ELEMENT SecCallPathProfileData (PF|M)*>
<!ELEMENT PF (PF|Pr|L|C|S|M)*>
<!ATTLIST PF
  i CDATA #IMPLIED
  s CDATA #IMPLIED
  n CDATA #REQUIRED
  lm CDATA #IMPLIED
  f CDATA #IMPLIED
  l CDATA #IMPLIED
  str CDATA #IMPLIED
  v CDATA #IMPLIED>
<!ELEMENT C (PF|M)*>
<!ATTLIST C i CDATA #IMPLIED s CDATA #IMPLIED l CDATA #IMPLIED str CDATA #IMPLIED v CDATA #IMPLIED>
<!ELEMENT L (A|Pr|L|S|C|M)*>
<!ATTLIST L
  i CDATA #IMPLIED
  s CDATA #IMPLIED
  l CDATA #IMPLIED
  f CDATA #IMPLIED
  str CDATA #IMPLIED
  v CDATA #IMPLIED>
<!ELEMENT S (S|M)*>
<!ATTLIST S
  i CDATA #IMPLIED
  it CDATA #IMPLIED
  s CDATA #IMPLIED
  l CDATA #IMPLIED
  str CDATA #IMPLIED
  v CDATA #IMPLIED>
]>
"""


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _header_xml(prog: Program, lay: Layout, kinds: int) -> list[str]:
    name = _esc(prog.name)
    out = ['<?xml version="1.0"?>\n', _DTD, '<HPCToolkitExperiment version="2.2">\n',
           f'<Header n="{name}">\n  <Info/>\n</Header>\n',
           f'<SecCallPathProfile i="0" n="{name}">\n<SecHeader>\n  <MetricTable>\n']
    for j in range(2 * kinds):
        kind, t, mid = METRIC_KINDS[j // 2], ("inclusive", "exclusive")[j % 2], j + 2
        out.append(
            f'    <Metric i="{mid}" n="{kind}:Sum ({t[0].upper()})" v="derived-incr" em="0" es="0" '
            f'ep="0" t="{t}" partner="{mid + 1 - 2 * (j % 2)}" show="1" show-percent="1">\n'
            f'      <MetricFormula t="combine" frm="sum(${mid}, ${mid})"/>\n'
            f'      <MetricFormula t="finalize" frm="${mid}"/>\n'
            f'      <Info><NV n="units" v="events"/></Info>\n    </Metric>\n')
    out.append("  </MetricTable>\n  <MetricDBTable>\n")
    for j in range(2 * kinds):
        kind, t = METRIC_KINDS[j // 2], ("inclusive", "exclusive")[j % 2]
        out.append(f'    <MetricDB i="{j}" n="{kind} ({t[0].upper()})" t="{t}" '
                   f'partner="{j + 1 - 2 * (j % 2)}" db-glob="*.metric-db" db-id="{j}" '
                   f'db-num-metrics="{2 * kinds}" db-header-sz="24"/>\n')
    procs = {n.proc.pid: n.proc for n in lay.order[1:] if n is not None and n.proc is not None}
    modules = {p.module for p in procs.values()}
    files = {p.file for p in procs.values()} | {
        n.file for n in lay.order[1:] if n is not None and n.tag == "L"}
    out.append("  </MetricDBTable>\n  <LoadModuleTable>\n")
    out += [f'    <LoadModule i="{i}" n="{_esc(p)}"/>\n'
            for p, i in prog.modules.items() if i in modules]
    out.append("  </LoadModuleTable>\n  <FileTable>\n")
    out += [f'    <File i="{i}" n="{_esc(p)}"/>\n' for p, i in prog.files.items() if i in files]
    out.append("  </FileTable>\n  <ProcedureTable>\n")
    fake = {pid: ' f="1"' for pid in prog.fake}  # hpcrun's made-up frames, as hpcprof marks them
    out += [f'    <Procedure i="{p.pid}" n="{_esc(p.name)}"{fake.get(p.pid, "")}/>\n'
            for p in sorted(procs.values(), key=lambda p: p.pid)]
    out.append("  </ProcedureTable>\n  <Info/>\n</SecHeader>\n<SecCallPathProfileData>\n")
    return out


def write_xml(path: Path, prog: Program, lay: Layout, sums: np.ndarray, kinds: int) -> None:
    """experiment.xml, with hpcprof's summary values (sums over all locations) as ``M``."""
    mids = [str(j + 2) for j in range(2 * kinds)]
    rows = sums.astype(np.float64).tolist()

    def mline(row: int) -> str:
        return "".join(f'<M n="{m}" v="{v:g}"/>' for m, v in zip(mids, rows[row], strict=True) if v)

    out = _header_xml(prog, lay, kinds)
    out.append(mline(0) + "\n" if mline(0) else "")
    end, stack = lay.end, list[int]()
    for row in range(1, end.size):
        while stack and end[stack[-1]] <= row:
            out.append(f"</{lay.order[stack.pop()].tag}>\n")  # type: ignore[union-attr]
        node = lay.order[row]
        assert node is not None
        attrs = f'i="{row + 1}" s="{node.sid}" l="{node.line}"'
        if node.tag == "PF":
            p = node.proc
            assert p is not None
            attrs += f' lm="{p.module}" f="{p.file}" n="{p.pid}"'
        elif node.tag == "L":
            attrs += f' f="{node.file}"'
        m = mline(row)
        leaf = end[row] == row + 1
        if leaf and not m:
            out.append(f"<{node.tag} {attrs}/>\n")
            continue
        out.append(f"<{node.tag} {attrs}>\n" + (m + "\n" if m else ""))
        if leaf:
            out.append(f"</{node.tag}>\n")
        else:
            stack.append(row)
    out += [f"</{lay.order[r].tag}>\n" for r in reversed(stack)]  # type: ignore[union-attr]
    out.append("</SecCallPathProfileData>\n</SecCallPathProfile>\n</HPCToolkitExperiment>\n")
    path.write_text("".join(out), encoding="utf-8")


