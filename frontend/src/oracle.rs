//! naga compiles a shader to SPIR-V its own way (to be written).
