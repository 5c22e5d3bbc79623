// Removed once the allocator has real sources.
