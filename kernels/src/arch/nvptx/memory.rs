//! Fences, scoped atomics, ordered loads and stores, and block barriers (being written).
