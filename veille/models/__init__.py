"""The model seam: every LLM role goes through :mod:`veille.models.base`."""
