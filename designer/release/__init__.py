"""Releases: exact tables and their sampler, mechanism files, exports, noisy counts."""
