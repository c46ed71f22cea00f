"""The front doors: one plain function per verb of the command line (``design``, ``estimate``, ``regress``,
``plan``, ``randomize``, ``export``).

Each takes what a user has at hand (a file's path, a pandas DataFrame or an object of the library), calls the
layers below and returns a :class:`~designer.results.Result`. The command line only parses its flags, calls one
of them and renders the result. They are reached as ``designer.estimate`` and so on (see docs/architecture.md).
"""
