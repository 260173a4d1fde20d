"""The fabric model split along its jobs: links, addressing, BGP, forwarding, PFC/ECN/queues (composed in lab.twin.fabric)."""
