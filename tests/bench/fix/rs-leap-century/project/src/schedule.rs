//! Renewal dates. A subscription started on day 31 renews on the last day of
//! shorter months and returns to day 31 when it can.
use crate::calendar::{days_in_month, Date};

pub fn monthly_renewals(start: Date, count: usize) -> Vec<Date> {
    let mut out = Vec::with_capacity(count);
    let (mut year, mut month) = (start.year, start.month);
    for _ in 0..count {
        if month == 12 {
            month = 1;
            year += 1;
        } else {
            month += 1;
        }
        let day = start.day.min(days_in_month(year, month));
        out.push(Date { year, month, day });
    }
    out
}

/// Trial end: `days` after the start date.
pub fn trial_end(start: Date, days: u32) -> Date {
    start.add_days(days)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(y: i32, m: u32, day: u32) -> Date {
        Date::new(y, m, day).unwrap()
    }

    #[test]
    fn end_of_month_start() {
        let r = monthly_renewals(d(2023, 1, 31), 3);
        assert_eq!(r, vec![d(2023, 2, 28), d(2023, 3, 31), d(2023, 4, 30)]);
    }

    #[test]
    fn renewal_in_february_2000() {
        let r = monthly_renewals(d(2000, 1, 30), 2);
        assert_eq!(r[0].to_string(), "2000-02-29");
        assert_eq!(r[1].to_string(), "2000-03-30");
    }

    #[test]
    fn trial_across_february_2000() {
        assert_eq!(trial_end(d(2000, 2, 20), 14).to_string(), "2000-03-05");
    }

    #[test]
    fn trial_across_february_1900() {
        assert_eq!(trial_end(d(1900, 2, 20), 14).to_string(), "1900-03-06");
    }

    #[test]
    fn trial_over_new_year() {
        assert_eq!(trial_end(d(2023, 12, 25), 10).to_string(), "2024-01-04");
    }
}
