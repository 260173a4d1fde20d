"""Embedded lab twin: devices served over their real management protocols, state computed from configs."""
