"""The opening words of each kind of request the project sends a model besides judging. The
offline judge (tasks/standins) tells requests apart by them, so they live below both."""

GENERATE_MARK = "You draft a scoring rubric"
REFLECT_MARK = "You propose changes to a scoring rubric"
REFINE_MARK = "You improve a rubric's structure"  # `rubric refine` asks for mutations aimed at one lattice property
PAPER_MARK = "You draft a replication rubric from a paper"  # `rubric generate --from-paper` asks for a tree
COEVOLVE_MARK = "You tune the search that evolves a scoring rubric"  # `improve evolve --co-evolve`: a meta-component
