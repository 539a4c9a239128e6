//! A feed client over a pluggable transport, retrying transient failures.
use crate::config::Config;

#[derive(Debug, Clone, PartialEq)]
pub enum FetchError {
    /// Worth retrying: timeouts, resets, 5xx.
    Transient(String),
    /// Not worth retrying: 404, bad URL.
    Permanent(String),
    GaveUp { attempts: u32, last: String },
}

pub trait Transport {
    fn get(&mut self, url: &str, user_agent: &str, timeout_ms: u64) -> Result<String, FetchError>;
    /// Waits between attempts; a test transport records instead of sleeping.
    fn pause(&mut self, millis: u64);
}

const RETRIES: u32 = 3;

pub struct Client<T: Transport> {
    config: Config,
    transport: T,
}

impl<T: Transport> Client<T> {
    pub fn new(config: Config, transport: T) -> Self {
        Client { config, transport }
    }

    pub fn transport(&self) -> &T {
        &self.transport
    }

    /// Fetches `url`, retrying transient errors with linear backoff.
    pub fn fetch(&mut self, url: &str) -> Result<String, FetchError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.transport.get(url, &self.config.user_agent, self.config.timeout_ms) {
                Ok(body) => return Ok(body),
                Err(FetchError::Transient(msg)) => {
                    if attempt > RETRIES {
                        return Err(FetchError::GaveUp { attempts: attempt, last: msg });
                    }
                    self.transport.pause(self.config.backoff_ms * attempt as u64);
                }
                Err(other) => return Err(other),
            }
        }
    }
}
