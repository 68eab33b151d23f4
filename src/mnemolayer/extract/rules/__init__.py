"""The offline rule extractor (English and Chinese), the default."""
