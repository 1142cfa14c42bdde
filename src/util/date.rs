//! Calendar dates in UTC (proleptic Gregorian), without a date crate: the start date of a
//! run's NetCDF time axis (`output.start_date`) and the time stamp of its `history`.

use anyhow::{bail, Result};

/// Days from 1970-01-01 to the civil date `y-m-d` (H. Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// The civil date of `z` days from 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `secs` seconds since 1970-01-01 00:00:00 UTC as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn iso_utc(secs: i64) -> String {
    let (days, s) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", s / 3600, s / 60 % 60, s % 60)
}

/// Now, as [`iso_utc`].
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    iso_utc(secs)
}

/// A start date `YYYY-MM-DD`, optionally followed by a time `HH:MM` or `HH:MM:SS` (after a
/// `T` or a space) and a `Z`, as CF's `YYYY-MM-DD HH:MM:SS` (UTC): refused, with what it
/// expects, when it is not one or names a day that does not exist.
pub fn parse_start_date(text: &str) -> Result<String> {
    let bad = || {
        anyhow::anyhow!(
            "expected a date and time in UTC as YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS (e.g. 2024-06-01T12:00:00), found \
             {text:?}"
        )
    };
    let t = text.trim().strip_suffix('Z').unwrap_or(text.trim());
    let (date, time) = match t.find(['T', ' ']) {
        Some(i) => (&t[..i], &t[i + 1..]),
        None => (t, "00:00:00"),
    };
    let num = |s: &str, digits: usize| -> Result<i64> {
        if s.len() != digits || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        s.parse().map_err(|_| bad())
    };
    let d: Vec<&str> = date.split('-').collect();
    let [y, mo, dd] = d[..] else { return Err(bad()) };
    let (y, mo, dd) = (num(y, 4)?, num(mo, 2)?, num(dd, 2)?);
    let hms: Vec<&str> = time.split(':').collect();
    let (h, mi, s) = match hms[..] {
        [h, m] => (num(h, 2)?, num(m, 2)?, 0),
        [h, m, s] => (num(h, 2)?, num(m, 2)?, num(s, 2)?),
        _ => return Err(bad()),
    };
    if !(1..=12).contains(&mo) || !(1..=31).contains(&dd) || h > 23 || mi > 59 || s > 59 {
        return Err(bad());
    }
    // A day past the month's end (2023-02-29, 2024-04-31) comes back as another date.
    if civil_from_days(days_from_civil(y, mo, dd)) != (y, mo, dd) {
        bail!("{text:?}: {y:04}-{mo:02} has no day {dd}");
    }
    Ok(format!("{y:04}-{mo:02}-{dd:02} {h:02}:{mi:02}:{s:02}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_and_bad_ones_are_refused() {
        assert_eq!(iso_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_utc(951_782_400 + 3661), "2000-02-29T01:01:01Z");
        assert_eq!(iso_utc(-1), "1969-12-31T23:59:59Z");
        assert_eq!(parse_start_date("2024-06-01").unwrap(), "2024-06-01 00:00:00");
        assert_eq!(parse_start_date("2024-06-01T12:30").unwrap(), "2024-06-01 12:30:00");
        assert_eq!(parse_start_date("2024-02-29 23:59:59Z").unwrap(), "2024-02-29 23:59:59");
        for bad in
            ["", "2024", "2024-6-1", "2024-06-01T25:00:00", "2024-13-01", "June 1", "2024-06-01T12", "+2024-06-01"]
        {
            let e = parse_start_date(bad).unwrap_err().to_string();
            assert!(e.contains("YYYY-MM-DD"), "{bad:?}: {e}");
        }
        let e = parse_start_date("2023-02-29").unwrap_err().to_string();
        assert!(e.contains("has no day 29"), "{e}");
    }
}
