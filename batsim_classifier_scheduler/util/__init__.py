"""Small utilities: plain values, digests, output files, the cyclic garbage collector."""
