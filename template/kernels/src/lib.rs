//! The app's kernels: plain safe Rust, no feature gates, no `unsafe`. Compiled to PTX by
//! the app's `build.rs` (warpsafe's builder) and, as ordinary host code, run by the CPU
//! emulator.
#![no_std]

use warpsafe::atomic::Relaxed;
use warpsafe::global::{AtomicSlice, DisjointSlice, Slice};
use warpsafe::group::{Group, Warp};
use warpsafe::op::Sum;
use warpsafe::thread;

/// A point: the app's own element type (any `bytemuck::Pod` type works in buffers and
/// kernels; `warpsafe` re-exports `bytemuck`, so no direct dependency is needed).
#[derive(Clone, Copy, Debug, PartialEq, warpsafe::bytemuck::Pod, warpsafe::bytemuck::Zeroable)]
#[bytemuck(crate = "warpsafe::bytemuck")]
#[repr(C)]
pub struct Point {
    pub x: f32,
    pub y: f32,
}

warpsafe::shared! {
    /// Each thread's running sum, in its own slot of block-shared memory.
    static PARTIAL: [u64; 1024];
}

warpsafe::kernel! {
    /// `y[i] = a * x[i] + y[i]` for every element (a grid-stride loop: any grid works).
    pub fn saxpy(a: f32, x: Slice<f32>, y: DisjointSlice<f32>) {
        for i in thread::grid_stride(y.len()) {
            y.write(i, a * x[i] + y.read(i));
        }
    }

    /// Mirrors every point in the diagonal: `(x, y)` becomes `(y, x)`.
    pub fn mirror(points: DisjointSlice<Point>) {
        for i in thread::grid_stride(points.len()) {
            let p = points.read(i);
            points.write(i, Point { x: p.y, y: p.x });
        }
    }

    /// Adds every element of `input` to `out[0]`: each thread sums its grid-stride share
    /// in its shared-memory slot, each warp reduces its lanes' sums with a warp collective,
    /// and one lane per warp adds the warp's sum atomically.
    pub fn total(input: Slice<u32>, out: AtomicSlice<u64>) {
        PARTIAL.write_own(0);
        for i in thread::grid_stride(input.len()) {
            PARTIAL.write_own(PARTIAL.read_own() + input[i] as u64);
        }
        let warp = Warp::this();
        let sum = warp.reduce(PARTIAL.read_own(), Sum);
        if warp.thread_rank() == 0 {
            out.at(0).add(sum, Relaxed);
        }
    }
}
