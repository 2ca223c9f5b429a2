"""Profile deep.py once with pyinstrument and write its JSON, HTML and text reports."""
import runpy
import sys

from pyinstrument import Profiler
from pyinstrument.renderers import HTMLRenderer, JSONRenderer

sys.setrecursionlimit(20000)
profiler = Profiler()
profiler.start()
runpy.run_path("deep.py", run_name="__main__")
profiler.stop()
with open("deep.pyinstrument.json", "w") as f:
    f.write(profiler.output(JSONRenderer()))
with open("deep.pyinstrument.html", "w") as f:
    f.write(profiler.output(HTMLRenderer()))
print(profiler.output_text(show_all=True)[:2000])
