"""Arista EOS for the lab twin: config engine, show commands, eAPI server."""
