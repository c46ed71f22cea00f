"""Guarantees a release carries: integer tables certified exactly and their one sampler, exact discrete Laplace
noise for published counts, and a mechanism held with its certificate."""
