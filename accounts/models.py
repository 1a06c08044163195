"""Stored credentials of accounts: per-user API keys (`accounts.api_keys`)."""

from accounts.api_keys import ApiKey

__all__ = ["ApiKey"]
