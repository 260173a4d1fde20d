"""NAPALM driver for community SONiC; napalm.get_network_driver("sonic") finds SonicDriver here."""
from napalm_sonic.sonic import SonicDriver  # noqa: F401  (the only import: NAPALM's discovery gotcha)
