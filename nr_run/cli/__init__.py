"""The nr-run command line: argument parsing and output only (DESIGN.md layers)."""
