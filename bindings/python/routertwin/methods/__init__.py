"""Test methods run over any device that offers a tester (see rfc2544)."""
