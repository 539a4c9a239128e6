use timeouts::duration::parse_duration;
use timeouts::{parse_timeouts, Timeouts};

#[test]
fn single_units() {
    assert_eq!(parse_duration("90s"), Ok(90));
    assert_eq!(parse_duration("5m"), Ok(300));
    assert_eq!(parse_duration("120"), Ok(120));
}

#[test]
fn defaults_when_missing() {
    assert_eq!(parse_timeouts("# nothing\n"), Ok(Timeouts { connect_secs: 10, job_secs: 3600 }));
}

#[test]
fn compound_job_timeout() {
    let t = parse_timeouts("connect = 15s\njob = 1h30m\n").unwrap();
    assert_eq!(t.job_secs, 90 * 60);
}

#[test]
fn day_and_hours() {
    assert_eq!(parse_duration("1d2h"), Ok(93_600));
}

#[test]
fn bad_unit_names_key() {
    assert_eq!(parse_timeouts("job = 3w").unwrap_err(), "job: unknown unit `w` in `3w`");
}
