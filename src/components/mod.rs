//! The lab's components: each takes data and callbacks, never the simulation.
pub mod controls;
pub mod ring;
pub mod stats;
