"""Call-graph profiles (callgrind, gprof, gprof2dot, cProfile/pstats): costs per function and
per call edge, expanded into a calling context tree (:mod:`._expand`)."""
