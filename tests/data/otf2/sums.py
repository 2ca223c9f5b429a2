"""Per location and region: Enter count and inclusive seconds (Leave - Enter), and each run's
total time inside outermost regions, from OTF2's own Python bindings."""
import json
import sys

import otf2

files, sums_of = [], {}
for name in sys.argv[1:]:
    with otf2.reader.open(f"{name}/traces.otf2") as trace:
        res = trace.definitions.clock_properties.timer_resolution
        stacks, sums, total = {}, {}, 0.0
        for loc, ev in trace.events:
            key = f"{loc.group.name}/{loc.name}"
            if isinstance(ev, otf2.events.Enter):
                stacks.setdefault(key, []).append((ev.region.name, ev.time))
            elif isinstance(ev, otf2.events.Leave):
                region, t0 = stacks[key].pop()
                assert region == ev.region.name
                s = sums.setdefault(key, {}).setdefault(region, {"calls": 0, "inclusive_s": 0.0})
                s["calls"] += 1
                s["inclusive_s"] += (ev.time - t0) / res
                if not stacks[key]:
                    total += (ev.time - t0) / res
    files.append({"path": name, "from": None, "metric": "time (inc)", "total": total,
                  "unit": "s", "rel": 1e-9,
                  "source": "otf2 3.2 Python bindings: Leave - Enter of the outermost regions, "
                            "summed over locations (sums.py)"})
    sums_of[name] = {"timer_resolution": res, "locations": sums}
json.dump({"files": files, "otf2_sums": sums_of}, sys.stdout, indent=1, sort_keys=True)
