# A CPU-bound program for stackprof: main calls middle and other, both end in leaf.
# The JSON is stackprof's result as speedscope's import documents it.
require "stackprof"
require "json"

def leaf(n) = (0...n).sum { |i| Math.sqrt(i) * (i % 7) }
def middle(n) = leaf(n) + leaf(n / 2)
def other(n) = (0...4).sum { leaf(n / 4) }
def main = (0...6).sum { middle(200_000) + other(200_000) }

profile = StackProf.run(mode: :cpu, interval: 1000, raw: true) { main }
File.write("work.stackprof.json", JSON.generate(profile))
StackProf::Report.new(profile).print_text(false, 8)
