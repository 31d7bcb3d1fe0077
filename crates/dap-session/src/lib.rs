//! Debug Adapter Protocol sessions (work in progress).
