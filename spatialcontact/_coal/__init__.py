"""Everything that knows about Coal itself: native state, caches and Coal 3.0.3's quirks."""
