"""gNMI (Capabilities, Get, Subscribe) over TLS for the lab's switches, from the same fabric state as their CLIs."""
