use triplog::trip::{parse_leg, totals};
use triplog::units::Unit;

#[test]
fn metres_and_miles() {
    let t = totals("walk 850 m\ntrain 2 mi\nwalk 150 m\n").unwrap();
    assert_eq!(t[0], ("walk".to_string(), 1000.0));
    assert!((t[1].1 - 3218.688).abs() < 1e-6);
}

#[test]
fn kilometres_are_accepted() {
    assert_eq!("km".parse::<Unit>(), Ok(Unit::Kilometres));
    assert_eq!(Unit::Kilometres.symbol(), "km");
    let t = totals("bike 12.5 km\nbike 500 m\n").unwrap();
    assert_eq!(t, vec![("bike".to_string(), 13_000.0)]);
}

#[test]
fn unknown_unit() {
    assert_eq!(parse_leg("swim 3 ft").unwrap_err(), "unknown unit `ft`");
}
