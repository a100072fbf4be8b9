"""Writes: every change to the data goes through a function here."""
