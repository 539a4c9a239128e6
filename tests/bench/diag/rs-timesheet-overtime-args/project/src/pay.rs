//! Pay rules: hours past the weekly threshold are paid at the overtime rate.

pub const WEEKLY_THRESHOLD_MINUTES: u32 = 40 * 60;

/// Gross pay in cents for `minutes` worked in a week at `hourly_cents`;
/// overtime minutes are paid at `overtime_percent` of the hourly rate.
pub fn gross_cents(minutes: u32, hourly_cents: u32, overtime_percent: u32) -> u64 {
    let regular = minutes.min(WEEKLY_THRESHOLD_MINUTES);
    let overtime = minutes - regular;
    let regular_pay = u64::from(regular) * u64::from(hourly_cents) / 60;
    let overtime_pay = u64::from(overtime) * u64::from(hourly_cents) * u64::from(overtime_percent) / 6000;
    regular_pay + overtime_pay
}
