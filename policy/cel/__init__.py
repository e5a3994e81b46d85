"""CEL engines behind one small interface, plus the gateway's helper functions."""
