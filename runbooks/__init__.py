"""Runbooks: Nornir tasks and their compositions (render, deploy, check, compliance)."""
