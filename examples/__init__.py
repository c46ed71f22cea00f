"""The example data, mechanisms and scripts that come with designer.

Installed as ``designer.examples`` (pyproject.toml's ``package-dir``): a bare name is read from here when no file
of that name is in the current folder (``designer audit three-by-four`` reads ``mechanisms/three-by-four.csv``,
``designer estimate sex2-answers ...`` reads ``data/sex2-answers.csv``). The scripts are the site's gallery.
"""
