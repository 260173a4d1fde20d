"""Compliance report writers: json, junit, md, html, prom (Prometheus textfile)."""
