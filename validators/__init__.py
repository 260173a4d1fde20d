"""Post-check validators: collect device state, normalize it, compare with DeviceIntent."""
