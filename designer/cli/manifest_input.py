"""``--manifest FILE`` of estimate and regress: the mechanism a released column was drawn from
(:func:`designer.estimation.manifest_channel.manifest_mechanism`), refused beside ``--mechanism``."""

from __future__ import annotations

from typing import Any

from ._common import CommandError


def manifest_mechanism(manifest: str, column: str, mechanisms: list[str] | None, data: Any = None) -> str:
    """The mechanism file ``column`` of the release recorded in ``manifest`` was drawn from.

    Parameters
    ----------
    manifest : str
        A release manifest (``OUT.manifest.json``).
    column : str
        The analysed column of the randomized file (``response``, or the variable's name with ``--variable``).
    mechanisms : list of str or None
        ``--mechanism`` as given: refused beside ``--manifest`` (the manifest says which channel was drawn).
    data : str, optional
        The data file analysed: refused unless it is the release the manifest records (its SHA-256).

    Returns
    -------
    str
        A mechanism file's path (a relative path the manifest records resolved against the manifest's folder).
    """
    from ..estimation.manifest_channel import manifest_mechanism as drawn_from

    if mechanisms:
        raise CommandError("give --mechanism or --manifest, not both: the manifest names the channel the release "
                           "was drawn from")
    return drawn_from(manifest, column, data)
