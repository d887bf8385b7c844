"""Tests of audiokit.plot: pooling, the raster PNG, what the drawing layer imports."""
