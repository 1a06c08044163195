"""Helpers for tests and benchmarks that run the real server (not imported by the application)."""
