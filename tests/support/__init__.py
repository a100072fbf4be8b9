"""Helpers shared by tests: users and clients, bot servers, workers, worlds of rows, browsers and
proxies. Test modules import helpers from here only, never from one another."""
