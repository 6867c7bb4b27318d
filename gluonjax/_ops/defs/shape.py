"""Placeholder; ops are added here."""
