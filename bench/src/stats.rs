//! Order statistics of repeated measurements.

/// The median of `samples` (the mean of the two middle values for an even count), or
/// `None` when there are none or one is NaN.
pub fn median(samples: &[f64]) -> Option<f64> {
    if samples.is_empty() || samples.iter().any(|s| s.is_nan()) {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let k = sorted.len() / 2;
    Some(if sorted.len() % 2 == 1 { sorted[k] } else { 0.5 * (sorted[k - 1] + sorted[k]) })
}

/// The smallest and largest of `samples`, or `None` when there are none or one is NaN.
pub fn min_max(samples: &[f64]) -> Option<(f64, f64)> {
    if samples.is_empty() || samples.iter().any(|s| s.is_nan()) {
        return None;
    }
    let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
    let max = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((min, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[7.5]), Some(7.5));
        // An outlier moves the mean, not the median.
        assert_eq!(median(&[1.0, 1.0, 1.0, 1.0, 1000.0]), Some(1.0));
    }

    #[test]
    fn median_rejects_empty_and_nan() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN, 2.0]), None);
        assert_eq!(min_max(&[]), None);
    }

    #[test]
    fn min_max_of_samples() {
        assert_eq!(min_max(&[2.0, -1.0, 5.0]), Some((-1.0, 5.0)));
    }
}
