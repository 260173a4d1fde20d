"""Twin Linux hosts (GPU servers) and the SSH shell server shared with the SONiC twin."""
