"""One way to run a command's per-part work on a Dask cluster (``--scheduler``): the address checked, one task
per item, the results in the items' order, and every failure one line."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ._common import CommandError


def map_on_cluster(scheduler: str, function: Callable[..., Any], items: Sequence[Sequence[Any]], *,
                   needs: str = "the parts' paths readable", **shared: Any) -> list[Any]:
    """``function(*item, **shared)`` for every item on the Dask cluster at ``scheduler``, results in order.

    A worker's :class:`~designer.exceptions.DesignerError` (a bad row of a part) reaches the command line as it was
    raised (one line, exit 2); any other failure says what the workers need (designer installed and ``needs``)."""
    from ..exceptions import DesignerError
    from ..optimal.sweep import check_scheduler_address

    try:
        from distributed import Client
    except ImportError:
        raise CommandError("--scheduler needs Dask's distributed scheduler: pip install 'designer[dask]'") from None
    check_scheduler_address(scheduler)
    client = Client(scheduler, timeout="10s", set_as_default=False)
    try:
        futures = [client.submit(function, *item, pure=False, **shared) for item in items]
        try:
            return list(client.gather(futures))
        except DesignerError:
            raise
        except Exception as exc:
            raise CommandError(f"a Dask worker failed ({type(exc).__name__}: {' '.join(str(exc).split())}); the "
                               f"workers need designer installed and {needs}") from None
    finally:
        client.close()
