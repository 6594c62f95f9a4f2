//! Whole-array reductions on the device (being built: see issue 5).
