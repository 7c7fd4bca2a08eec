"""Design of experiments: Plackett-Burman with foldover (Appendix A of the NIMO paper)."""

from nimo.doe.plackett_burman import effects, foldover, hadamard, pb_design, pbdf_design, rank

__all__ = ["effects", "foldover", "hadamard", "pb_design", "pbdf_design", "rank"]
