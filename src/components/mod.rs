//! The lab's components: each takes data and callbacks, never the simulation.
pub mod controls;
pub mod logbar;
pub mod ring;
pub mod stats;
