"""Models: the tiny trained decoder, the pretrained SmolLM2 (offline) and the text corpus."""
