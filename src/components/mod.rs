//! The lab's components: each takes data and callbacks, never the simulation.
pub mod ail;
pub mod cil;
pub mod controls;
pub mod crash;
pub mod devices;
pub mod help;
pub mod logbar;
pub mod panels;
pub mod picker;
pub mod plots;
pub mod ring;
pub mod settings;
pub mod stats;
pub mod tasks;
pub mod timeline;
pub mod watches;
pub mod whatif;
