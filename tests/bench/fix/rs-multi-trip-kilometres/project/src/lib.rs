//! A log of trips made of legs, each with a distance in some unit.
pub mod trip;
pub mod units;
