"""Caliper's outputs: ``.cali`` files, JSON, ``cali-query`` reports, the data frames of
Caliper's Python reader, SpotDB folders and batches of runs."""
