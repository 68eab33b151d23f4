"""The memory layers as services: episodic, semantic, procedural and working memory."""
