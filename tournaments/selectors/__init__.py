"""Reads: queries the API, admin and tasks share, shaped to keep query counts constant."""
