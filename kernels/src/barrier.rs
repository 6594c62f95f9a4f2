//! (being written.)
