//! Simulation runtime.
