"""What several benchmarks need: processes, network namespaces, bot servers and HTTP clients."""
