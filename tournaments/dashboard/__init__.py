"""The dashboard: leaderboards, bots, tournaments, matches with a replay viewer, and variants."""
