"""Support shared by tests across the tree: users and API clients, servers on a background loop."""
