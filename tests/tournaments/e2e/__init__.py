"""End-to-end tests: real workers, brokers, bots or a browser, from a request to the rows."""
