//! Gregorian calendar arithmetic on plain (year, month, day) dates.

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    pub year: i32,
    pub month: u32,
    pub day: u32,
}

impl Date {
    pub fn new(year: i32, month: u32, day: u32) -> Option<Date> {
        if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
            return None;
        }
        Some(Date { year, month, day })
    }

    /// The date `n` days later.
    pub fn add_days(self, mut n: u32) -> Date {
        let mut d = self;
        while n > 0 {
            let left_in_month = days_in_month(d.year, d.month) - d.day;
            if n <= left_in_month {
                d.day += n;
                break;
            }
            n -= left_in_month + 1;
            d.day = 1;
            if d.month == 12 {
                d.month = 1;
                d.year += 1;
            } else {
                d.month += 1;
            }
        }
        d
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

pub fn is_leap_year(year: i32) -> bool {
    year % 4 == 0 && year % 100 != 0
}

pub fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => panic!("month {month} out of range"),
    }
}
