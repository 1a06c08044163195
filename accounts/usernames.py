"""User names as they arrive at a door: a login form, HTTP Basic, the token endpoint, KOReader's `x-auth-user`.

A name no account can have is refused before it reaches the database or the
lockout's bookkeeping: PostgreSQL refuses a NUL in text and django-axes
stores the name it counts a failure toward in 255 characters, so a NUL or a
long name in a Basic header was a 500 instead of a 401. Such an attempt is
still a failure, counted toward the address alone (`accounts.lockout`).

Two rules, both pure functions of the name:

- `name_problem`: what no user name is: longer than the user model's field,
  or holding a control, format (bidi overrides, zero-width), surrogate,
  private-use or unassigned character (Unicode category C). Accounts made by
  hand (the admin, `createsuperuser`) already pass it, so checking it at a
  sign-in locks no one out.
- `new_name_problem`: what a name chosen from outside (kosync registration)
  must also be: Django's own user name rule (letters, digits and @ . + - _).
"""

from __future__ import annotations

import unicodedata

from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError


def max_length() -> int:
    model = get_user_model()
    return getattr(model._meta.get_field(model.USERNAME_FIELD), "max_length", None) or 150


def name_problem(name: str) -> str | None:
    """Why `name` can be no user's name (too long, a control, bidi or other invisible character), or None."""
    limit = max_length()
    if not name:
        return "A user name cannot be empty."
    if len(name) > limit:
        return f"A user name has at most {limit} characters."
    if any(unicodedata.category(char).startswith("C") for char in name):
        return "A user name cannot hold control, bidi or other invisible characters."
    return None


def is_possible(name: str | None) -> bool:
    return name is not None and name_problem(name) is None


def new_name_problem(name: str) -> str | None:
    """Why `name` may not be given to a new account, or None: `name_problem`, then Django's user name rule."""
    problem = name_problem(name)
    if problem:
        return problem
    try:
        UnicodeUsernameValidator()(name)
    except ValidationError:
        return "A user name holds only letters, digits and @ . + - _ characters."
    return None
