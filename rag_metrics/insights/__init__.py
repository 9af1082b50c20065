"""What a golden set and a result say: health, corpus map, RAGAS, provenance, readouts."""
