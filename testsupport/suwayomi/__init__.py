"""A stand-in Suwayomi-Server for the tests: the recorded GraphQL schema over a small in-memory catalog."""
