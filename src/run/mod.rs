//! Running the command.

pub mod lifeline;
pub mod outcome;
pub mod retry;
pub mod signals;
pub mod supervise;
pub mod tee;
pub mod terminal;
