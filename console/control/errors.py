"""What an operator action raises when it cannot run in the current state: nothing was changed.

The API maps each to a status code (`console.api.control.control_error`),
the admin and the Sources page to a message.
"""

from __future__ import annotations


class ControlError(Exception):
    """The action cannot run in the current state; nothing was changed."""


class NoEnabledSource(ControlError):
    pass


class AmbiguousSource(ControlError):
    pass


class InvalidSessionValue(ControlError, ValueError):
    pass
