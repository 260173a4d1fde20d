"""Package data: the Jinja2 templates and the deploy policy of each platform (templates/<platform>/)."""
