"""The one exception of huc-ref.

Every rejected input raises :class:`HUCError` (a :class:`ValueError`) whose message
names the place and the rule, e.g. ``atoms[3].p: sums to 999/1000, not 1``.
"""


class HUCError(ValueError):
    """Bad input to huc-ref: the message names the place and the rule broken.

    >>> try:
    ...     raise HUCError("atoms[0].p: sums to 999/1000, not 1")
    ... except ValueError as err:
    ...     print(err)
    atoms[0].p: sums to 999/1000, not 1
    """
