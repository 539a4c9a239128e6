//! Weekly timesheets: clock-in/out pairs per day, summed and priced.

pub mod pay;

#[derive(Debug, Clone, PartialEq)]
pub struct Punch {
    pub day: String,
    /// Minutes since midnight.
    pub clock_in: u32,
    pub clock_out: u32,
}

#[derive(Debug, Clone)]
pub struct Contract {
    pub hourly_cents: u32,
    /// 150 = time and a half.
    pub overtime_percent: u32,
}

/// `HH:MM` to minutes since midnight.
pub fn parse_clock(text: &str) -> Result<u32, String> {
    let (h, m) = text.trim().split_once(':').ok_or(format!("`{text}` is not HH:MM"))?;
    let h: u32 = h.parse().map_err(|_| format!("bad hour in `{text}`"))?;
    let m: u32 = m.parse().map_err(|_| format!("bad minute in `{text}`"))?;
    if h > 23 || m > 59 {
        return Err(format!("`{text}` is not a time of day"));
    }
    Ok(h * 60 + m)
}

pub fn punch(day: &str, clock_in: &str, clock_out: &str) -> Result<Punch, String> {
    let (clock_in, clock_out) = (parse_clock(clock_in)?, parse_clock(clock_out)?);
    if clock_out <= clock_in {
        return Err(format!("{day}: clocked out before clocking in"));
    }
    Ok(Punch { day: day.to_string(), clock_in, clock_out })
}

pub fn minutes_worked(punches: &[Punch]) -> u32 {
    punches.iter().map(|p| p.clock_out - p.clock_in).sum()
}

/// The week's gross pay in cents under `contract`.
pub fn weekly_pay(punches: &[Punch], contract: &Contract) -> u64 {
    pay::gross_cents(minutes_worked(punches), contract.hourly_cents)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn week(days: &[(&str, &str, &str)]) -> Vec<Punch> {
        days.iter().map(|(d, i, o)| punch(d, i, o).unwrap()).collect()
    }

    const CONTRACT: Contract = Contract { hourly_cents: 2400, overtime_percent: 150 };

    #[test]
    fn regular_week_is_paid_flat() {
        let p = week(&[("Mon", "09:00", "17:00"), ("Tue", "09:00", "13:30")]);
        assert_eq!(minutes_worked(&p), 750);
        assert_eq!(weekly_pay(&p, &CONTRACT), 30_000);
    }

    #[test]
    fn overtime_is_paid_at_the_contract_rate() {
        let p = week(&[
            ("Mon", "08:00", "18:00"),
            ("Tue", "08:00", "18:00"),
            ("Wed", "08:00", "18:00"),
            ("Thu", "08:00", "18:00"),
            ("Fri", "08:00", "12:00"),
        ]);
        // 40 h at 24.00 plus 4 h at 36.00
        assert_eq!(weekly_pay(&p, &CONTRACT), 96_000 + 14_400);
    }

    #[test]
    fn clock_times_are_validated() {
        assert!(punch("Sat", "17:00", "09:00").is_err());
        assert!(parse_clock("24:10").is_err());
        assert_eq!(parse_clock("07:45"), Ok(465));
    }
}
