"""The call path query language: AST, the two dialects' parsers, the predicate compiler,
the path matcher and squashing. The public entry points live in :mod:`cctool.ops.query`."""
