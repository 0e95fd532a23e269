"""Cases: diagnose a hidden cause from evidence, with experiments that tell causes apart."""
