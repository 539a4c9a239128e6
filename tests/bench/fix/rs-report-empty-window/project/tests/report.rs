use uptime_report::report::Check;
use uptime_report::Report;

fn check(ok: bool, millis: u32) -> Check {
    Check { ok, millis }
}

#[test]
fn healthy_service_line() {
    let mut r = Report::new();
    r.add_service("api", vec![check(true, 120), check(true, 80), check(false, 0)]);
    let line = &r.lines()[0];
    assert_eq!(line.availability, Some(66.7));
    assert_eq!(line.mean_ms, Some(100));
    assert_eq!(line.worst_ms, Some(120));
}

#[test]
fn service_with_only_failures_has_no_mean() {
    let mut r = Report::new();
    r.add_service("mail", vec![check(false, 0), check(false, 0)]);
    let line = &r.lines()[0];
    assert_eq!(line.availability, Some(0.0));
    assert_eq!(line.mean_ms, None);
}

#[test]
fn new_service_without_checks_renders() {
    let mut r = Report::new();
    r.add_service("api", vec![check(true, 50)]).add_service("search", vec![]);
    let text = r.render();
    assert!(text.lines().nth(1).unwrap().contains("n/a"), "{text}");
}
