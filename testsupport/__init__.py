"""Helpers for tests and benchmarks: real servers, fixture sites, stand-ins. Not imported by the application, not shipped in the image."""
