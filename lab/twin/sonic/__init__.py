"""Twin community SONiC switches: CONFIG_DB, GCU, show commands, served over SSH."""
