//! The facade.
