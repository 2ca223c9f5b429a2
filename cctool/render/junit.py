"""JUnit XML for the regression gate, in the shape CI servers validate.

One ``<testsuites>`` (without attributes: the Ant schema allows none) holding one
``<testsuite>``; one ``<testcase>`` per gate condition, a ``<failure>`` when it tripped. The
document satisfies both published JUnit schemas CI servers check against (the Apache Ant
schema GitLab and most tools read, and Jenkins' xUnit one):

- the suite has ``timestamp`` (local time, no zone, as the Ant schema's pattern asks),
  ``hostname``, ``time``, ``tests``, ``failures``, ``errors``, ``skipped``, ``id`` and
  ``package``, then ``<properties>``, its cases, ``<system-out>`` and ``<system-err>``;
- a case has ``name``, ``classname`` and ``time`` and at most one ``<failure>``, never
  ``<properties>`` (neither schema allows them there).

What each condition evaluated goes into the suite's properties (``evaluated: CONDITION``),
and the warnings of the run (profiles that share few call paths, rank counts that differ)
into ``<system-err>`` and the ``warning`` properties, so a reviewer reading the CI page sees
them without the job log.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from xml.etree import ElementTree as ET

from cctool.render.reportinfo import ReportInfo


@dataclass(frozen=True)
class Case:
    """One gate condition as a test case: ``detail`` is the failure's text (empty: passed)."""

    name: str
    passed: bool
    message: str = ""
    detail: str = ""
    evaluated: str = ""


def junit_xml(cases: Sequence[Case], suite: str, info: ReportInfo) -> bytes:
    """The JUnit document of ``cases`` (a suite named ``suite``) with ``info``'s run facts."""
    failures = sum(not c.passed for c in cases)
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": "0"}
    elapsed = f"{info.elapsed:.3f}"
    root = ET.Element("testsuites")  # the Ant schema allows no attributes here
    node = ET.SubElement(root, "testsuite", {
        "name": suite, "package": "cctool", "id": "0", "timestamp": info.timestamp,
        "hostname": info.hostname, "time": elapsed, "skipped": "0", **counts})
    props = ET.SubElement(node, "properties")
    for c in cases:
        if c.evaluated:
            ET.SubElement(props, "property", name=f"evaluated: {c.name}", value=c.evaluated)
    for note in info.notes:
        ET.SubElement(props, "property", name="warning", value=note)
    for c in cases:
        case = ET.SubElement(node, "testcase", classname="cctool.gate", name=c.name, time="0")
        if not c.passed:
            fail = ET.SubElement(case, "failure", type="regression", message=c.message)
            fail.text = c.detail
    ET.SubElement(node, "system-out").text = ""
    ET.SubElement(node, "system-err").text = "".join(f"warning: {n}\n" for n in info.notes)
    ET.indent(root)
    xml: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return xml + b"\n"
