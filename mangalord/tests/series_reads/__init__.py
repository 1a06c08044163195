"""Each reader's checks of the two-site series journey (mangalord.tests.test_series_journey): one module per reader."""
