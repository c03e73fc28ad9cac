"""Models named by a URL, `hf://…` or `owner/repo:QUANT`: their headers read over HTTP, cached on disk."""
