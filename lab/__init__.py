"""Embedded lab twin: a fabric of fake switches and GPU servers behind real management protocols."""
