"""Package data of the toy platform (its deploy policy), read like nr-run's own."""
