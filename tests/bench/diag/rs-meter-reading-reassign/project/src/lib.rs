//! Electricity meter readings: cumulative kWh counters read once a month.
//! A meter that was replaced starts again from zero.

#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    pub month: &'static str,
    pub kwh: u64,
    /// The meter was swapped this month; `kwh` is the new meter's counter.
    pub replaced: bool,
}

pub fn reading(month: &'static str, kwh: u64) -> Reading {
    Reading { month, kwh, replaced: false }
}

/// kWh used in each month after the first reading.
pub fn monthly_usage(readings: &[Reading]) -> Vec<(&'static str, u64)> {
    readings
        .windows(2)
        .map(|w| {
            let used = if w[1].replaced { w[1].kwh } else { w[1].kwh.saturating_sub(w[0].kwh) };
            (w[1].month, used)
        })
        .collect()
}

/// Total kWh over the period, and the bill in cents at `cents_per_kwh`
/// with the first `free_kwh` free.
pub fn bill_cents(readings: &[Reading], cents_per_kwh: u64, free_kwh: u64) -> (u64, u64) {
    let total = 0;
    for (_, used) in monthly_usage(readings) {
        total += used;
    }
    (total, total.saturating_sub(free_kwh) * cents_per_kwh)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_between_readings() {
        let r = vec![reading("Jan", 10_400), reading("Feb", 10_720), reading("Mar", 10_990)];
        assert_eq!(monthly_usage(&r), vec![("Feb", 320), ("Mar", 270)]);
    }

    #[test]
    fn replaced_meter_counts_from_zero() {
        let mut r = vec![reading("Jan", 98_000), reading("Feb", 98_300), reading("Mar", 150)];
        r[2].replaced = true;
        assert_eq!(monthly_usage(&r), vec![("Feb", 300), ("Mar", 150)]);
    }

    #[test]
    fn bill_after_free_allowance() {
        let r = vec![reading("Jan", 10_400), reading("Feb", 10_720), reading("Mar", 10_990)];
        assert_eq!(bill_cents(&r, 31, 100), (590, 490 * 31));
        assert_eq!(bill_cents(&r, 31, 1000), (590, 0));
    }
}
