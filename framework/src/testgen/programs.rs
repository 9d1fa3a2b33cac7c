//! (under construction) random executable structured programs for differential tests.
