"""nr-run: Nornir runbooks for lossless RoCEv2 AI back-end fabrics."""

__version__ = "0.1.0"
