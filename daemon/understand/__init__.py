"""Understand: detect language and document type (classify) and pick a route (route)."""
