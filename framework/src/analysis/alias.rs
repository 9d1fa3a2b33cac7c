//! Alias analysis: may / must alias between memory addresses.
