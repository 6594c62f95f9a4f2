//! Facts about a run that go into its report: the date, the driver version.

use std::process::Command;

/// The UTC calendar date `unix_seconds` after 1970-01-01, as `YYYY-MM-DD`.
pub fn date_utc(unix_seconds: u64) -> String {
    // Days to a proleptic Gregorian date, counting in 400-year eras that start on
    // 0000-03-01, so that the leap day is the last day of each era-year.
    let days = (unix_seconds / 86_400) as i64 + 719_468; // days from 0000-03-01
    let era = days.div_euclid(146_097);
    let day_of_era = days.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// Today's UTC date.
pub fn today_utc() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    date_utc(now)
}

/// The NVIDIA driver version as `nvidia-smi` reports it (e.g. "580.159.04"), if
/// `nvidia-smi` is there.
pub fn nvidia_driver_version() -> Option<String> {
    let out = Command::new("nvidia-smi")
        .args(["--query-gpu=driver_version", "--format=csv,noheader"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().next().map(|l| l.trim().to_string()).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(date_utc(0), "1970-01-01");
        assert_eq!(date_utc(86_399), "1970-01-01");
        assert_eq!(date_utc(951_782_400), "2000-02-29");
        assert_eq!(date_utc(1_000_000_000), "2001-09-09");
        assert_eq!(date_utc(1_709_164_800), "2024-02-29");
        assert_eq!(date_utc(1_798_675_200), "2026-12-31");
        assert_eq!(date_utc(1_798_761_600), "2027-01-01");
    }
}
