"""Heap profiles: allocations per call path (massif, DHAT, memray, V8 heap profiles)."""
