//! (under construction) random well-formed modules for round-trip tests.
