"""Each reader's checks of the two-site series journey (mangalord/tests/test_series_journey.py), one module a reader."""
