"""The design problems that come with designer, one TOML file each (``designer problems`` lists them).

Installed as ``designer.problems`` (pyproject.toml's ``package-dir``): ``designer design gwrr-dont-know`` reads
``gwrr-dont-know.toml`` from here when no file of that name is in the current folder. A problem's description is
the first sentence of its leading comment.
"""
