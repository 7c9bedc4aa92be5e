"""What a benchmark does: workload definitions, generators, templates, confinement and collection ownership."""
