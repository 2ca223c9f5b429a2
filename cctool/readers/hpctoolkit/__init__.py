"""HPCToolkit databases: the XML layout (``experiment.xml`` with ``*.metric-db`` files) and the
sparse v4 layout (``meta.db``, ``profile.db``), read whole (:mod:`.xml`, :mod:`.v4`) or in
ranges of ranks (:mod:`.in_parts`, with the scanners :mod:`.v4_ranges` and :mod:`.xml_ranges`);
both share one plan of the context tree (:mod:`.tree_plan`)."""
