// Removed once the analyzer has real sources.
