"""Platform plug-ins (DESIGN.md contract 2): the contract in `base`, lookup in `registry`."""
