"""The A/B comparison's defaults, one source for every surface: `rubricflow compare` and `report
compare`, the Python API, the compare flow, exports and the viewer's A/B page. The same two sides
then give the same bootstrap interval, bit for bit, wherever they are compared. Kept apart from
`compare` (which imports the rubric compiler) so that the CLI can name them as it starts."""

TOP = 10  # the texts that moved most, listed
RESAMPLES = 2000  # paired bootstrap resamples behind every interval
SEED = 0  # the bootstrap's seed
