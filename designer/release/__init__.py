"""Releases: randomized answers and their manifests, mechanism files, exports (the exact tables, their sampler and
the noisy counts they use are in :mod:`designer.guarantees`)."""
