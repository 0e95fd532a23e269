"""Code exercises of "Check the initialisation": one folder each, found by the registry."""
