"""Profiles of sampled or recorded call stacks (folded, pprof, perf script, speedscope, V8,
Firefox, JFR, ...): each stack is a path of the tree."""
