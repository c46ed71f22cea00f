"""Reading and writing tables: every source a command takes as Arrow record batches with one set of rules, errors
and limits (:mod:`~designer.tables.inputs`, :mod:`~designer.tables.csv_text`, :mod:`~designer.tables.stat_files`),
and every format written from columns (:mod:`~designer.tables.writers`).

This package sits below estimation, regression and release and imports none of them. Its modules are imported by
name (``from designer.tables.inputs import read_chunks``): importing the package loads neither pyarrow nor pandas.
"""
