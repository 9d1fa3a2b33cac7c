//! A generator of random, well-defined WGSL compute programs (to be written).
