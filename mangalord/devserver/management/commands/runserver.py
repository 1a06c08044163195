"""Daphne's `runserver` (its server, Twisted's reactor with it, imported only when this command runs)."""

from daphne.management.commands.runserver import Command

__all__ = ["Command"]
