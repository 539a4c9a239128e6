use feedsync::{Client, Config, FetchError, Transport};

struct Flaky {
    failures_left: u32,
    calls: u32,
    pauses: Vec<u64>,
}

impl Flaky {
    fn new(failures: u32) -> Self {
        Flaky { failures_left: failures, calls: 0, pauses: Vec::new() }
    }
}

impl Transport for Flaky {
    fn get(&mut self, url: &str, _ua: &str, _timeout: u64) -> Result<String, FetchError> {
        self.calls += 1;
        if url.ends_with("/missing") {
            return Err(FetchError::Permanent("404".into()));
        }
        if self.failures_left > 0 {
            self.failures_left -= 1;
            return Err(FetchError::Transient("connection reset".into()));
        }
        Ok("<rss/>".into())
    }

    fn pause(&mut self, millis: u64) {
        self.pauses.push(millis);
    }
}

#[test]
fn defaults() {
    let cfg = Config::parse("").unwrap();
    assert_eq!(cfg.max_retries, 3);
    assert_eq!(cfg, Config::default());
}

#[test]
fn recovers_within_default_retries() {
    let mut c = Client::new(Config::default(), Flaky::new(3));
    assert_eq!(c.fetch("https://example.org/feed").unwrap(), "<rss/>");
    assert_eq!(c.transport().pauses, [200, 400, 600]);
}

#[test]
fn configured_retries_are_respected() {
    let cfg = Config::parse("max_retries = 1\nbackoff_ms = 50 # short").unwrap();
    let mut c = Client::new(cfg, Flaky::new(5));
    let err = c.fetch("https://example.org/feed").unwrap_err();
    assert_eq!(err, FetchError::GaveUp { attempts: 2, last: "connection reset".into() });
    assert_eq!(c.transport().calls, 2);
}

#[test]
fn zero_retries_means_one_attempt() {
    let cfg = Config::parse("max_retries = 0").unwrap();
    let mut c = Client::new(cfg, Flaky::new(1));
    assert!(matches!(c.fetch("https://example.org/feed"), Err(FetchError::GaveUp { attempts: 1, .. })));
}

#[test]
fn permanent_errors_are_not_retried() {
    let mut c = Client::new(Config::default(), Flaky::new(0));
    assert_eq!(c.fetch("https://example.org/missing"), Err(FetchError::Permanent("404".into())));
    assert_eq!(c.transport().calls, 1);
}

#[test]
fn bad_number_is_reported() {
    assert_eq!(Config::parse("max_retries = many").unwrap_err(), "line 1: `max_retries` needs a number");
}
