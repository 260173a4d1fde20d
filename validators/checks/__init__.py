"""Built-in checks: one module per check, each registering one Check subclass."""
