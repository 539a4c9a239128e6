//! Billing cycles: the dates on which a subscription renews.
pub mod calendar;
pub mod schedule;
