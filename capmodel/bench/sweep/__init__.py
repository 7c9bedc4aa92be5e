"""A benchmark experiment: configuration, the adaptive search, each step's verdict, the output folder's files."""
