//! The kernels against CPU references, on the emulator under three seeds and on every GPU
//! present (`warpsafe_host::testing`: without a GPU the GPU half prints a `skipped` line;
//! with `WARPSAFE_REQUIRE_GPU=1` it fails instead).

use warpsafe_host::testing::for_each_device;

/// Sizes around warp and block boundaries.
const SIZES: [usize; 7] = [0, 1, 31, 33, 255, 257, 4097];

#[test]
fn saxpy_matches_the_cpu() {
    for_each_device("saxpy_matches_the_cpu", 0..3, |device| {
        for n in SIZES {
            let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 3.0).collect();
            let y: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
            let got = my_app::saxpy(device, 1.5, &x, &y)?;
            for (i, g) in got.iter().enumerate() {
                let want = 1.5 * x[i] + y[i];
                // The GPU may fuse the multiply and add (one rounding instead of two).
                assert!((g - want).abs() <= 1e-5 * want.abs().max(1.0), "n={n} i={i}: {g} != {want}");
            }
        }
        Ok::<(), warpsafe_host::Error>(())
    });
}

#[test]
fn total_matches_the_cpu() {
    for_each_device("total_matches_the_cpu", 0..3, |device| {
        for n in SIZES {
            let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 8).collect();
            let want: u64 = input.iter().map(|&v| v as u64).sum();
            assert_eq!(my_app::total(device, &input)?, want, "n={n}");
        }
        Ok::<(), warpsafe_host::Error>(())
    });
}

#[test]
fn mirror_swaps_the_coordinates_of_the_apps_own_type() {
    for_each_device("mirror_swaps_the_coordinates_of_the_apps_own_type", 0..3, |device| {
        for n in SIZES {
            let points: Vec<my_kernels::Point> =
                (0..n).map(|i| my_kernels::Point { x: i as f32, y: -(i as f32) - 0.5 }).collect();
            let got = my_app::mirror(device, &points)?;
            let want: Vec<my_kernels::Point> =
                points.iter().map(|p| my_kernels::Point { x: p.y, y: p.x }).collect();
            assert_eq!(got, want, "n={n}");
        }
        Ok::<(), warpsafe_host::Error>(())
    });
}

#[test]
fn lengths_that_differ_are_a_typed_error() {
    let device = warpsafe_host::Device::emulator();
    let err = my_app::saxpy(&device, 1.0, &[1.0; 3], &[1.0; 4]).unwrap_err();
    assert!(matches!(err, warpsafe_host::Error::LengthMismatch { .. }), "{err}");
}
